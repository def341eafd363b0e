/* SPDX-License-Identifier: MIT */
/*
 * The version table (rules/versions.yaml, compiled in): every framework behaviour that depends
 * on a version is a named entry with its version range and the fact behind it. Code asks
 * dtl_behavior_active(); it never compares versions itself.
 */
#ifndef DTYPELINT_BEHAVIOR_H
#define DTYPELINT_BEHAVIOR_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/behavior.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/model/manifest.h"
#include "dtypelint/model/plan.h"
#include "dtypelint/model/requirements.h"
#include "dtypelint/core/version.h"

/* enum dtl_behavior: DTL_B_FSDP1_VALIDATE_V2 ... DTL_B_COUNT, one per entry of
 * rules/versions.yaml behaviours:, written at build time by tools/gen-behaviors.c */
#include "rules/dtl-behaviors.h"

struct dtl_source;

struct dtl_behavior_info {
	const char *name; /* the key: "fsdp1-validate-v2" */
	enum dtl_framework framework;
	struct dtl_version since, until; /* inclusive; unset: open */
	const char *fact;                /* an https URL to the upstream source */
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
/* Replaces the table's newest known versions with the `newest:` map of source (YAML naming
 * every framework once, each version no newer than the table's): a frozen snapshot, so that
 * tests lint an unpinned plan at the same versions whatever releases the table adds. Returns
 * 0, or a negative errno with *error at the offending node of source; the table is unchanged
 * on failure. */
int dtl_behavior_table_pin_newest(struct dtl_behavior_table *table, const struct dtl_source *source,
                                  struct dtl_arena *arena, struct dtl_error *error);
/* Is the behaviour in force for these versions (a plan whose versions are all resolved)? */
bool dtl_behavior_active(const struct dtl_behavior_table *table, enum dtl_behavior behavior,
                         const struct dtl_version versions[DTL_FW_COUNT]);
/* The behaviour whose rules/versions.yaml key is name[0..len) ("fsdp1-validate-v2"), or -1:
 * for the profiles, whose entries may exist in some versions only. */
int dtl_behavior_lookup(const char *name, size_t len);
/* The manifest as plan's versions (the table's newest where it names none) have it: without
 * the tensors an importer created for other versions only (dtl_tensor_decl.gate, a tail of
 * the list), and an HF folder's tensors named and merged as that transformers loads them
 * (m->conversion, hf-conversion.h), and, under the plan's trainer: trl-reward, the model that
 * trainer loads (dtl_manifest_reward_head). *ret is m itself when none is left out, else a copy in
 * arena. 0 or -ENOMEM. */
int dtl_manifest_at_versions(const struct dtl_manifest *m, const struct dtl_behavior_table *table,
                             const struct dtl_plan *plan, struct dtl_arena *arena,
                             const struct dtl_manifest **ret);
/* m as TRL's RewardTrainer loads a causal LM's checkpoint (AutoModelForSequenceClassification,
 * num_labels=1; reward-head.c): no lm_head nor its tie, a score.weight [1, hidden] in the load
 * dtype. *ret is m itself when m has no lm_head, else a copy in arena. 0 or -ENOMEM. */
int dtl_manifest_reward_head(const struct dtl_manifest *m, struct dtl_arena *arena,
                             const struct dtl_manifest **ret);
/* "torch >= 2.1", "deepspeed 0.12.0 to 0.19.2" */
const char *dtl_behavior_range(const struct dtl_behavior_table *table, enum dtl_behavior behavior,
                               struct dtl_arena *arena);

/* A stretch of a framework's versions over which no behaviour of the table changes, clipped
 * to what a requirement allows: linting one version of it (rep) lints them all. */
struct dtl_version_span {
	struct dtl_version rep;    /* the version linted: the newest known in an open top */
	struct dtl_version lo, hi; /* its first and last versions; unset: open */
	bool hi_strict;            /* hi is the first version after it ("< 2.1") */
};
/* The spans of framework fw that r allows, oldest first, into out (at most max); returns
 * their number (0: r allows none of the versions the table can tell apart). */
size_t dtl_behavior_spans(const struct dtl_behavior_table *table, enum dtl_framework fw,
                          const struct dtl_requirement *r, struct dtl_version_span *out,
                          size_t max);

#endif
