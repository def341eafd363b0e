/* SPDX-License-Identifier: MIT */
/* What a rule's check function gets, and helpers to build findings. */
#ifndef DTL_RULE_CHECK_H
#define DTL_RULE_CHECK_H

#include "dtypelint/rules/rules.h"
#include "dtypelint/sim/sim.h"

struct dtl_check {
	const struct dtl_sim *sim;
	const struct dtl_op_oracle *ops; /* custom ops' contracts (--kernels), or NULL */
	const struct dtl_rule *rule;
	struct dtl_findings *findings;
	struct dtl_arena *arena;
	bool asked; /* the selection names the rule (not only "ALL" or no selection at all) */
};

/* A new finding of the running rule (severity: the rule's default unless overridden). */
struct dtl_finding *dtl_check_report(struct dtl_check *c, enum dtl_severity severity,
                                     struct dtl_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Adds an involved tensor and a note saying where its dtype came from; role (may be NULL) is
 * appended, e.g. "the unit's first parameter". */
int dtl_check_add_tensor(struct dtl_check *c, struct dtl_finding *f, uint32_t tensor,
                         const char *role);
/* What a finding predicts: the framework error, when it is raised, the framework whose
 * version raises it (its version is quoted), and the fix. */
void dtl_check_predict(struct dtl_check *c, struct dtl_finding *f, const char *error_text,
                       const char *when, enum dtl_framework framework, const char *fix);
/* "torch 2.7.1" or "torch 2.9.0 (assumed: the plan names no torch version)" */
const char *dtl_check_version(struct dtl_check *c, enum dtl_framework framework);
/* "a, b and c" of dtype names in first-appearance order; torch-style with torch_style */
const char *dtl_check_dtype_set(struct dtl_check *c, const uint32_t *tensors, size_t count,
                                bool torch_style);
bool dtl_check_is_param(const struct dtl_sim *sim, uint32_t tensor);
/* One finding per cause: the findings of the running check from index first on that name a
 * group and share a cause (the same message and predicted error once the group's name is left
 * out) are folded into the first of them, which counts and names them ("and 31 more units like
 * it: model.layers.1–31") and gets a note per folded group at that group's location (its
 * same_way set). what: "unit" or "group". */
int dtl_check_merge_groups(struct dtl_check *c, size_t first, const char *what);
/* Names as one short range: "model.layers.1–55" (one prefix, ascending numbers), "a.1–5, 7, 9"
 * (at most four runs, then ", ..."), else the first name and ", ...". NULL on out of memory. */
const char *dtl_check_name_range(struct dtl_arena *arena, const char *const *names, size_t n);

/* Registers a rule: `DTL_RULE(dt101) = {.id = "DT101", ...};` in src/rules/dt101-<name>.c, the
 * one file that holds the rule, its documentation and its fix candidates. */
#define DTL_RULE(sym) const struct dtl_rule dtl_rule_##sym

/* Every rule in ascending id order, generated from the rule files at build time
 * (tools/gen-rule-registry.sh). */
extern const struct dtl_rule *const dtl_rule_registry[];
extern const size_t dtl_rule_registry_count;

#endif
