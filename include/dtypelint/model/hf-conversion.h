/* SPDX-License-Identifier: MIT */
/*
 * How transformers names a checkpoint's tensors in the live model: the renames and expert merges
 * of its weight-conversion mapping (rules/conversions.yaml, compiled in), found for a Hugging
 * Face folder at import and applied to its tensors at the plan's transformers version.
 */
#ifndef DTYPELINT_HF_CONVERSION_H
#define DTYPELINT_HF_CONVERSION_H
#ifndef DTL_SEES_MODEL
#error                                                                                             \
    "dtypelint/model/hf-conversion.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtypelint/model/behavior.h"
#include "dtypelint/model/manifest.h"

/* One renaming: `from` (anchored at the start, or its first occurrence) becomes `to` */
struct dtl_hf_rename {
	const char *from, *to, *scope;
	size_t from_len, to_len, scope_len;
	bool anchored;
	const char **unless; /* texts that must not follow the match */
	size_t unless_count;
	int behavior; /* enum dtl_behavior it also needs (a later release), or -1 */
};

/* A merge pattern split at its `*` (the expert index) */
struct dtl_hf_merge_source {
	const char *pre, *post;
	size_t pre_len, post_len;
};

/* N per-expert tensors of each source stacked, the sources concatenated, into `to` */
struct dtl_hf_merge {
	struct dtl_hf_merge_source *sources;
	size_t source_count;
	const char *to;
	size_t to_len;
};

struct dtl_hf_conversion {
	int behavior; /* enum dtl_behavior: the versions it applies in */
	struct dtl_hf_rename *renames;
	size_t rename_count;
	struct dtl_hf_merge *merges;
	size_t merge_count;
};

/* The conversion of rules/conversions.yaml for a checkpoint of class architecture (looked up
 * first) or of config.json model_type (either may be NULL), parsed into arena: *ret is NULL
 * when none names them. 0, or a negative errno with *error at the rules file's line (the
 * embedded data is malformed). */
int dtl_hf_conversion_find(const char *architecture, const char *model_type,
                           struct dtl_arena *arena, const struct dtl_hf_conversion **ret,
                           struct dtl_error *error);
/* m with its tensors (and tied groups) named as the live model has them after conversion c
 * at versions (table's behaviours; c's own behaviour is the caller's to check): every rename
 * in force applied in order, the per-expert tensors of each merge that is complete and
 * uniform replaced by one 3-D tensor, in natural name order. *ret is m itself when nothing
 * changes or when the converted names would collide, else a copy in arena. Linear in the
 * tensors' names (times the rules). 0 or -ENOMEM. */
int dtl_hf_conversion_apply(const struct dtl_manifest *m, const struct dtl_hf_conversion *c,
                            const struct dtl_behavior_table *table,
                            const struct dtl_version versions[DTL_FW_COUNT],
                            struct dtl_arena *arena, const struct dtl_manifest **ret);

#endif
