/* SPDX-License-Identifier: MIT */
/*
 * Proven fixes (--fix-plan): for each finding, the edits the facts support, each applied to a
 * copy of the manifest and plan and re-simulated; ranked by whether they remove the finding,
 * how many findings they leave or create, and how little they change. --write applies one to
 * the user's file (src/fix/edit.c); --wrap-plan proposes FSDP2 fully_shard groups.
 */
#ifndef DTYPELINT_FIX_H
#define DTYPELINT_FIX_H
#ifndef DTL_SEES_FIX
#error "dtypelint/fix/fix.h is in the fix layer, barred from this one (docs/design.md §2)"
#endif

#include <stdio.h>

#include "dtypelint/lint/lint.h"
#include "dtypelint/rules/rules.h"

/* A candidate (struct dtl_fix_candidate, include/dtypelint/rules/rules.h: each rule proposes its
 * own) with what re-simulation found. */
struct dtl_fix {
	struct dtl_fix_candidate proposed; /* as the rule proposed it */
	/* after re-simulation */
	bool resolves;         /* the finding it was proposed for is gone */
	size_t before, after;  /* findings at or above the warning level */
	size_t total_after;    /* all findings, info included */
	const char **appeared; /* "DT201 fp32-pin-downcast: message" of findings it creates */
	size_t appeared_count;
	/* where --write would put it (set by the caller from dtl_fix_edit_build): the file and
	 * its key, or why no file of the input can hold it (a code change) */
	const char *edit_file, *edit_setting, *not_written;
};

struct dtl_fix_item {
	const struct dtl_finding *finding;
	struct dtl_fix *fixes; /* ranked best first */
	size_t count;
};

struct dtl_fix_plan {
	struct dtl_fix_item *items;
	size_t count;
};

struct dtl_fix_context {
	const struct dtl_manifest *manifest; /* as composed, plan included */
	const struct dtl_plan *plan;         /* the plan the simulation used (options applied) */
	const struct dtl_behavior_table *behaviors;
	const struct dtl_rule_selection *selection;
	const struct dtl_op_oracle *ops;
	struct dtl_arena *arena;
};

/* Candidates for every finding of sim, each re-simulated and ranked. */
int dtl_fix_plan_build(const struct dtl_fix_context *ctx, const struct dtl_sim *sim,
                       const struct dtl_findings *findings, struct dtl_fix_plan *ret_plan,
                       struct dtl_error *error);
/* Applies one fix to copies of a manifest and a plan (copies live in arena). */
int dtl_fix_apply(const struct dtl_fix *fix, struct dtl_manifest *manifest, struct dtl_plan *plan,
                  struct dtl_arena *arena);
int dtl_fix_plan_write_text(FILE *out, const struct dtl_fix_plan *plan);
int dtl_fix_plan_write_json(FILE *out, const struct dtl_fix_plan *plan, const struct dtl_sim *sim);

/* The files one input was composed from (include/dtypelint/model/compose.h); the only files an edit
 * may touch. */
struct dtl_fix_files {
	const char
	    *input; /* a manifest, or a model folder (its config.json, adapter_config.json) */
	const char *plan_file, *deepspeed_file, *accelerate_file, *peft_file, *trainer_args_file;
};

/* One fix as a change of one file's text. */
struct dtl_fix_edit {
	const char *path;    /* the file that holds the setting */
	const char *setting; /* its key as that file spells it: "zero_optimization.stage3_..." */
	const char *old_text, *new_text;
	size_t old_size, new_size;
};

/* --diff / --write: the edit that puts fix into the input's file holding the setting (m and
 * plan as composed: their locations say where each setting came from), keeping the rest of
 * its text. -ENOTSUP when no file of the input can hold it (a code change, *error says
 * which); -EINVAL when the result would not parse or not hold the value. */
int dtl_fix_edit_build(const struct dtl_fix *fix, const struct dtl_fix_files *files,
                       const struct dtl_manifest *m, const struct dtl_plan *plan,
                       struct dtl_arena *arena, struct dtl_fix_edit *ret_edit,
                       struct dtl_error *error);
/* A unified diff with 3 lines of context, paths a/ and b/ relative to the working directory:
 * `git apply` and `patch -p1` take it there. */
int dtl_fix_edit_diff(FILE *out, const struct dtl_fix_edit *edit);
/* Writes the edit (include/dtypelint/core/atomic-file.h), if the file is still what it was read as.
 */
int dtl_fix_edit_commit(const struct dtl_fix_edit *edit, struct dtl_error *error);

/* A finding's identity across runs: its rule and group, else its first tensor, else its
 * message. */
const char *dtl_fix_finding_key(struct dtl_arena *arena, const struct dtl_sim *sim,
                                const struct dtl_finding *finding);

/* What linting a set-up again after its fix was written says (--fix-plan --write): whether
 * the fixed finding is gone, and which findings the edit brought. */
struct dtl_fix_verdict {
	struct dtl_lint_result again; /* the set-up linted again (its warnings, for the caller) */
	/* the fixed finding (or its rule on one of its tensors, for a finding that stood for
	 * several alike) still reported, at its severity or above; NULL: gone */
	const struct dtl_finding *still;
	/* findings at or above the settings' --fail-on that were not there before: the edit
	 * brought them */
	const struct dtl_finding **brought;
	size_t brought_count;
};

/* Lints job again with settings (dtl_lint_run) and compares with before, the result the fix
 * was planned from, whose finding target it fixes. Everything in arena; never prints. Returns
 * 0, or a negative errno with error set (the edited files could not be linted: ret->again
 * holds the warnings of what was composed). */
int dtl_fix_verify(const struct dtl_lint_job *job, const struct dtl_lint_settings *settings,
                   const struct dtl_lint_result *before, const struct dtl_finding *target,
                   struct dtl_arena *arena, struct dtl_fix_verdict *ret, struct dtl_error *error);

/* --wrap-plan: FSDP2 fully_shard groups in which every group has one trainable dtype, as JSON
 * and as a Python snippet. The snippet refuses (-EINVAL) a module path that is not dotted
 * Python identifiers and indices; its strings are escaped Python literals. */
int dtl_wrap_plan_write(FILE *out, const struct dtl_sim *sim, bool json, struct dtl_error *error);

#endif
