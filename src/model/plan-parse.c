/* SPDX-License-Identifier: MIT */
/* Validation of a training plan (docs/design.md §3 `training:`). */
#include <errno.h>
#include <string.h>

#include "dtypelint/manifest.h"
#include "dtypelint/schema.h"

static const char *const trainers[] = {
    "none",       "hf-trainer", "trl-sft", "trl-dpo", "trl-grpo",       "trl-kto", "trl-rloo",
    "trl-reward", "trl-orpo",   "trl-cpo", "trl-bco", "trl-online-dpo", "verl",    NULL,
};

static int parse_versions(const struct dtl_schema *s, const struct dtl_node *map,
                          struct dtl_plan *plan)
{
	int r = dtl_schema_map(s, map, "versions");
	if (r < 0)
		return r;
	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		const struct dtl_node *value = &map->map.pairs[i].value;
		enum dtl_framework fw;
		if (key->type != DTL_NODE_STRING ||
		    dtl_framework_parse(key->string.text, &fw) < 0) {
			if (key->type == DTL_NODE_STRING && key->string.len >= 2 &&
			    memcmp(key->string.text, "x-", 2) == 0)
				continue;
			return dtl_schema_fail(
			    s, key,
			    "unknown framework %s in 'versions' (expected one of: "
			    "torch, transformers, peft, deepspeed, accelerate, trl, "
			    "bitsandbytes)",
			    dtl_schema_describe(s, key));
		}
		/* YAML reads 2.1 as a number: take its spelling */
		const char *text = value->type == DTL_NODE_STRING ? value->string.text : value->raw;
		size_t len = value->type == DTL_NODE_STRING ? value->string.len : value->raw_len;
		if ((value->type != DTL_NODE_STRING && value->type != DTL_NODE_FLOAT &&
		     value->type != DTL_NODE_INT) ||
		    !text || dtl_version_parse(text, len, &plan->versions[fw]) < 0)
			return dtl_schema_fail(
			    s, value, "'versions.%s' must be a version like \"2.7.1\", got %s",
			    dtl_framework_name(fw), dtl_schema_describe(s, value));
		plan->version_locs[fw] = dtl_schema_loc(s, value);
	}
	return 0;
}

static int parse_fsdp(const struct dtl_schema *s, const struct dtl_node *map,
                      struct dtl_plan_fsdp *fsdp)
{
	static const char *const keys[] = {"wrap",
	                                   "param_dtype",
	                                   "reduce_dtype",
	                                   "buffer_dtype",
	                                   "use_orig_params",
	                                   "ignored",
	                                   "cpu_offload",
	                                   NULL};
	int r = dtl_schema_map(s, map, "fsdp");
	if (r < 0 || (r = dtl_schema_check_keys(s, map, "fsdp", keys)) < 0)
		return r;
	fsdp->loc = dtl_schema_loc(s, map);
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		if (strcmp(k, "wrap") == 0) {
			/* class names or globs: a glob check would reject nothing a class name
			 * can hold, so validate as globs */
			r = dtl_schema_patterns(s, v, "fsdp.wrap", DTL_PATTERN_GLOB, &fsdp->wrap);
		} else if (strcmp(k, "ignored") == 0) {
			r = dtl_schema_patterns(s, v, "fsdp.ignored", DTL_PATTERN_GLOB,
			                        &fsdp->ignored);
		} else if (strcmp(k, "param_dtype") == 0) {
			r = dtl_schema_dtype(s, v, "fsdp.param_dtype", true, &fsdp->param_dtype);
			fsdp->param_dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "reduce_dtype") == 0) {
			r = dtl_schema_dtype(s, v, "fsdp.reduce_dtype", true, &fsdp->reduce_dtype);
			fsdp->reduce_dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "buffer_dtype") == 0) {
			r = dtl_schema_dtype(s, v, "fsdp.buffer_dtype", true, &fsdp->buffer_dtype);
			fsdp->buffer_dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "use_orig_params") == 0) {
			r = dtl_schema_tristate(s, v, "fsdp.use_orig_params",
			                        &fsdp->use_orig_params);
			fsdp->use_orig_params_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "cpu_offload") == 0) {
			r = dtl_schema_tristate(s, v, "fsdp.cpu_offload", &fsdp->cpu_offload);
			fsdp->cpu_offload_loc = dtl_schema_loc(s, v);
		}
	}
	return r;
}

static int parse_threshold(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                           bool allow_auto, int64_t *ret_value, bool *ret_auto)
{
	if (allow_auto && v->type == DTL_NODE_STRING && strcmp(v->string.text, "auto") == 0) {
		*ret_auto = true;
		*ret_value = -1;
		return 0;
	}
	if (v->type == DTL_NODE_NULL) {
		*ret_value = -1;
		return 0;
	}
	if (v->type == DTL_NODE_STRING)
		return dtl_schema_fail(s, v, "'%s' must be a non-negative integer%s, got %s", what,
		                       allow_auto ? " or \"auto\"" : "", dtl_schema_describe(s, v));
	return dtl_schema_int(s, v, what, 0, INT64_MAX, ret_value);
}

static int parse_offload(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                         enum dtl_offload *ret_offload)
{
	const char *text;
	int r = dtl_schema_string(s, v, what, &text);

	if (r < 0)
		return r;
	if (strcmp(text, "none") == 0)
		*ret_offload = DTL_OFFLOAD_NONE;
	else if (strcmp(text, "cpu") == 0)
		*ret_offload = DTL_OFFLOAD_CPU;
	else if (strcmp(text, "nvme") == 0)
		*ret_offload = DTL_OFFLOAD_NVME;
	else
		return dtl_schema_fail(s, v, "'%s' must be none, cpu or nvme, got %s", what,
		                       dtl_schema_describe(s, v));
	return 0;
}

/* zero.Init(tensor_overrides=[DeepSpeedTensorOverride.dtype, .device]) as names */
static int parse_tensor_overrides(const struct dtl_schema *s, const struct dtl_node *v,
                                  struct dtl_plan_zero3 *z)
{
	if (v->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, v, "zero3.tensor_overrides",
		                             "a list of dtype and device");
	z->init_dtype_override = DTL_FALSE;
	z->init_dtype_override_loc = dtl_schema_loc(s, v);
	for (size_t i = 0; i < v->seq.count; i++) {
		const struct dtl_node *item = &v->seq.items[i];
		const char *text;
		int r = dtl_schema_string(s, item, "zero3.tensor_overrides[]", &text);
		if (r < 0)
			return r;
		if (strcmp(text, "dtype") == 0)
			z->init_dtype_override = DTL_TRUE;
		else if (strcmp(text, "device") != 0)
			return dtl_schema_fail(s, item,
			                       "'zero3.tensor_overrides' items must be dtype or "
			                       "device (DeepSpeedTensorOverride), got %s",
			                       dtl_schema_describe(s, item));
	}
	return 0;
}

static int parse_zero3(const struct dtl_schema *s, const struct dtl_node *map,
                       struct dtl_plan_zero3 *z)
{
	static const char *const keys[] = {"init",
	                                   "persistence_threshold",
	                                   "model_persistence_threshold",
	                                   "allgather_sequential",
	                                   "offload_param",
	                                   "data_types",
	                                   "torch_autocast",
	                                   "quantized_weights",
	                                   "quantized_nontrainable_weights",
	                                   "offload_optimizer",
	                                   "prefetch_bucket_size",
	                                   "max_live_parameters",
	                                   "tensor_overrides",
	                                   NULL};
	static const char *const data_type_keys[] = {"buffer_dtype", "param_dtype", NULL};
	static const char *const autocast_keys[] = {"enabled", "dtype", NULL};
	bool unused_auto = false;
	int r = dtl_schema_map(s, map, "zero3");
	if (r < 0 || (r = dtl_schema_check_keys(s, map, "zero3", keys)) < 0)
		return r;
	z->loc = dtl_schema_loc(s, map);
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		if (strcmp(k, "init") == 0) {
			r = dtl_schema_tristate(s, v, "zero3.init", &z->init);
			z->init_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "persistence_threshold") == 0) {
			r = parse_threshold(s, v, "zero3.persistence_threshold", true,
			                    &z->persistence_threshold, &z->persistence_auto);
			z->persistence_threshold_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "model_persistence_threshold") == 0) {
			r = parse_threshold(s, v, "zero3.model_persistence_threshold", false,
			                    &z->model_persistence_threshold, &unused_auto);
			z->model_persistence_threshold_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "allgather_sequential") == 0) {
			r = dtl_schema_tristate(s, v, "zero3.allgather_sequential",
			                        &z->allgather_sequential);
			z->allgather_sequential_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "offload_param") == 0) {
			r = parse_offload(s, v, "zero3.offload_param", &z->offload_param);
			z->offload_param_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "offload_optimizer") == 0) {
			r = parse_offload(s, v, "zero3.offload_optimizer", &z->offload_optimizer);
			z->offload_optimizer_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "prefetch_bucket_size") == 0) {
			r = parse_threshold(s, v, "zero3.prefetch_bucket_size", false,
			                    &z->prefetch_bucket_size, &unused_auto);
			z->prefetch_bucket_size_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "max_live_parameters") == 0) {
			r = parse_threshold(s, v, "zero3.max_live_parameters", false,
			                    &z->max_live_parameters, &unused_auto);
			z->max_live_parameters_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "tensor_overrides") == 0) {
			r = parse_tensor_overrides(s, v, z);
		} else if (strcmp(k, "quantized_weights") == 0) {
			r = dtl_schema_tristate(s, v, "zero3.quantized_weights",
			                        &z->quantized_weights);
			z->quantized_weights_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "quantized_nontrainable_weights") == 0) {
			r = dtl_schema_tristate(s, v, "zero3.quantized_nontrainable_weights",
			                        &z->quantized_nontrainable);
			z->quantized_nontrainable_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "torch_autocast") == 0) {
			r = dtl_schema_map(s, v, "zero3.torch_autocast");
			if (r < 0 || (r = dtl_schema_check_keys(s, v, "zero3.torch_autocast",
			                                        autocast_keys)) < 0)
				break;
			const struct dtl_node *e = dtl_node_get(v, "enabled");
			const struct dtl_node *d = dtl_node_get(v, "dtype");
			z->autocast = DTL_FALSE;
			z->autocast_loc = dtl_schema_loc(s, v);
			if (e)
				r = dtl_schema_tristate(s, e, "zero3.torch_autocast.enabled",
				                        &z->autocast);
			if (d && r >= 0)
				r = dtl_schema_dtype(s, d, "zero3.torch_autocast.dtype", true,
				                     &z->autocast_dtype);
		} else if (strcmp(k, "data_types") == 0) {
			r = dtl_schema_map(s, v, "zero3.data_types");
			if (r < 0 || (r = dtl_schema_check_keys(s, v, "zero3.data_types",
			                                        data_type_keys)) < 0)
				break;
			const struct dtl_node *b = dtl_node_get(v, "buffer_dtype");
			const struct dtl_node *p = dtl_node_get(v, "param_dtype");
			if (b) {
				r = dtl_schema_dtype(s, b, "zero3.data_types.buffer_dtype", true,
				                     &z->buffer_dtype);
				z->buffer_dtype_loc = dtl_schema_loc(s, b);
			}
			if (p && r >= 0) {
				r = dtl_schema_dtype(s, p, "zero3.data_types.param_dtype", true,
				                     &z->param_dtype);
				z->param_dtype_loc = dtl_schema_loc(s, p);
			}
		}
	}
	return r;
}

int dtl_plan_parse_versions(const struct dtl_node *map, const char *file, struct dtl_arena *arena,
                            struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_limits limits;
	dtl_limits_default(&limits);
	struct dtl_schema s = {.file = file, .arena = arena, .limits = &limits, .error = error};
	return parse_versions(&s, map, plan);
}

/* "80GiB" or a number of bytes (YAML reads 8e10 as a float: take its spelling) */
static int parse_device_memory(const struct dtl_schema *s, const struct dtl_node *v,
                               int64_t *ret_bytes)
{
	const char *text = v->type == DTL_NODE_STRING ? v->string.text : v->raw;
	char buf[64];

	if ((v->type == DTL_NODE_STRING || v->type == DTL_NODE_INT) && text) {
		size_t len = v->type == DTL_NODE_STRING ? v->string.len : v->raw_len;
		if (len < sizeof(buf)) {
			memcpy(buf, text, len);
			buf[len] = 0;
			int r = dtl_bytes_parse(buf, ret_bytes);
			if (r == 0)
				return 0;
		}
	}
	return dtl_schema_fail(s, v,
	                       "'device_memory' must be a size such as \"80GiB\", \"40GB\" or "
	                       "a number of bytes (at least 1, at most 2^62), got %s",
	                       dtl_schema_describe(s, v));
}

int dtl_plan_parse(const struct dtl_node *map, const char *file, struct dtl_arena *arena,
                   struct dtl_plan *plan, struct dtl_error *error)
{
	static const char *const keys[] = {"strategy", "precision",  "world_size", "versions",
	                                   "trainer",  "fsdp",       "zero3",      "direct_access",
	                                   "merge",    "model_cast", "optimizer",  "device_memory",
	                                   NULL};
	struct dtl_limits limits;
	dtl_limits_default(&limits);
	struct dtl_schema s = {.file = file, .arena = arena, .limits = &limits, .error = error};
	int r = dtl_schema_map(&s, map, "training");

	if (r < 0 || (r = dtl_schema_check_keys(&s, map, "training", keys)) < 0)
		return r;
	plan->file = file;
	plan->loc = dtl_schema_loc(&s, map);
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		const char *text;
		if (strcmp(k, "strategy") == 0) {
			r = dtl_schema_string(&s, v, "strategy", &text);
			if (r >= 0 && dtl_strategy_parse(text, &plan->strategy) < 0)
				r = dtl_schema_fail(
				    &s, v,
				    "'strategy' must be one of zero3, fsdp1, fsdp2, ddp, "
				    "single, got %s",
				    dtl_schema_describe(&s, v));
			plan->strategy_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "precision") == 0) {
			r = dtl_schema_string(&s, v, "precision", &text);
			if (r >= 0 && dtl_precision_parse(text, &plan->precision) < 0)
				r = dtl_schema_fail(
				    &s, v, "'precision' must be one of bf16, fp16, fp32, got %s",
				    dtl_schema_describe(&s, v));
			plan->precision_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "world_size") == 0) {
			r = dtl_schema_int(&s, v, "world_size", 1, 1 << 24, &plan->world_size);
			plan->world_size_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "versions") == 0) {
			r = parse_versions(&s, v, plan);
		} else if (strcmp(k, "trainer") == 0) {
			r = dtl_schema_string(&s, v, "trainer", &text);
			bool known = false;
			for (const char *const *t = trainers; r >= 0 && *t && !known; t++)
				known = strcmp(*t, text) == 0;
			if (r >= 0 && !known)
				r = dtl_schema_fail(
				    &s, v,
				    "'trainer' must be one of none, hf-trainer, trl-sft, "
				    "trl-dpo, trl-grpo, trl-kto, trl-rloo, trl-reward, "
				    "trl-orpo, trl-cpo, trl-bco, trl-online-dpo, verl, got %s",
				    dtl_schema_describe(&s, v));
			plan->trainer = text;
			plan->trainer_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "fsdp") == 0) {
			r = parse_fsdp(&s, v, &plan->fsdp);
		} else if (strcmp(k, "zero3") == 0) {
			r = parse_zero3(&s, v, &plan->zero3);
		} else if (strcmp(k, "direct_access") == 0) {
			r = dtl_schema_patterns(&s, v, "direct_access", DTL_PATTERN_GLOB,
			                        &plan->direct_access);
		} else if (strcmp(k, "merge") == 0) {
			r = dtl_schema_tristate(&s, v, "merge", &plan->merge);
			plan->merge_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "optimizer") == 0) {
			r = dtl_schema_string(&s, v, "optimizer", &text);
			if (r >= 0 && dtl_optimizer_parse(text, &plan->optimizer) < 0)
				r = dtl_schema_fail(&s, v,
				                    "'optimizer' must be one of adamw, adamw_8bit, "
				                    "adafactor, sgd, got %s",
				                    dtl_schema_describe(&s, v));
			plan->optimizer_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "device_memory") == 0) {
			r = parse_device_memory(&s, v, &plan->device_memory);
			plan->device_memory_loc = dtl_schema_loc(&s, v);
		} else if (strcmp(k, "model_cast") == 0) {
			r = dtl_schema_dtype(&s, v, "model_cast", true, &plan->model_cast);
			plan->model_cast_loc = dtl_schema_loc(&s, v);
			if (r >= 0 && plan->model_cast != DTL_DTYPE_NONE &&
			    !dtl_dtype_is_floating(plan->model_cast))
				r = dtl_schema_fail(&s, v,
				                    "'model_cast' must be a floating dtype, got %s",
				                    dtl_schema_describe(&s, v));
		}
	}
	return r;
}
