/* SPDX-License-Identifier: MIT */
/* The plan's keys as data (the rows of plan-keys.h, with where each is stored in struct
 * dtl_plan): read by src/model/plan-parse.c and the importers, written by export.c, and open
 * to any layer that sees the model (a fix that sets a key, a report that names one). */
#ifndef DTYPELINT_PLAN_KEY_H
#define DTYPELINT_PLAN_KEY_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/plan-key.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stddef.h>
#include <stdint.h>

#include "dtypelint/core/diag.h"

/* How a key's value is read and written; the schema of each is tools/gen-plan-schema.c's. */
enum dtl_plan_type {
	DTL_PLAN_MAP,              /* a mapping of further keys */
	DTL_PLAN_SWITCH,           /* a mapping whose presence sets FIELD (a tristate) false */
	DTL_PLAN_STRATEGY,         /* enum dtl_strategy */
	DTL_PLAN_PRECISION,        /* enum dtl_precision */
	DTL_PLAN_OPTIMIZER,        /* enum dtl_optimizer */
	DTL_PLAN_TRAINER,          /* const char *, one of VALUES */
	DTL_PLAN_RANKS,            /* int64_t, 1 to 2^24 */
	DTL_PLAN_VERSIONS,         /* the plan's versions[] and version_locs[] */
	DTL_PLAN_GLOBS,            /* struct dtl_patterns */
	DTL_PLAN_DTYPE,            /* enum dtl_dtype, or null */
	DTL_PLAN_FLOAT_DTYPE,      /* enum dtl_dtype, floating, or null */
	DTL_PLAN_TRISTATE,         /* enum dtl_tristate */
	DTL_PLAN_THRESHOLD,        /* int64_t >= 0, or null (-1) */
	DTL_PLAN_THRESHOLD_AUTO,   /* the same, or "auto" (zero3.persistence_auto) */
	DTL_PLAN_OFFLOAD,          /* enum dtl_offload */
	DTL_PLAN_TENSOR_OVERRIDES, /* a list of dtype and device: enum dtl_tristate, dtype named */
	DTL_PLAN_BYTES,            /* int64_t bytes, from "80GiB" or a number */
};

#define DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC, DEFAULT, VALUES, DOC, DS, ACC, TR)        \
	DTL_PLAN_KEY_##ID,
enum dtl_plan_key_id {
#include "dtypelint/model/plan-keys.h"
	DTL_PLAN_KEY_COUNT,
	DTL_PLAN_KEY_ROOT = DTL_PLAN_KEY_COUNT, /* the parent of the top level's keys */
};
#undef DTL_PLAN_KEY

/* The value of a STORED key (one with no member of its own), by its type: e for the enums,
 * the tristates and the dtypes, i for the integers, s for a word. */
union dtl_plan_value {
	int e;
	int64_t i;
	const char *s;
};

struct dtl_plan_key {
	enum dtl_plan_key_id parent;
	const char *name;
	enum dtl_plan_type type;
	size_t field, loc;  /* offset in struct dtl_plan plus one; 0: nowhere; SIZE_MAX: stored */
	const char *values; /* "zero3, fsdp1, ...": an enumeration's words, or NULL */
};

/* The rows of plan-keys.h, in its order, indexed by enum dtl_plan_key_id. */
extern const struct dtl_plan_key dtl_plan_keys[DTL_PLAN_KEY_COUNT];

struct dtl_plan;
struct dtl_schema;
struct dtl_node;
/* Where plan holds a key's value (its type's C type, union dtl_plan_value for a STORED key)
 * and its location; NULL for nowhere. */
void *dtl_plan_key_field(struct dtl_plan *plan, enum dtl_plan_key_id id);
struct dtl_loc *dtl_plan_key_loc(struct dtl_plan *plan, enum dtl_plan_key_id id);
/* An importer's reading of a key: section's key name (the framework's spelling), when present,
 * read as the row id's type into plan with its location (src/model/plan-parse.c). 0, or a
 * negative errno with s's error set. */
int dtl_plan_key_read(const struct dtl_schema *s, const struct dtl_node *section, const char *name,
                      struct dtl_plan *plan, enum dtl_plan_key_id id);
/* The STORED keys' unset values (plan.c's dtl_plan_init), and src's given ones over dst's
 * (dtl_plan_overlay). */
void dtl_plan_keys_init(struct dtl_plan *plan);
void dtl_plan_keys_overlay(struct dtl_plan *dst, const struct dtl_plan *src);

#endif
