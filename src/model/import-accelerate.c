/* SPDX-License-Identifier: MIT */
/*
 * accelerate config YAML (accelerate's launch and FSDP plugin,
 * https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/src/accelerate/utils/dataclasses.py
 * and utils/launch.py there): how accelerate
 * turns distributed_type, mixed_precision, fsdp_config and deepspeed_config into an FSDP or
 * DeepSpeed set-up, and the conflicts it rejects itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/model/import.h"
#include "import-util.h"

static const struct dtl_node *get(const struct dtl_node *map, const char *key)
{
	return map && map->type == DTL_NODE_MAP ? dtl_node_get(map, key) : NULL;
}

static bool truthy(const struct dtl_node *v)
{
	/* accelerate writes booleans, and sometimes 'true'/'false' strings */
	if (!v)
		return false;
	if (v->type == DTL_NODE_BOOL)
		return v->boolean;
	return v->type == DTL_NODE_STRING && strcmp(v->string.text, "true") == 0;
}

static int read_fsdp(const struct dtl_schema *s, const struct dtl_node *f, struct dtl_plan *plan,
                     struct dtl_loc precision_loc)
{
	const struct dtl_node *v;
	int64_t version = 1;
	int r;

	if (f && (r = dtl_schema_map(s, f, "fsdp_config")) < 0)
		return r;
	if ((v = get(f, "fsdp_version"))) {
		if (v->type == DTL_NODE_STRING) /* "1" or "2" exactly: "2x" is refused */
			version = strcmp(v->string.text, "1") == 0   ? 1
			          : strcmp(v->string.text, "2") == 0 ? 2
			                                             : 0;
		else if ((r = dtl_schema_int(s, v, "fsdp_version", 1, 2, &version)) < 0)
			return r;
		if (version != 1 && version != 2)
			return dtl_schema_fail(s, v, "'fsdp_version' must be 1 or 2, got %s",
			                       dtl_schema_describe(s, v));
	}
	plan->strategy = version == 2 ? DTL_STRATEGY_FSDP2 : DTL_STRATEGY_FSDP1;
	plan->strategy_loc = v ? dtl_schema_loc(s, v) : plan->strategy_loc;
	plan->fsdp.loc = f ? dtl_schema_loc(s, f) : plan->loc;
	/* accelerate's policy: FSDP1 MixedPrecision(param, reduce, buffer = dtype),
	 * FSDP2 MixedPrecisionPolicy(param, reduce, output = dtype) */
	enum dtl_dtype d = dtl_precision_dtype(plan->precision);
	if (plan->precision != DTL_PRECISION_UNSET && plan->precision != DTL_PRECISION_FP32) {
		plan->fsdp.param_dtype = plan->fsdp.reduce_dtype = d;
		plan->fsdp.param_dtype_loc = plan->fsdp.reduce_dtype_loc = precision_loc;
		if (version == 1) {
			plan->fsdp.buffer_dtype = d;
			plan->fsdp.buffer_dtype_loc = precision_loc;
		}
	}
	if ((v = get(f, "fsdp_auto_wrap_policy"))) {
		const char *policy;
		if ((r = dtl_schema_string(s, v, "fsdp_auto_wrap_policy", &policy)) < 0)
			return r;
		if (strcmp(policy, "NO_WRAP") == 0) {
			plan->fsdp.wrap.present = true;
			plan->fsdp.wrap.count = 0;
			plan->fsdp.wrap.loc = dtl_schema_loc(s, v);
		} else if (strcmp(policy, "SIZE_BASED_WRAP") == 0) {
			return dtl_schema_fail(
			    s, v,
			    "SIZE_BASED_WRAP is not simulated by dtypelint (units "
			    "by parameter count); give the wrap classes in a plan "
			    "(fsdp.wrap) instead");
		} else if (strcmp(policy, "TRANSFORMER_BASED_WRAP") != 0) {
			return dtl_schema_fail(
			    s, v,
			    "'fsdp_auto_wrap_policy' must be TRANSFORMER_BASED_WRAP, "
			    "SIZE_BASED_WRAP or NO_WRAP, got %s",
			    dtl_schema_describe(s, v));
		} else {
			plan->fsdp.transformer_based_wrap = true;
		}
	}
	/* absent: the model's _no_split_modules */
	if ((v = get(f, "fsdp_transformer_layer_cls_to_wrap")) &&
	    (r = dtl_class_list(s, v, "fsdp_transformer_layer_cls_to_wrap", &plan->fsdp.wrap)) < 0)
		return r;
	plan->fsdp.wrap_by_class = v != NULL;
	if ((v = get(f, "fsdp_use_orig_params")) && version == 1) {
		plan->fsdp.use_orig_params = truthy(v) ? DTL_TRUE : DTL_FALSE;
		plan->fsdp.use_orig_params_loc = dtl_schema_loc(s, v);
	}
	/* FullyShardedDataParallelPlugin: fsdp_offload_params -> CPUOffload(offload_params=True),
	 * which --memory moves to the host column */
	if ((v = get(f, "fsdp_offload_params"))) {
		plan->fsdp.cpu_offload = truthy(v) ? DTL_TRUE : DTL_FALSE;
		plan->fsdp.cpu_offload_loc = dtl_schema_loc(s, v);
	}
	if (version == 2 && truthy(get(f, "fsdp_forward_prefetch")))
		return dtl_schema_fail(
		    s, get(f, "fsdp_forward_prefetch"),
		    "accelerate refuses this config: 'ValueError: forward_prefetch "
		    "is not yet implemented in FSDP2'");
	return 0;
}

static int read_deepspeed(const struct dtl_schema *s, const struct dtl_node *d,
                          const struct dtl_node *mixed, struct dtl_plan *plan, const char *path,
                          struct dtl_arena *arena, const struct dtl_limits *limits)
{
	static const char *const ignored_with_file[] = {
	    "gradient_accumulation_steps", "gradient_clipping",      "zero_stage",
	    "offload_optimizer_device",    "offload_param_device",   "offload_param_nvme_path",
	    "offload_optimizer_nvme_path", "zero3_save_16bit_model", NULL};
	const struct dtl_node *v, *file;
	int r;

	if (d && (r = dtl_schema_map(s, d, "deepspeed_config")) < 0)
		return r;
	if ((file = get(d, "deepspeed_config_file"))) {
		const char *rel;
		if ((r = dtl_schema_string(s, file, "deepspeed_config_file", &rel)) < 0)
			return r;
		/* accelerate: with a config file these YAML keys are an error */
		for (const char *const *k = ignored_with_file; *k; k++)
			if (get(d, *k))
				return dtl_schema_fail(
				    s, get(d, *k),
				    "accelerate refuses this config: 'When using "
				    "`deepspeed_config_file`, the following accelerate "
				    "config variables will be ignored: [%s]'",
				    *k);
		/* the precision so far: the YAML's mixed_precision, else an earlier source's
		 * (the manifest, --deepspeed), which the file overrides without a conflict */
		enum dtl_precision before = plan->precision;
		enum dtl_precision yaml_precision = mixed ? plan->precision : DTL_PRECISION_UNSET;
		struct dtl_loc before_loc = plan->precision_loc;
		plan->precision = DTL_PRECISION_UNSET;
		const char *ds_path = dtl_path_relative_to(arena, path, rel);
		if (!ds_path)
			return -ENOMEM;
		if ((r = dtl_confine_check(ds_path, path, dtl_schema_loc(s, file), s->error)) < 0)
			return r;
		r = dtl_import_deepspeed(ds_path, arena, limits, plan, s->error);
		if (r < 0)
			return r;
		/* accelerate's set_mixed_precision refuses a conflicting mode */
		if (yaml_precision != DTL_PRECISION_UNSET && yaml_precision != DTL_PRECISION_FP32 &&
		    plan->precision != DTL_PRECISION_UNSET && plan->precision != yaml_precision)
			return dtl_schema_fail(
			    s, mixed,
			    "accelerate refuses this config: 'ValueError: "
			    "`--mixed_precision` arg cannot be set to `%s` when `%s` is "
			    "set in the DeepSpeed config file.'",
			    dtl_precision_name(yaml_precision),
			    dtl_precision_name(plan->precision));
		if (plan->precision == DTL_PRECISION_UNSET) {
			plan->precision = before;
			plan->precision_loc = before_loc;
		}
	} else {
		int64_t stage = 2; /* ACCELERATE_DEEPSPEED_ZERO_STAGE default */
		if ((v = get(d, "zero_stage")) &&
		    (r = dtl_schema_int(s, v, "zero_stage", 0, 3, &stage)) < 0)
			return r;
		plan->strategy = stage == 3 ? DTL_STRATEGY_ZERO3 : DTL_STRATEGY_DDP;
		plan->strategy_loc = v ? dtl_schema_loc(s, v) : plan->loc;
		plan->deepspeed_engine = stage != 3;
		if ((v = get(d, "offload_param_device"))) {
			const char *text;
			if ((r = dtl_schema_string(s, v, "offload_param_device", &text)) < 0)
				return r;
			plan->zero3.offload_param = strcmp(text, "cpu") == 0    ? DTL_OFFLOAD_CPU
			                            : strcmp(text, "nvme") == 0 ? DTL_OFFLOAD_NVME
			                                                        : DTL_OFFLOAD_NONE;
			plan->zero3.offload_param_loc = dtl_schema_loc(s, v);
		}
		if ((v = get(d, "offload_optimizer_device"))) {
			const char *text;
			if ((r = dtl_schema_string(s, v, "offload_optimizer_device", &text)) < 0)
				return r;
			plan->zero3.offload_optimizer = strcmp(text, "cpu") == 0 ? DTL_OFFLOAD_CPU
			                                : strcmp(text, "nvme") == 0
			                                    ? DTL_OFFLOAD_NVME
			                                    : DTL_OFFLOAD_NONE;
			plan->zero3.offload_optimizer_loc = dtl_schema_loc(s, v);
		}
	}
	if ((v = get(d, "zero3_init_flag"))) {
		/* accelerate forces it off for stages other than 3 */
		plan->zero3.init =
		    truthy(v) && plan->strategy == DTL_STRATEGY_ZERO3 ? DTL_TRUE : DTL_FALSE;
		plan->zero3.init_loc = dtl_schema_loc(s, v);
	}
	return 0;
}

int dtl_import_accelerate(const char *path, struct dtl_arena *arena,
                          const struct dtl_limits *limits, struct dtl_plan *plan,
                          struct dtl_error *error)
{
	struct dtl_loaded l;
	const struct dtl_node *root, *v, *mixed;
	const char *text;
	int r;

	if ((r = dtl_loaded_open(&l, path, arena, limits, error)) < 0)
		return r;
	root = l.root;
	const struct dtl_schema *s = &l.s;
	if ((r = dtl_schema_root_map(s, root, "an accelerate config")) < 0)
		goto out;
	plan->file = s->file;
	plan->loc = dtl_schema_loc(s, root);
	if ((mixed = get(root, "mixed_precision"))) {
		if ((r = dtl_schema_string(s, mixed, "mixed_precision", &text)) < 0)
			goto out;
		/* accelerate: fp8 -> bf16; the FP8 matmuls themselves (TransformerEngine,
		 * torchao, MS-AMP) are not modelled (DT604) */
		if (strcmp(text, "fp8") == 0 &&
		    (r = dtl_plan_unmodelled(
		         plan, s->arena,
		         &(struct dtl_unmodelled){
		             .what = "FP8 training (mixed_precision fp8)",
		             .touches = "the Linear layers' weights and activations, cast to FP8 "
		                        "for their matmuls; the simulation computes them in bf16",
		             .loc = dtl_schema_loc(s, mixed)})) < 0)
			goto out;
		if (strcmp(text, "bf16") == 0 || strcmp(text, "fp8") == 0)
			plan->precision = DTL_PRECISION_BF16;
		else if (strcmp(text, "fp16") == 0)
			plan->precision = DTL_PRECISION_FP16;
		else if (strcmp(text, "no") == 0)
			plan->precision = DTL_PRECISION_FP32;
		else {
			r = dtl_schema_fail(
			    s, mixed, "'mixed_precision' must be no, fp16, bf16 or fp8, got %s",
			    dtl_schema_describe(s, mixed));
			goto out;
		}
		plan->precision_loc = dtl_schema_loc(s, mixed);
	}
	if ((v = get(root, "num_processes"))) {
		int64_t n = 1, machines = 1;
		const struct dtl_node *m = get(root, "num_machines");
		if ((r = dtl_schema_int(s, v, "num_processes", 1, 1 << 24, &n)) < 0 ||
		    (m && (r = dtl_schema_int(s, m, "num_machines", 1, 1 << 16, &machines)) < 0))
			goto out;
		plan->world_size = n * machines;
		plan->world_size_loc = dtl_schema_loc(s, v);
	}
	if (!(v = get(root, "distributed_type"))) {
		r = dtl_schema_fail(s, root, "an accelerate config needs 'distributed_type'");
		goto out;
	}
	if ((r = dtl_schema_string(s, v, "distributed_type", &text)) < 0)
		goto out;
	plan->strategy_loc = dtl_schema_loc(s, v);
	if (strcmp(text, "FSDP") == 0) {
		r = read_fsdp(s, get(root, "fsdp_config"), plan, plan->precision_loc);
	} else if (strcmp(text, "DEEPSPEED") == 0) {
		r = read_deepspeed(s, get(root, "deepspeed_config"), mixed, plan, path, arena,
		                   limits);
	} else if (strcmp(text, "NO") == 0) {
		plan->strategy = DTL_STRATEGY_SINGLE;
	} else if (strncmp(text, "MULTI_", 6) == 0) {
		plan->strategy = DTL_STRATEGY_DDP;
	} else {
		r = dtl_schema_fail(s, v,
		                    "'distributed_type' %s is not simulated (FSDP, DEEPSPEED, "
		                    "MULTI_GPU and the other MULTI_* types, NO)",
		                    dtl_schema_describe(s, v));
	}
out:
	dtl_loaded_close(&l);
	return r;
}
