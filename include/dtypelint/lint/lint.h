/* SPDX-License-Identifier: MIT */
/*
 * The lint run as a library function: the one door from a front end (the command line, the
 * fuzz harness, fix verification) to the simulation and the rules.
 *
 * dtl_lint_run() takes a job (the files of one set-up: a manifest or model folder and the
 * files composed with it), the settings it is linted with (the config, if any, merged with the
 * options: limits, rule selection, severity overrides, per-file ignores, --fail-on) and an
 * arena. It composes the set-up, resolves its plan (files, config, `with:`, options, the
 * project's dependency files), simulates it, runs the selected rules, applies the suppressions
 * (the manifest's and inline ones), the config's per-file ignores and severities, lints once
 * more per version span and trainer a range allows, and returns the findings, sorted, with
 * the input's view for reporters and the facts the exit status needs. It never prints: the
 * importers' warnings come back in the result, for the caller to show.
 *
 * Everything it returns lives in the arena given; a caller that lints many set-ups may lint
 * each in a scratch arena and keep only what it reports (dtl_lint_keep). The settings, the
 * options they point to and the job must outlive the result.
 */
#ifndef DTYPELINT_LINT_H
#define DTYPELINT_LINT_H
#ifndef DTL_SEES_LINT
#error "dtypelint/lint/lint.h is in the lint layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/model/behavior.h"
#include "dtypelint/rules/rules.h"
#include "dtypelint/input/source.h"

/* Limits given by options or a config file: which fields were set, and their values. */
enum {
	DTL_LIMIT_FILE_SIZE,
	DTL_LIMIT_DEPTH,
	DTL_LIMIT_ALIAS_NODES,
	DTL_LIMIT_TENSORS,
	DTL_LIMIT_NAME_LENGTH,
	DTL_LIMIT_RANK,
	DTL_LIMIT_HEADER_SIZE,
	DTL_LIMIT_COUNT
};

struct dtl_limit_settings {
	unsigned set; /* bit i: limit i was given */
	uint64_t values[DTL_LIMIT_COUNT];
};

/* limits with the fields set in settings replaced */
void dtl_lint_limits_apply(struct dtl_limits *limits, const struct dtl_limit_settings *settings);

/* What one input is composed from: the command line's files for every input, or one set-up
 * of a config's `setups:` (paths relative to the working directory). */
struct dtl_lint_job {
	const char *input; /* a manifest, a model folder or "-" */
	const char *plan_file, *deepspeed_file, *accelerate_file, *peft_file, *trainer_args_file;
	const char *framework_file;             /* --framework-config */
	const char *const *framework_overrides; /* --framework-override, in order */
	size_t framework_override_count;
	const char *launch_file;        /* a launch script (--launch, a set-up's launch:) */
	const char *const *launch_argv; /* --launch -- CMD...: launch_argc words */
	size_t launch_argc;
	struct dtl_plan versions;  /* a set-up's `with:`: versions only, below --with */
	const char *versions_file; /* a set-up's `versions:`: its dependency file */
	const char *setup;         /* the set-up's name; NULL for a command-line input */
	struct dtl_loc loc;        /* where the set-up is defined */
};

/* .dtypelint.yaml (see dtypelint(1), CONFIGURATION), as the command line loads it. */
struct dtl_severity_override {
	const char *selector;
	enum dtl_severity severity;
};

struct dtl_file_ignore {
	const char *glob;     /* a path glob relative to the config file's directory */
	struct dtl_vec rules; /* const char * selectors */
};

struct dtl_config {
	const char *path; /* as shown in messages */
	const char *dir;  /* lexically absolute directory of the file */
	bool has_select;
	struct dtl_vec select, extend_select, ignore; /* const char * */
	struct dtl_vec overrides;                     /* struct dtl_severity_override */
	bool has_fail_on;
	enum dtl_severity fail_on;
	struct dtl_vec file_ignores; /* struct dtl_file_ignore */
	bool has_plan;
	struct dtl_plan plan; /* defaults below the manifest's own plan */
	struct dtl_limit_settings limits;
	struct dtl_vec setups; /* struct dtl_lint_job, in the file's order */
};

struct dtl_lint_options;
/* Called once an input's plan is resolved, before it is simulated (--export writes it there);
 * a negative errno stops the lint with it. */
typedef int dtl_lint_planned_fn(const struct dtl_lint_options *options,
                                const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                                struct dtl_error *error);

/* What the caller asks of every input (the command line's options). */
struct dtl_lint_options {
	const struct dtl_behavior_table *behaviors;   /* dtl_behavior_table_load */
	const struct dtl_op_oracle *ops;              /* kernel contracts (--kernels), or NULL */
	struct dtl_vec select, extend_select, ignore; /* const char *: over the config's */
	bool select_given;
	enum dtl_severity fail_on;
	bool fail_on_given;
	struct dtl_limit_settings limits; /* over the config's */
	struct dtl_plan overrides;        /* --strategy, --precision, --with: over every file */
	struct dtl_vec versions_from;     /* dependency files, const char *: over the set-up's */
	bool assume_newest;               /* a version range at its newest span only */
	const char *stdin_filename;       /* the name of input "-" */
	const char *config_file;          /* the config whose set-ups are linted (confines them) */
	bool memory;                      /* compute the per-rank memory view */
	dtl_lint_planned_fn *planned;     /* NULL: none */
	void *planned_data;               /* for planned */
};

/* One input's settings: its config (or none) merged with the options. */
struct dtl_lint_settings {
	const struct dtl_lint_options *options;
	const struct dtl_config *config; /* NULL: none */
	struct dtl_limits limits;        /* the defaults, then the config's, then the options' */
	struct dtl_rule_selection selection;
	enum dtl_severity fail_on;
	const struct dtl_source *stdin_source; /* input "-", read once (NULL: not read) */
};

/* Fills settings from config (NULL: none) and options: the limits, --fail-on and the rule
 * selection in layers, as ruff does (all rules, then the config's select, extend-select and
 * ignore, then the options'). Returns 0 or -ENOMEM. */
int dtl_lint_settings_init(struct dtl_lint_settings *settings, const struct dtl_config *config,
                           const struct dtl_lint_options *options, struct dtl_arena *arena);

/* What linting one input gave. */
struct dtl_lint_result {
	struct dtl_input_view *view; /* NULL: the input was not read; its finding is DT001 */
	struct dtl_findings *findings;
	struct dtl_memory_view *memory; /* options->memory: the per-rank model states */
	size_t suppressed;              /* findings suppressions and per-file ignores removed */
	enum dtl_severity fail_on;      /* the least severity that fails this input */
	/* the importers' warnings (struct dtl_input_warning), set once composed, even when the lint
	 * then fails; NULL when DT003 is ignored */
	const struct dtl_vec *warnings;
	/* what --fix-plan re-simulates from; NULL once kept (dtl_lint_keep) */
	const struct dtl_manifest *manifest;
	const struct dtl_plan *plan;
	const struct dtl_sim *sim;
};

/* Lints job with settings, everything it returns in arena. Returns 0, or a negative errno
 * with error set (an input that cannot be read, a limit, -ENOMEM). */
int dtl_lint_run(const struct dtl_lint_job *job, const struct dtl_lint_settings *settings,
                 struct dtl_arena *arena, struct dtl_lint_result *ret, struct dtl_error *error);

/* An input that could not be read as its own finding, DT001 input-error, at the error's
 * position (ruff's E902), so that the other inputs are still linted and reported; it fails
 * at any --fail-on. Returns 0 or -ENOMEM. */
int dtl_lint_input_error(const char *path, const struct dtl_error *error, struct dtl_arena *arena,
                         struct dtl_lint_result *ret);

/* Copies what reporters read of result into arena, so that the arena it was linted in can be
 * freed: its findings with their views, the input's view without the simulation's columns and
 * its plan without the nested wrap and ZeRO-3 settings. The copy serves every report but the
 * HTML one, --trace, --show-plan, --memory and the fix and wrap plans, which read the
 * simulation (their results are kept whole); its warnings, manifest, plan, sim and memory are
 * NULL. Returns 0 or -ENOMEM. */
int dtl_lint_keep(const struct dtl_lint_result *result, struct dtl_arena *arena,
                  struct dtl_lint_result *ret);

/* Does the selector (an id, any case; a name; an id prefix "DT1"; ALL) name at least one rule? */
bool dtl_lint_selector_known(const char *selector);
/* The rules a run can select, in id order; one by id or name (NULL: none): --list-rules and
 * --explain read them here. */
const struct dtl_rule *const *dtl_lint_rules(size_t *ret_count);
const struct dtl_rule *dtl_lint_rule(const char *id_or_name);
/* A severity's name ("warning"), and a name parsed (-EINVAL: none): --fail-on, the config */
const char *dtl_lint_severity_name(enum dtl_severity severity);
int dtl_lint_severity_parse(const char *text, enum dtl_severity *ret_severity);
/* Does a per-file-ignores entry of config drop rule's findings for input? */
bool dtl_config_file_ignored(const struct dtl_config *config, const char *input,
                             const struct dtl_rule *rule);
/* Matches a '/'-separated path against a glob: '*' and '?' and [...] within a segment, a
 * '**' segment any number of segments. */
bool dtl_lint_path_glob(const char *glob, const char *path);

#endif
