/* SPDX-License-Identifier: MIT */
/*
 * DeepSpeed JSON (https://www.deepspeed.ai/docs/config-json/): the keys that decide
 * dtypes. Other keys are DeepSpeed's business and are not checked here.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/import.h"
#include "import-util.h"

static bool is_auto(const struct dtl_node *v)
{
	return v && v->type == DTL_NODE_STRING && strcmp(v->string.text, "auto") == 0;
}

/* {"enabled": true|false|"auto"}: 1, 0 (also a section without "enabled": DeepSpeed's default
 * is false), or -1 for "auto" or no section */
static int enabled(const struct dtl_schema *s, const struct dtl_node *section, const char *what,
                   int *ret, const struct dtl_node **ret_node)
{
	const struct dtl_node *e;
	bool b;
	int r;

	*ret = -1;
	*ret_node = NULL;
	if (!section)
		return 0;
	if ((r = dtl_schema_map(s, section, what)) < 0)
		return r;
	e = dtl_node_get(section, "enabled");
	*ret_node = e ? e : section;
	if (!e) {
		*ret = 0;
		return 0;
	}
	if (is_auto(e))
		return 0;
	if ((r = dtl_schema_bool(s, e, what, &b)) < 0)
		return r;
	*ret = b;
	return 0;
}

static int ds_dtype(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                    enum dtl_dtype *ret)
{
	const char *text;
	int r = dtl_schema_string(s, v, what, &text);
	if (r < 0)
		return r;
	if (strcmp(text, "bf16") == 0 || strcmp(text, "bfloat16") == 0)
		*ret = DTL_DTYPE_BF16;
	else if (strcmp(text, "fp16") == 0 || strcmp(text, "float16") == 0)
		*ret = DTL_DTYPE_F16;
	else if (strcmp(text, "fp32") == 0 || strcmp(text, "float32") == 0)
		*ret = DTL_DTYPE_F32;
	else
		return dtl_schema_fail(s, v, "'%s' must be bf16, fp16 or fp32, got %s", what,
		                       dtl_schema_describe(s, v));
	return 0;
}

/* A true/false key of a section, when present, into a tristate and its location. */
static int bool_key(const struct dtl_schema *s, const struct dtl_node *section, const char *name,
                    enum dtl_tristate *ret_value, struct dtl_loc *ret_loc)
{
	const struct dtl_node *v = dtl_node_get(section, name);
	bool b;
	int r;

	if (!v)
		return 0;
	if ((r = dtl_schema_bool(s, v, name, &b)) < 0)
		return r;
	*ret_value = b ? DTL_TRUE : DTL_FALSE;
	*ret_loc = dtl_schema_loc(s, v);
	return 0;
}

/* offload_param / offload_optimizer: {"device": "none" | "cpu" | "nvme", ...} */
static int offload_key(const struct dtl_schema *s, const struct dtl_node *z, const char *key,
                       enum dtl_offload *ret_offload, struct dtl_loc *ret_loc)
{
	const struct dtl_node *v = dtl_node_get(z, key), *device;
	const char *text;
	int r;

	if (!v)
		return 0;
	if ((r = dtl_schema_map(s, v, key)) < 0)
		return r;
	if (!(device = dtl_node_get(v, "device")))
		return 0;
	if ((r = dtl_schema_string(s, device, key, &text)) < 0)
		return r;
	if (strcmp(text, "cpu") && strcmp(text, "nvme") && strcmp(text, "none"))
		return dtl_schema_fail(s, device, "'%s.device' must be none, cpu or nvme, got %s",
		                       key, dtl_schema_describe(s, device));
	*ret_offload = strcmp(text, "cpu") == 0    ? DTL_OFFLOAD_CPU
	               : strcmp(text, "nvme") == 0 ? DTL_OFFLOAD_NVME
	                                           : DTL_OFFLOAD_NONE;
	*ret_loc = dtl_schema_loc(s, device);
	return 0;
}

/* stage3_prefetch_bucket_size, stage3_max_live_parameters: elements ("auto" is the HF
 * Trainer's to fill in: left at DeepSpeed's default) */
static int elements_key(const struct dtl_schema *s, const struct dtl_node *z, const char *key,
                        int64_t *ret_value, struct dtl_loc *ret_loc)
{
	const struct dtl_node *v = dtl_node_get(z, key);
	int r;

	if (!v || is_auto(v))
		return 0;
	/* DeepSpeed's pp_int accepts 5e7: YAML and JSON read it as a float */
	if (v->type == DTL_NODE_FLOAT && v->number >= 0 && v->number <= 9.2e18 &&
	    v->number == (double)(int64_t)v->number) {
		*ret_value = (int64_t)v->number;
	} else if ((r = dtl_schema_int(s, v, key, 0, INT64_MAX, ret_value)) < 0) {
		return r;
	}
	*ret_loc = dtl_schema_loc(s, v);
	return 0;
}

/*
 * ZeRO++ beyond quantized weights (DT124's): int4/int8 quantized gradient all-to-all
 * (zero_quantized_gradients) and the secondary, node-local parameter partition
 * (zero_hpz_partition_size > 1), both from DeepSpeed's ZeRO++ tutorial
 * (docs/_tutorials/zeropp.md). Neither is simulated: reported as not modelled (DT604).
 */
static int zeropp_unmodelled(const struct dtl_schema *s, const struct dtl_node *z,
                             struct dtl_plan *plan)
{
	const struct dtl_node *v;
	int r;

	if ((v = dtl_node_get(z, "zero_quantized_gradients")) && v->type == DTL_NODE_BOOL &&
	    v->boolean &&
	    (r = dtl_plan_unmodelled(
	         plan, s->arena,
	         &(struct dtl_unmodelled){
	             .what = "ZeRO++ quantized gradients (zero_quantized_gradients)",
	             .touches = "every trainable parameter's gradient, quantized for the "
	                        "reduce-scatter; the simulation reduces them unquantized",
	             .loc = dtl_schema_loc(s, v)})) < 0)
		return r;
	if ((v = dtl_node_get(z, "zero_hpz_partition_size")) && v->type == DTL_NODE_INT &&
	    v->integer > 1 &&
	    (r = dtl_plan_unmodelled(
	         plan, s->arena,
	         &(struct dtl_unmodelled){
	             .what = "ZeRO++ hierarchical partitioning (zero_hpz_partition_size)",
	             .touches = "every sharded parameter, kept a second time in a node-local "
	                        "partition that the simulation does not hold",
	             .loc = dtl_schema_loc(s, v)})) < 0)
		return r;
	return 0;
}

static int read_zero(const struct dtl_schema *s, const struct dtl_node *z, struct dtl_plan *plan)
{
	const struct dtl_node *v;
	int64_t stage;
	int r;

	if ((r = dtl_schema_map(s, z, "zero_optimization")) < 0)
		return r;
	plan->zero3.loc = dtl_schema_loc(s, z);
	if ((v = dtl_node_get(z, "stage"))) {
		if ((r = dtl_schema_int(s, v, "zero_optimization.stage", 0, 3, &stage)) < 0)
			return r;
		/* stages 0-2 keep every parameter whole on every rank: data parallel for the
		 * sharding, though deepspeed.initialize still casts the module (the engine stage)
		 */
		plan->strategy = stage == 3 ? DTL_STRATEGY_ZERO3 : DTL_STRATEGY_DDP;
		plan->strategy_loc = dtl_schema_loc(s, v);
		plan->deepspeed_engine = stage != 3;
	}
	if ((v = dtl_node_get(z, "stage3_param_persistence_threshold"))) {
		plan->zero3.persistence_threshold_loc = dtl_schema_loc(s, v);
		if (is_auto(v)) {
			plan->zero3.persistence_auto = true;
		} else if ((r = dtl_schema_int(s, v, "stage3_param_persistence_threshold", 0,
		                               INT64_MAX, &plan->zero3.persistence_threshold)) <
		           0) {
			return r;
		}
	}
	if ((v = dtl_node_get(z, "stage3_model_persistence_threshold")) && !is_auto(v)) {
		plan->zero3.model_persistence_threshold_loc = dtl_schema_loc(s, v);
		if ((r = dtl_schema_int(s, v, "stage3_model_persistence_threshold", 0, INT64_MAX,
		                        &plan->zero3.model_persistence_threshold)) < 0)
			return r;
	}
	if ((r = bool_key(s, z, "stage3_allgather_sequential", &plan->zero3.allgather_sequential,
	                  &plan->zero3.allgather_sequential_loc)) < 0 ||
	    (r = bool_key(s, z, "zero_quantized_weights", &plan->zero3.quantized_weights,
	                  &plan->zero3.quantized_weights_loc)) < 0 ||
	    (r = bool_key(s, z, "zero_quantized_nontrainable_weights",
	                  &plan->zero3.quantized_nontrainable,
	                  &plan->zero3.quantized_nontrainable_loc)) < 0)
		return r;
	if ((r = zeropp_unmodelled(s, z, plan)) < 0)
		return r;
	if ((r = offload_key(s, z, "offload_param", &plan->zero3.offload_param,
	                     &plan->zero3.offload_param_loc)) < 0 ||
	    (r = offload_key(s, z, "offload_optimizer", &plan->zero3.offload_optimizer,
	                     &plan->zero3.offload_optimizer_loc)) < 0 ||
	    (r = elements_key(s, z, "stage3_prefetch_bucket_size",
	                      &plan->zero3.prefetch_bucket_size,
	                      &plan->zero3.prefetch_bucket_size_loc)) < 0 ||
	    (r = elements_key(s, z, "stage3_max_live_parameters", &plan->zero3.max_live_parameters,
	                      &plan->zero3.max_live_parameters_loc)) < 0)
		return r;
	return 0;
}

int dtl_import_deepspeed(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                         struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_loaded l;
	const struct dtl_node *root, *v, *bf16_node, *fp16_node;
	int bf16, fp16, r;

	if ((r = dtl_loaded_open(&l, path, arena, limits, error)) < 0)
		return r;
	root = l.root;
	const struct dtl_schema *s = &l.s;
	if ((r = dtl_schema_root_map(s, root, "a DeepSpeed config")) < 0)
		goto out;
	if (!plan->file) {
		plan->file = s->file;
		plan->loc = dtl_schema_loc(s, root);
	}
	/* DeepSpeed: "bfloat16" is an alias section of "bf16" */
	v = dtl_node_get(root, "bf16");
	if (!v)
		v = dtl_node_get(root, "bfloat16");
	if ((r = enabled(s, v, "bf16.enabled", &bf16, &bf16_node)) < 0 ||
	    (r = enabled(s, dtl_node_get(root, "fp16"), "fp16.enabled", &fp16, &fp16_node)) < 0)
		goto out;
	if (bf16 == 1 && fp16 == 1) {
		/* zero.Init (partition_parameters.py) raises */
		r = dtl_schema_fail(
		    s, fp16_node,
		    "DeepSpeed refuses this config: 'RuntimeError: bfloat16 and fp16 "
		    "cannot be enabled at once'");
		goto out;
	}
	if (bf16 == 1 || fp16 == 1) {
		plan->precision = bf16 == 1 ? DTL_PRECISION_BF16 : DTL_PRECISION_FP16;
		plan->precision_loc = dtl_schema_loc(s, bf16 == 1 ? bf16_node : fp16_node);
	} else if ((bf16 == 0 && fp16 == 0) || (bf16 == 0 && !fp16_node) ||
	           (fp16 == 0 && !bf16_node)) {
		/* both disabled (an absent section is disabled too, once the other is explicit):
		 * zero.Init builds in torch.float (rules/versions.yaml
		 * deepspeed-init-tensor-overrides) */
		plan->precision = DTL_PRECISION_FP32;
		plan->precision_loc = dtl_schema_loc(s, bf16_node ? bf16_node : fp16_node);
	} else if (is_auto(bf16_node) || is_auto(fp16_node)) {
		/* "auto": the HF Trainer's HfTrainerDeepSpeedConfig fills it from TrainingArguments
		 * bf16/fp16; until an input gives those, the precision is unresolved, not fp32 */
		plan->precision_auto_loc =
		    dtl_schema_loc(s, is_auto(bf16_node) ? bf16_node : fp16_node);
	}
	if ((v = dtl_node_get(root, "zero_optimization")) && (r = read_zero(s, v, plan)) < 0)
		goto out;
	if ((v = dtl_node_get(root, "torch_autocast"))) {
		/* DeepSpeed >= 0.17.2: {"enabled": false, "dtype": <None in the code>,
		 * "lower_precision_safe_modules": [Linear, Conv1d/2d/3d]} */
		const struct dtl_node *e, *d;
		if ((r = dtl_schema_map(s, v, "torch_autocast")) < 0)
			goto out;
		plan->zero3.autocast = DTL_FALSE;
		plan->zero3.autocast_loc = dtl_schema_loc(s, v);
		if ((e = dtl_node_get(v, "enabled")) &&
		    (r = dtl_schema_tristate(s, e, "torch_autocast.enabled",
		                             &plan->zero3.autocast)) < 0)
			goto out;
		if ((d = dtl_node_get(v, "dtype")) && d->type != DTL_NODE_NULL &&
		    (r = dtl_schema_dtype(s, d, "torch_autocast.dtype", true,
		                          &plan->zero3.autocast_dtype)) < 0)
			goto out;
	}
	if ((v = dtl_node_get(root, "data_types"))) {
		const struct dtl_node *d;
		if ((r = dtl_schema_map(s, v, "data_types")) < 0)
			goto out;
		if ((d = dtl_node_get(v, "param_dtype")) && d->type != DTL_NODE_NULL) {
			if ((r = ds_dtype(s, d, "data_types.param_dtype",
			                  &plan->zero3.param_dtype)) < 0)
				goto out;
			plan->zero3.param_dtype_loc = dtl_schema_loc(s, d);
		}
		if ((d = dtl_node_get(v, "buffer_dtype")) && d->type != DTL_NODE_NULL) {
			if ((r = ds_dtype(s, d, "data_types.buffer_dtype",
			                  &plan->zero3.buffer_dtype)) < 0)
				goto out;
			plan->zero3.buffer_dtype_loc = dtl_schema_loc(s, d);
		}
	}
	r = 0;
out:
	dtl_loaded_close(&l);
	return r;
}
