/* SPDX-License-Identifier: MIT */
/*
 * The training plan (plan.h), the model layer's account of how a set-up trains: strategy,
 * precision, framework, optimizer, and the settings of FSDP and ZeRO-3. Here: an empty plan
 * with every field unset, the overlay that lets a later input override an earlier one (options
 * over files), and the names the manifest and the command line use, with their parsers.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/plan.h"

int dtl_plan_unmodelled(struct dtl_plan *plan, struct dtl_arena *arena,
                        const struct dtl_unmodelled *what)
{
	struct dtl_unmodelled *slot = dtl_vec_push(&plan->unmodelled, arena, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = *what;
	return 0;
}

void dtl_plan_init(struct dtl_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->fsdp.use_orig_params = DTL_UNSET;
	plan->zero3.init = DTL_UNSET;
	plan->zero3.persistence_threshold = -1;
	plan->zero3.model_persistence_threshold = -1;
	plan->zero3.allgather_sequential = DTL_UNSET;
	plan->zero3.autocast = DTL_UNSET;
	plan->zero3.quantized_weights = DTL_UNSET;
	plan->zero3.quantized_nontrainable = DTL_UNSET;
	plan->zero3.init_dtype_override = DTL_UNSET;
	plan->merge = DTL_UNSET;
	plan->fsdp.cpu_offload = DTL_UNSET;
	plan->zero3.prefetch_bucket_size = -1;
	plan->zero3.max_live_parameters = -1;
	dtl_plan_keys_init(plan);
}

#define TAKE(field, locfield, is_set)                                                              \
	do {                                                                                       \
		if (is_set) {                                                                      \
			dst->field = src->field;                                                   \
			dst->locfield = src->locfield;                                             \
		}                                                                                  \
	} while (0)

void dtl_plan_overlay(struct dtl_plan *dst, const struct dtl_plan *src)
{
	dtl_plan_keys_overlay(dst, src);
	TAKE(strategy, strategy_loc, src->strategy != DTL_STRATEGY_UNSET);
	/* whoever names the strategy also says whether DeepSpeed's engine runs it */
	if (src->strategy != DTL_STRATEGY_UNSET)
		dst->deepspeed_engine = src->deepspeed_engine;
	TAKE(precision, precision_loc, src->precision != DTL_PRECISION_UNSET);
	if (src->precision_auto_loc.file)
		dst->precision_auto_loc = src->precision_auto_loc;
	TAKE(world_size, world_size_loc, src->world_size != 0);
	for (int i = 0; i < DTL_FW_COUNT; i++)
		TAKE(versions[i], version_locs[i], src->versions[i].set);
	TAKE(trainer, trainer_loc, src->trainer != NULL);
	if (src->fsdp.wrap.present)
		dst->fsdp.wrap = src->fsdp.wrap;
	if (src->fsdp.ignored.present)
		dst->fsdp.ignored = src->fsdp.ignored;
	TAKE(fsdp.param_dtype, fsdp.param_dtype_loc, src->fsdp.param_dtype_loc.line != 0);
	TAKE(fsdp.reduce_dtype, fsdp.reduce_dtype_loc, src->fsdp.reduce_dtype_loc.line != 0);
	/* whoever sets the reduce dtype says whether it is Automodel's versioned default */
	if (src->fsdp.reduce_dtype_loc.line != 0)
		dst->fsdp.reduce_by_automodel = src->fsdp.reduce_by_automodel;
	TAKE(fsdp.buffer_dtype, fsdp.buffer_dtype_loc, src->fsdp.buffer_dtype_loc.line != 0);
	TAKE(fsdp.use_orig_params, fsdp.use_orig_params_loc,
	     src->fsdp.use_orig_params != DTL_UNSET);
	TAKE(zero3.init, zero3.init_loc, src->zero3.init != DTL_UNSET);
	if (src->zero3.persistence_threshold >= 0 || src->zero3.persistence_auto) {
		dst->zero3.persistence_threshold = src->zero3.persistence_threshold;
		dst->zero3.persistence_auto = src->zero3.persistence_auto;
		dst->zero3.persistence_threshold_loc = src->zero3.persistence_threshold_loc;
	}
	TAKE(zero3.model_persistence_threshold, zero3.model_persistence_threshold_loc,
	     src->zero3.model_persistence_threshold >= 0);
	TAKE(zero3.allgather_sequential, zero3.allgather_sequential_loc,
	     src->zero3.allgather_sequential != DTL_UNSET);
	TAKE(zero3.offload_param, zero3.offload_param_loc,
	     src->zero3.offload_param != DTL_OFFLOAD_UNSET);
	TAKE(zero3.buffer_dtype, zero3.buffer_dtype_loc, src->zero3.buffer_dtype_loc.line != 0);
	TAKE(zero3.param_dtype, zero3.param_dtype_loc, src->zero3.param_dtype_loc.line != 0);
	TAKE(zero3.quantized_weights, zero3.quantized_weights_loc,
	     src->zero3.quantized_weights != DTL_UNSET);
	TAKE(zero3.quantized_nontrainable, zero3.quantized_nontrainable_loc,
	     src->zero3.quantized_nontrainable != DTL_UNSET);
	TAKE(zero3.init_dtype_override, zero3.init_dtype_override_loc,
	     src->zero3.init_dtype_override != DTL_UNSET);
	if (src->zero3.autocast != DTL_UNSET) {
		dst->zero3.autocast = src->zero3.autocast;
		dst->zero3.autocast_dtype = src->zero3.autocast_dtype;
		dst->zero3.autocast_loc = src->zero3.autocast_loc;
	}
	if (src->direct_access.present)
		dst->direct_access = src->direct_access;
	TAKE(merge, merge_loc, src->merge != DTL_UNSET);
	if (src->strategy != DTL_STRATEGY_UNSET)
		dst->fsdp_version_from_trainer = src->fsdp_version_from_trainer;
	TAKE(model_cast, model_cast_loc, src->model_cast != DTL_DTYPE_NONE);
	TAKE(optimizer, optimizer_loc, src->optimizer != DTL_OPTIMIZER_UNSET);
	TAKE(device_memory, device_memory_loc, src->device_memory > 0);
	TAKE(fsdp.cpu_offload, fsdp.cpu_offload_loc, src->fsdp.cpu_offload != DTL_UNSET);
	TAKE(zero3.offload_optimizer, zero3.offload_optimizer_loc,
	     src->zero3.offload_optimizer != DTL_OFFLOAD_UNSET);
	TAKE(zero3.prefetch_bucket_size, zero3.prefetch_bucket_size_loc,
	     src->zero3.prefetch_bucket_size >= 0);
	TAKE(zero3.max_live_parameters, zero3.max_live_parameters_loc,
	     src->zero3.max_live_parameters >= 0);
	if (src->file && !dst->file) {
		dst->file = src->file;
		dst->loc = src->loc;
	}
}

static const char *const strategy_names[] = {
    [DTL_STRATEGY_UNSET] = "single", [DTL_STRATEGY_SINGLE] = "single",
    [DTL_STRATEGY_DDP] = "ddp",      [DTL_STRATEGY_FSDP1] = "fsdp1",
    [DTL_STRATEGY_FSDP2] = "fsdp2",  [DTL_STRATEGY_ZERO3] = "zero3",
};

const char *dtl_strategy_name(enum dtl_strategy strategy)
{
	return strategy_names[strategy];
}

int dtl_strategy_parse(const char *text, enum dtl_strategy *ret_strategy)
{
	for (int i = DTL_STRATEGY_SINGLE; i <= DTL_STRATEGY_ZERO3; i++) {
		if (strcmp(text, strategy_names[i]) == 0) {
			*ret_strategy = (enum dtl_strategy)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *const precision_names[] = {
    [DTL_PRECISION_UNSET] = "fp32",
    [DTL_PRECISION_BF16] = "bf16",
    [DTL_PRECISION_FP16] = "fp16",
    [DTL_PRECISION_FP32] = "fp32",
};

const char *dtl_precision_name(enum dtl_precision precision)
{
	return precision_names[precision];
}

int dtl_precision_parse(const char *text, enum dtl_precision *ret_precision)
{
	for (int i = DTL_PRECISION_BF16; i <= DTL_PRECISION_FP32; i++) {
		if (strcmp(text, precision_names[i]) == 0) {
			*ret_precision = (enum dtl_precision)i;
			return 0;
		}
	}
	return -EINVAL;
}

enum dtl_dtype dtl_precision_dtype(enum dtl_precision precision)
{
	switch (precision) {
	case DTL_PRECISION_BF16:
		return DTL_DTYPE_BF16;
	case DTL_PRECISION_FP16:
		return DTL_DTYPE_F16;
	case DTL_PRECISION_FP32:
		return DTL_DTYPE_F32;
	default:
		return DTL_DTYPE_NONE;
	}
}

static const char *const framework_names[DTL_FW_COUNT] = {
    "torch",      "transformers", "peft",         "deepspeed",
    "accelerate", "trl",          "bitsandbytes", "nemo-automodel",
};

const char *dtl_framework_name(enum dtl_framework framework)
{
	return framework_names[framework];
}

bool dtl_framework_reported(enum dtl_framework fw, const char *recipe_kind, bool assumed)
{
	return fw != DTL_FW_AUTOMODEL || !assumed ||
	       (recipe_kind && strcmp(recipe_kind, "nemo-automodel") == 0);
}

int dtl_framework_parse(const char *text, enum dtl_framework *ret_framework)
{
	for (int i = 0; i < DTL_FW_COUNT; i++) {
		if (strcmp(text, framework_names[i]) == 0) {
			*ret_framework = (enum dtl_framework)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *const optimizer_names[] = {
    [DTL_OPTIMIZER_UNSET] = "adamw",
    [DTL_OPTIMIZER_ADAMW] = "adamw",
    [DTL_OPTIMIZER_ADAMW_8BIT] = "adamw_8bit",
    [DTL_OPTIMIZER_ADAFACTOR] = "adafactor",
    [DTL_OPTIMIZER_SGD] = "sgd",
};

const char *dtl_optimizer_name(enum dtl_optimizer optimizer)
{
	return optimizer_names[optimizer];
}

int dtl_optimizer_parse(const char *text, enum dtl_optimizer *ret_optimizer)
{
	for (int i = DTL_OPTIMIZER_ADAMW; i <= DTL_OPTIMIZER_SGD; i++) {
		if (strcmp(text, optimizer_names[i]) == 0) {
			*ret_optimizer = (enum dtl_optimizer)i;
			return 0;
		}
	}
	return -EINVAL;
}

int dtl_bytes_parse(const char *text, int64_t *ret_bytes)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = {
	    {"", 1},
	    {"B", 1},
	    {"KB", 1e3},
	    {"MB", 1e6},
	    {"GB", 1e9},
	    {"TB", 1e12},
	    {"KiB", 1024.0},
	    {"MiB", 1048576.0},
	    {"GiB", 1073741824.0},
	    {"TiB", 1099511627776.0},
	};
	const char *p = text;
	double value = 0, frac = 0.1;
	bool digits = false, dot = false;

	/* by hand, not strtod: no locale, no exponent, no hex, no sign */
	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
		if (*p == '.') {
			dot = true;
			continue;
		}
		digits = true;
		if (dot) {
			value += (*p - '0') * frac;
			frac /= 10;
		} else {
			value = value * 10 + (*p - '0');
		}
		if (value > 4.7e18)
			return -ERANGE;
	}
	if (!digits)
		return -EINVAL;
	while (*p == ' ')
		p++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix) != 0)
			continue;
		double bytes = value * units[i].scale;
		if (bytes < 1 || bytes > 4611686018427387904.0)
			return -ERANGE;
		*ret_bytes = (int64_t)bytes;
		return 0;
	}
	return -EINVAL;
}
