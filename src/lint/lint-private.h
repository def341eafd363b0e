/* SPDX-License-Identifier: MIT */
/* The lint layer's own parts (src/lint/): suppressions, version ranges, settings. */
#ifndef DTL_LINT_PRIVATE_H
#define DTL_LINT_PRIVATE_H

#include "dtypelint/lint/lint.h"
#include "dtypelint/sim/memory.h"
#include "dtypelint/model/requirements.h"
#include "dtypelint/sim/sim.h"

/* Suppressions of one input (the manifest's suppress: list and inline comments): removes the
 * findings they match and, when DT002 runs, adds one DT002 finding per unused suppression.
 * Comments are read from read_already when given (standard input), else from the manifest's
 * file. Returns the number of findings removed in *ret_suppressed. */
int dtl_lint_suppress(const struct dtl_sim *sim, struct dtl_findings *findings,
                      const struct dtl_rule_selection *selection, const struct dtl_limits *limits,
                      const struct dtl_source *read_already, struct dtl_arena *arena,
                      size_t *ret_suppressed, struct dtl_error *error);

/* The config's severity overrides applied to findings (settings.c). */
void dtl_lint_apply_overrides(const struct dtl_config *config, struct dtl_findings *findings);
/* Is the rule id ignored by the options or the config (DT003 stays on under --select)? */
bool dtl_lint_ignored(const char *id, const struct dtl_lint_settings *settings);

/* The project's own word on the versions of input job (requirements.h): the options'
 * versions_from files, else the set-up's `versions:` file, else the dependency files found
 * beside the input up to its repository's root. */
int dtl_lint_versions_read(const struct dtl_lint_job *job, const struct dtl_lint_options *o,
                           const struct dtl_limits *limits, struct dtl_arena *arena,
                           struct dtl_requirements *ret, struct dtl_error *error);
/* Sets the versions the plan leaves unset that the files pin to one version (dtypelint's own
 * files and the options win over a dependency file). */
void dtl_lint_versions_pin(struct dtl_plan *plan, const struct dtl_requirements *req);

/* The versions a range allows that behave differently (issue 33, item 2): the set-up is
 * linted at the newest allowed version of every framework, then once more per other span of
 * one framework, the rest kept newest. */
enum { DTL_LINT_MAX_SPANS = 32 };
struct dtl_lint_ranges {
	struct dtl_version_span spans[DTL_FW_COUNT][DTL_LINT_MAX_SPANS];
	size_t count[DTL_FW_COUNT]; /* 0: not a range the files leave open */
	const struct dtl_requirement *req[DTL_FW_COUNT];
	/* the trainers linted when no input names one (NULL: none, a hand-written loop, first) */
	const char *trainers[3];
	size_t trainer_count; /* 0: an input names it */
};
/* Sets the versions the plan leaves unset that the files allow a range of to their newest
 * allowed span (the only one with assume_newest), noting the range in the plan; with no
 * trainer named, lists the trainers to lint with. */
int dtl_lint_versions_ranges(struct dtl_plan *plan, const struct dtl_requirements *req,
                             const struct dtl_behavior_table *behaviors, bool assume_newest,
                             struct dtl_arena *arena, struct dtl_lint_ranges *ret);
/* Where a finding fires: fires[fw] has bit k set when it fires at span k of framework fw, and
 * fires[DTL_FW_COUNT] bit k with trainer k (0: not known). Fills f->ranges for what it fires
 * at only some of. */
int dtl_lint_versions_annotate(struct dtl_finding *f, const uint32_t fires[DTL_FW_COUNT + 1],
                               const struct dtl_lint_ranges *ranges, struct dtl_arena *arena);

#endif
