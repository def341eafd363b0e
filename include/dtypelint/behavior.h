/* SPDX-License-Identifier: MIT */
/*
 * The version table (rules/versions.yaml, compiled in): every framework behaviour that depends
 * on a version is a named entry with its version range and the fact behind it. Code asks
 * dtl_behavior_active(); it never compares versions itself.
 */
#ifndef DTYPELINT_BEHAVIOR_H
#define DTYPELINT_BEHAVIOR_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/behavior.h is in the model layer, which this layer may not use (DESIGN.md §2)"
#endif

#include <stdbool.h>

#include "dtypelint/arena.h"
#include "dtypelint/diag.h"
#include "dtypelint/plan.h"
#include "dtypelint/version.h"

enum dtl_behavior {
	DTL_B_FSDP1_VALIDATE_V2,
	DTL_B_FSDP1_HAS_USE_ORIG_PARAMS,
	DTL_B_FSDP1_ORIG_PARAMS_MIXED_GRAD,
	DTL_B_FSDP2_TRAINABLE_ONLY_CHECK,
	DTL_B_FSDP2_NONFLOAT_PARAM_CRASH,
	DTL_B_DS_COALESCED_GATHER_FIRST_DTYPE,
	DTL_B_DS_BLANKET_MODULE_CAST,
	DTL_B_DS_DEFRAGMENT_ASSERT,
	DTL_B_DS_ALLGATHER_SEQUENTIAL,
	DTL_B_ACCELERATE_FSDP1_UPCAST,
	DTL_B_ACCELERATE_FSDP2_UPCAST,
	DTL_B_HF_KEEP_MATCH_REGEX,
	DTL_B_HF_KEEP_MATCH_SUBSTRING,
	DTL_B_HF_KEEP_STRICT,
	DTL_B_HF_KEEP_PLAIN_UNDER_BF16,
	DTL_B_HF_BNB_DEFAULT_FP16,
	DTL_B_PEFT_AUTOCAST_ADAPTER_DTYPE,
	DTL_B_PEFT_AUTOCAST_FP8,
	DTL_B_PEFT_4BIT_COMPUTE_DTYPE,
	DTL_B_PEFT_KBIT_SKIPS_PARAMS4BIT,
	DTL_B_TRL_QLORA_BF16_CAST,
	DTL_B_TRL_ZERO3_NO_AUTOCAST,
	DTL_B_TRL_ZERO3_NO_AUTOCAST_MORE,
	DTL_B_ACCELERATE_FSDP2_IGNORE_PARAMS4BIT,
	DTL_B_FSDP2_IGNORED_PARAMS,
	DTL_B_HF_TRAINER_PEFT_FSDP_WRAP,
	DTL_B_HF_TRAINER_QLORA_MIXED_PRECISION,
	DTL_B_TRL_STORAGE_FOLLOWS_DTYPE,
	DTL_B_PEFT_QDORA_FSDP_COPY,
	DTL_B_PEFT_TARGET_PARAMETERS_ZERO3_SHAPE,
	DTL_B_HF_ROPE_CACHE_FLOAT_ARANGE,
	DTL_B_ACCELERATE_FSDP2_MODEL_FP32_CAST,
	DTL_B_ACCELERATE_FSDP2_CARVE_EMBED_TAIL,
	DTL_B_ACCELERATE_FSDP2_TIED_TAIL,
	DTL_B_FSDP2_SHARED_PARAM_CHECK,
	DTL_B_TRL_REF_MODEL_NOT_WRAPPED,
	DTL_B_TRL_CAST_LM_HEAD_FP32,
	DTL_B_DS_AUTOCAST,
	DTL_B_DS_AUTOCAST_FP32_ONLY,
	DTL_B_DS_AUTOCAST_NO_16BIT_MODE,
	DTL_B_DS_AUTOCAST_GATHER_DTYPE_ASSERT,
	DTL_B_FSDP2_SPLIT_TRAINABLE_BY_DTYPE,
	DTL_B_HF_TRAINER_FSDP2_DEFAULT,
	DTL_B_TRL_DTYPE_FLOAT32_DEFAULT,
	DTL_B_DS_QUANTIZED_WEIGHTS_FP16,
	DTL_B_COUNT
};

struct dtl_behavior_info {
	const char *name; /* "fsdp1-validate-v2" */
	enum dtl_framework framework;
	struct dtl_version since, until; /* inclusive; unset: open */
	const char *fact;                /* "facts/torch-and-transformers.md §1.2" */
	const char *status;              /* "verified" | "unverified-boundary" */
	const char *summary;
};

struct dtl_behavior_table {
	struct dtl_behavior_info entries[DTL_B_COUNT];
	struct dtl_version newest[DTL_FW_COUNT];
};

/* Loads the embedded rules/versions.yaml. */
int dtl_behavior_table_load(struct dtl_behavior_table *table, struct dtl_arena *arena,
                            struct dtl_error *error);
/* Is the behaviour in force for these versions (a plan whose versions are all resolved)? */
bool dtl_behavior_active(const struct dtl_behavior_table *table, enum dtl_behavior behavior,
                         const struct dtl_version versions[DTL_FW_COUNT]);
/* "torch >= 2.1", "deepspeed 0.12.0 to 0.19.2" */
const char *dtl_behavior_range(const struct dtl_behavior_table *table, enum dtl_behavior behavior,
                               struct dtl_arena *arena);

#endif
