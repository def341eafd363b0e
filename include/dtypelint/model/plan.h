/* SPDX-License-Identifier: MIT */
/*
 * The training plan (docs/design.md §3 `training:`): strategy, precision, versions and the sharding
 * settings. Every field keeps where it was set (loc.line == 0: not set by any file), so findings
 * can point at the line that causes them. Unset fields mean the framework's own default.
 */
#ifndef DTYPELINT_PLAN_H
#define DTYPELINT_PLAN_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/plan.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/model/plan-key.h"
#include "dtypelint/core/version.h"

enum dtl_strategy {
	DTL_STRATEGY_UNSET = 0,
	DTL_STRATEGY_SINGLE,
	DTL_STRATEGY_DDP,
	DTL_STRATEGY_FSDP1,
	DTL_STRATEGY_FSDP2,
	DTL_STRATEGY_ZERO3,
};

enum dtl_precision {
	DTL_PRECISION_UNSET = 0,
	DTL_PRECISION_BF16,
	DTL_PRECISION_FP16,
	DTL_PRECISION_FP32,
};

enum dtl_framework {
	DTL_FW_TORCH,
	DTL_FW_TRANSFORMERS,
	DTL_FW_PEFT,
	DTL_FW_DEEPSPEED,
	DTL_FW_ACCELERATE,
	DTL_FW_TRL,
	DTL_FW_BITSANDBYTES,
	DTL_FW_AUTOMODEL, /* NeMo Automodel (PyPI nemo-automodel): its recipes only */
	DTL_FW_COUNT
};

enum dtl_offload {
	DTL_OFFLOAD_UNSET = 0,
	DTL_OFFLOAD_NONE,
	DTL_OFFLOAD_CPU,
	DTL_OFFLOAD_NVME,
};

/* The optimizer the memory accounting sizes the states of (unset: adamw). */
enum dtl_optimizer {
	DTL_OPTIMIZER_UNSET = 0,
	DTL_OPTIMIZER_ADAMW,
	DTL_OPTIMIZER_ADAMW_8BIT,
	DTL_OPTIMIZER_ADAFACTOR,
	DTL_OPTIMIZER_SGD,
};

/* A tri-state boolean: unset means the framework default. */
enum dtl_tristate {
	DTL_UNSET = -1,
	DTL_FALSE = 0,
	DTL_TRUE = 1,
};

/* A pattern as written, with its location: a glob, a class name or a keep-in-fp32 entry. */
struct dtl_pattern {
	const char *text;
	uint32_t len;
	struct dtl_loc loc;
};

struct dtl_patterns {
	struct dtl_pattern *items;
	size_t count;
	bool present; /* the key was given (an empty list is not the same as no key) */
	struct dtl_loc loc;
};

struct dtl_plan_fsdp {
	struct dtl_patterns wrap; /* class names or path globs; absent: model.no_split_modules */
	/* accelerate's TRANSFORMER_BASED_WRAP: every wrap entry is a class name that
	 * get_module_class_from_name must find in the model, else accelerate raises */
	bool wrap_by_class;
	/* the same policy with no class named: accelerate wraps model._no_split_modules and
	 * looks those names up the same way (DT105) */
	bool transformer_based_wrap;
	enum dtl_dtype param_dtype, reduce_dtype, buffer_dtype; /* NONE: unset (None) */
	struct dtl_loc param_dtype_loc, reduce_dtype_loc, buffer_dtype_loc;
	/* reduce_dtype is NeMo Automodel's FSDP2Config default, whose dtype is the version's:
	 * bfloat16 up to 0.4.0 (rules/versions.yaml automodel-fsdp2-default-reduce-fp32) */
	bool reduce_by_automodel;
	enum dtl_tristate use_orig_params;
	struct dtl_loc use_orig_params_loc;
	struct dtl_patterns ignored;
	enum dtl_tristate cpu_offload; /* CPUOffload(offload_params=True); unset: off */
	struct dtl_loc cpu_offload_loc;
	struct dtl_loc loc;
};

struct dtl_plan_zero3 {
	enum dtl_tristate init; /* unset: true (transformers builds the model under zero.Init) */
	struct dtl_loc init_loc;
	int64_t persistence_threshold; /* -1: unset (1e5) */
	bool persistence_auto;         /* "auto": 10 * hidden_size */
	struct dtl_loc persistence_threshold_loc;
	int64_t model_persistence_threshold; /* -1: unset (sys.maxsize) */
	struct dtl_loc model_persistence_threshold_loc;
	enum dtl_tristate allgather_sequential;
	struct dtl_loc allgather_sequential_loc;
	enum dtl_offload offload_param;
	struct dtl_loc offload_param_loc;
	enum dtl_offload offload_optimizer;
	struct dtl_loc offload_optimizer_loc;
	/* stage3_prefetch_bucket_size, stage3_max_live_parameters in elements (-1: unset,
	 * DeepSpeed's 5e7 and 1e9) */
	int64_t prefetch_bucket_size, max_live_parameters;
	struct dtl_loc prefetch_bucket_size_loc, max_live_parameters_loc;
	enum dtl_dtype buffer_dtype, param_dtype; /* data_types.*; NONE: unset */
	struct dtl_loc buffer_dtype_loc, param_dtype_loc;
	/* DeepSpeed's torch_autocast section: Linear/Conv params communicate in autocast_dtype
	 * (comm_dtype), their storage stays (unset: off) */
	enum dtl_tristate autocast;
	enum dtl_dtype autocast_dtype; /* NONE: not given (DeepSpeed's code then has None) */
	struct dtl_loc autocast_loc;
	/* ZeRO++ zero_quantized_weights / zero_quantized_nontrainable_weights (unset: off):
	 * partitioned parameters are int8-quantized for the all-gather, or stored so */
	enum dtl_tristate quantized_weights, quantized_nontrainable;
	struct dtl_loc quantized_weights_loc, quantized_nontrainable_loc;
	/* zero.Init(tensor_overrides=[...]) names dtype (unset: DeepSpeed's default, which does);
	 * false: its tensor-creation wrappers cast nothing */
	enum dtl_tristate init_dtype_override;
	struct dtl_loc init_dtype_override_loc;
	struct dtl_loc loc;
};

/* Something the set-up uses that dtypelint does not model (a quantization format, an
 * inference engine, a kind of parallelism): DT604 reports it with the tensors it touches,
 * so that a run that cannot judge it is never taken as clean. */
struct dtl_unmodelled {
	const char *what;        /* "MXFP4 quantization (quantization_config.quant_method mxfp4)" */
	const char *touches;     /* the tensors it touches, in words */
	const char *suffixes[3]; /* tensors whose names end so are the ones it touches (NULL) */
	struct dtl_loc loc;      /* the key that asks for it */
};

struct dtl_plan {
	const char *file;   /* where the plan was read from (a manifest, --plan file, ...) */
	struct dtl_loc loc; /* the `training:` key, or the plan file's top */
	enum dtl_strategy strategy;
	struct dtl_loc strategy_loc;
	/* the strategy is the HF Trainer's own fsdp option with no FSDP version given: FSDP1, or
	 * FSDP2 where transformers defaults to it (rules/versions.yaml
	 * transformers-trainer-fsdp2-default) */
	bool fsdp_version_from_trainer;
	/* the strategy (ddp) is DeepSpeed's engine at ZeRO stage 0-2: deepspeed.initialize still
	 * casts the module for bf16/fp16 (rules/versions.yaml deepspeed-engine-cast-any-stage) */
	bool deepspeed_engine;
	enum dtl_precision precision;
	struct dtl_loc precision_loc;
	/* a DeepSpeed config left bf16/fp16.enabled "auto" (the HF Trainer fills it from its
	 * arguments) and no input resolved it: where; file NULL when none did */
	struct dtl_loc precision_auto_loc;
	int64_t world_size; /* 0: unset */
	struct dtl_loc world_size_loc;
	struct dtl_version versions[DTL_FW_COUNT];
	struct dtl_loc version_locs[DTL_FW_COUNT];
	/* a version a dependency file allows a range of: what it allows and the versions linted
	 * (">=0.18, linted at 0.18, 0.19.2, 0.19.8"); NULL: one version */
	const char *version_range[DTL_FW_COUNT];
	const char *trainer; /* NULL: unset ("none") */
	struct dtl_loc trainer_loc;
	/* no input names the trainer, so the set-up is linted with each: "also linted as
	 * hf-trainer, trl-sft"; NULL otherwise */
	const char *trainer_range;
	struct dtl_plan_fsdp fsdp;
	struct dtl_plan_zero3 zero3;
	struct dtl_patterns direct_access;
	enum dtl_tristate merge;
	struct dtl_loc merge_loc;
	/* the user's own model.to(dtype) / .half() / .bfloat16() / cast_model_to_dtype before the
	 * trainer wraps the model (NONE: none) */
	enum dtl_dtype model_cast;
	struct dtl_loc model_cast_loc;
	/* the memory accounting: the optimizer, and the memory of one device in bytes (0:
	 * unset; DT801 runs only when it is set) */
	enum dtl_optimizer optimizer;
	struct dtl_loc optimizer_loc;
	int64_t device_memory;
	struct dtl_loc device_memory_loc;
	struct dtl_vec unmodelled; /* struct dtl_unmodelled, in the importers' arena */
	/* the keys of plan-keys.h with no member of their own (FIELD STORED), by id: read them
	 * with dtl_plan_key_field() */
	union dtl_plan_value stored[DTL_PLAN_KEY_COUNT];
	struct dtl_loc stored_locs[DTL_PLAN_KEY_COUNT];
};

/* An empty plan in caller-owned storage: every field unset (DTL_UNSET, -1 for the sizes), so
 * that dtl_plan_overlay() tells a field a file or option set from one nobody did. Allocates
 * nothing; the plan's strings and lists live in the importers' arena. */
void dtl_plan_init(struct dtl_plan *plan);
/* Records what the set-up uses that dtypelint does not model (struct dtl_unmodelled; the
 * strings are kept, not copied). 0 or -ENOMEM. */
int dtl_plan_unmodelled(struct dtl_plan *plan, struct dtl_arena *arena,
                        const struct dtl_unmodelled *what);
/* Fields set in src override those in dst (options win over files). */
void dtl_plan_overlay(struct dtl_plan *dst, const struct dtl_plan *src);

/* The names plans, manifests and options (--strategy, --precision, --with) use. *_name returns
 * static storage; *_parse takes a NUL-terminated name and returns 0 (out-parameter set) or -EINVAL
 * for a name it does not know (out-parameter untouched; the caller writes the error). */
const char *dtl_strategy_name(enum dtl_strategy strategy);
int dtl_strategy_parse(const char *text, enum dtl_strategy *ret_strategy);
const char *dtl_precision_name(enum dtl_precision precision);
int dtl_precision_parse(const char *text, enum dtl_precision *ret_precision);
/* the 16-bit dtype of a precision; DTL_DTYPE_F32 for fp32; NONE when unset */
enum dtl_dtype dtl_precision_dtype(enum dtl_precision precision);
const char *dtl_framework_name(enum dtl_framework framework);
int dtl_framework_parse(const char *text, enum dtl_framework *ret_framework);
/* Is fw's version part of a set-up's reports? torch ... bitsandbytes always are, since every
 * set-up runs on them; NeMo Automodel only when the set-up reads an Automodel recipe
 * (recipe_kind "nemo-automodel") or names its version (assumed false), so that a set-up
 * without it says nothing of it. */
bool dtl_framework_reported(enum dtl_framework fw, const char *recipe_kind, bool assumed);
const char *dtl_optimizer_name(enum dtl_optimizer optimizer); /* "adamw" when unset */
int dtl_optimizer_parse(const char *text, enum dtl_optimizer *ret_optimizer);
/* A memory size: an integer number of bytes, optionally followed by B, KB, MB, GB, TB
 * (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), e.g. "80GiB" or "1.5TB";
 * -EINVAL when malformed, -ERANGE when zero or above 2^62. */
int dtl_bytes_parse(const char *text, int64_t *ret_bytes);

#endif
