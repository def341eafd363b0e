/* SPDX-License-Identifier: MIT */
/* The command line: options, config files, suppressions, baselines. Only src/cli/ prints. */
#ifndef DTL_CLI_H
#define DTL_CLI_H

#include <stdio.h>

#include "dtypelint/dtypelint.h"
#include "dtypelint/requirements.h"

enum dtl_format {
	DTL_FORMAT_TEXT,
	DTL_FORMAT_JSON,
	DTL_FORMAT_JSON_LINES,
	DTL_FORMAT_SARIF,
	DTL_FORMAT_GITHUB,
	DTL_FORMAT_GITLAB,
	DTL_FORMAT_MARKDOWN,
	DTL_FORMAT_HTML,
	DTL_FORMAT_CONCISE,
};

enum dtl_color {
	DTL_COLOR_AUTO,
	DTL_COLOR_ALWAYS,
	DTL_COLOR_NEVER,
};

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

/* The option name of limit i without dashes ("max-file-size"), its help text, its maximum. */
const char *dtl_cli_limit_name(int i);
const char *dtl_cli_limit_help(int i);
uint64_t dtl_cli_limit_max(int i);
/* Parses "N" or "N" with a K, M or G suffix (powers of 1024) into a limit value in
 * [1, its maximum]; returns -EINVAL or -ERANGE. */
int dtl_cli_limit_parse(int i, const char *text, uint64_t *ret_value);
uint64_t dtl_cli_limit_get(const struct dtl_limits *limits, int i);
/* limits with the fields set in settings replaced */
void dtl_cli_limits_apply(struct dtl_limits *limits, const struct dtl_limit_settings *settings);

struct dtl_options {
	const char **inputs;
	size_t input_count;
	const char *plan_file;
	struct dtl_plan overrides;    /* --strategy, --precision, --with */
	struct dtl_vec versions_from; /* --versions-from files, const char * */
	bool assume_newest;           /* --assume newest: a range at its newest version only */
	enum dtl_format format;
	const char *output;
	struct dtl_vec select, extend_select, ignore; /* const char * */
	bool select_given;
	enum dtl_severity fail_on;
	bool fail_on_given;
	bool exit_zero;
	bool statistics;
	bool show_plan; /* --show-plan: the resolved plan instead of the report */
	bool memory;    /* --memory: the per-rank model states beside the report */
	bool quiet;
	bool verbose; /* -v: every note of the text format */
	enum dtl_color color;
	const char *config_file;    /* --config */
	const char *stdin_filename; /* --stdin-filename: the name of input "-" */
	bool no_config;
	const char *baseline, *write_baseline;
	struct dtl_vec trace;     /* --trace globs, const char * */
	struct dtl_vec setups;    /* --setup names, const char * */
	struct dtl_cli_job *jobs; /* one per input: what it is composed from */
	struct dtl_limit_settings limits;
	bool list_rules;
	const char *explain;
	/* inputs composed with the manifest (include/dtypelint/compose.h) */
	const char *deepspeed_file, *accelerate_file, *peft_file, *trainer_args_file;
	const char *framework_file;         /* --framework-config */
	struct dtl_vec framework_overrides; /* --framework-override KEY=VALUE, const char * */
	const char *launch_file;
	const char *export_file;
	bool fix_plan, fix_write, fix_diff, wrap_plan;
	int fix_pick;                         /* 0: the first */
	struct dtl_vec scan_kernels, kernels; /* directories, const char * */
	int scan_budget_s;                    /* --scan-budget; -1: the scanner's default */
};

/* Parses argv; returns 0, 1 when the program should exit 0 at once (--help, --version), or
 * -EINVAL (a message is printed). */
int dtl_cli_parse(int argc, char **argv, struct dtl_arena *arena, struct dtl_options *options);
int dtl_cli_explain(FILE *out, const char *rule);
int dtl_cli_list_rules(FILE *out, enum dtl_format format);

/* Does the selector (an id, any case; a name; an id prefix "DT1"; ALL) name at least one rule?
 * (dtl_rule_matches() says whether it names a given one.) */
bool dtl_cli_selector_known(const char *selector);

/* .dtypelint.yaml (see dtypelint(1), CONFIGURATION). */
struct dtl_severity_override {
	const char *selector;
	enum dtl_severity severity;
};

struct dtl_file_ignore {
	const char *glob;     /* a path glob relative to the config file's directory */
	struct dtl_vec rules; /* const char * selectors */
};

/* What one input is composed from: the command line's files for every input, or one set-up
 * of a config's `setups:` (paths relative to the working directory). */
struct dtl_cli_job {
	const char *input; /* a manifest, a model folder or "-" */
	const char *plan_file, *deepspeed_file, *accelerate_file, *peft_file, *trainer_args_file;
	const char *framework_file;             /* --framework-config */
	const char *const *framework_overrides; /* --framework-override, in order */
	size_t framework_override_count;
	const char *launch_file;   /* a launch script (--launch, a set-up's launch:) */
	struct dtl_plan versions;  /* a set-up's `with:`: versions only, below --with */
	const char *versions_file; /* a set-up's `versions:`: its dependency file */
	const char *setup;         /* the set-up's name; NULL for a command-line input */
	struct dtl_loc loc;        /* where the set-up is defined */
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
	struct dtl_vec setups; /* struct dtl_cli_job, in the file's order */
};

/* The nearest trusted .dtypelint.yaml in input's directory (the input itself when it is a
 * directory) or above it; *ret_path is NULL when there is none. The path is relative to the
 * working directory when input is relative and the file lies under the working directory.
 * A config that others can write (the file or its folder world-writable, or owned by another
 * user under a world-writable folder such as /tmp) is skipped: the nearest one skipped and
 * why go to *ret_ignored and *ret_reason (NULL when none). */
int dtl_config_find(const char *input, struct dtl_arena *arena, const char **ret_path,
                    const char **ret_ignored, const char **ret_reason);
/* Reads and validates a config file (unknown keys are errors at their line and column). */
int dtl_config_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                    struct dtl_config *ret_config, struct dtl_error *error);
/* Does a per-file-ignores entry of config drop rule's findings for input? */
bool dtl_config_file_ignored(const struct dtl_config *config, const char *input,
                             const struct dtl_rule *rule);
/* Matches a '/'-separated path against a glob: '*' and '?' and [...] within a segment, a
 * '**' segment any number of segments. */
bool dtl_cli_path_glob(const char *glob, const char *path);

/* Suppressions of one input (the manifest's suppress: list and inline comments): removes the
 * findings they match and, when DT002 runs, adds one DT002 finding per unused suppression.
 * Comments are read from read_already when given (standard input), else from the manifest's
 * file. Returns the number of findings removed in *ret_suppressed. */
int dtl_cli_suppress(const struct dtl_sim *sim, struct dtl_findings *findings,
                     const struct dtl_rule_selection *selection, const struct dtl_limits *limits,
                     const struct dtl_source *read_already, struct dtl_arena *arena,
                     size_t *ret_suppressed, struct dtl_error *error);

/* Baselines (see dtypelint(1), BASELINE). */
struct dtl_baseline_entry {
	const char *rule, *file, *group, *tensor, *message;
	size_t count, used;
	struct dtl_loc loc;
};

struct dtl_baseline {
	const char *path;
	const char *dir;        /* entries' files are relative to it */
	struct dtl_vec entries; /* struct dtl_baseline_entry */
	struct dtl_strmap index;
};

int dtl_baseline_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                      struct dtl_baseline *ret_baseline, struct dtl_error *error);
/* Removes the findings the baseline holds (each entry at most count times); returns how many. */
size_t dtl_baseline_filter(struct dtl_baseline *baseline, struct dtl_report_input *inputs,
                           struct dtl_findings **findings, size_t n, struct dtl_arena *arena);
/* One "file:line:col: note: ..." line on out per entry that matched fewer findings than its
 * count; returns how many. */
size_t dtl_baseline_report_stale(const struct dtl_baseline *baseline, FILE *out);
/* Writes every finding as a baseline to path ("-": standard output); *ret_entries gets the
 * number of entries. */
int dtl_baseline_write(const char *path, const struct dtl_report_input *inputs, size_t n,
                       struct dtl_arena *arena, size_t *ret_entries, struct dtl_error *error);

/* The project's own word on the versions of input job (requirements.h): the --versions-from
 * files, else the set-up's `versions:` file, else the dependency files found beside the
 * input up to its repository's root. */
int dtl_cli_versions_read(const struct dtl_cli_job *job, const struct dtl_options *o,
                          const struct dtl_limits *limits, struct dtl_arena *arena,
                          struct dtl_requirements *ret, struct dtl_error *error);
/* Sets the versions the plan leaves unset that the files pin to one version (dtypelint's own
 * files and the options win over a dependency file). */
void dtl_cli_versions_pin(struct dtl_plan *plan, const struct dtl_requirements *req);

/* The versions a range allows that behave differently (issue 33, item 2): the set-up is
 * linted at the newest allowed version of every framework, then once more per other span of
 * one framework, the rest kept newest. */
enum { DTL_CLI_MAX_SPANS = 32 };
struct dtl_cli_ranges {
	struct dtl_version_span spans[DTL_FW_COUNT][DTL_CLI_MAX_SPANS];
	size_t count[DTL_FW_COUNT]; /* 0: not a range the files leave open */
	const struct dtl_requirement *req[DTL_FW_COUNT];
	/* the trainers linted when no input names one (NULL: none, a hand-written loop, first) */
	const char *trainers[3];
	size_t trainer_count; /* 0: an input names it */
};
/* Sets the versions the plan leaves unset that the files allow a range of to their newest
 * allowed span (the only one with --assume newest), noting the range in the plan; with no
 * trainer named, lists the trainers to lint with. */
int dtl_cli_versions_ranges(struct dtl_plan *plan, const struct dtl_requirements *req,
                            const struct dtl_behavior_table *behaviors, bool assume_newest,
                            struct dtl_arena *arena, struct dtl_cli_ranges *ret);
/* Where a finding fires: fires[fw] has bit k set when it fires at span k of framework fw, and
 * fires[DTL_FW_COUNT] bit k with trainer k (0: not known). Fills f->ranges for what it fires
 * at only some of. */
int dtl_cli_versions_annotate(struct dtl_finding *f, const uint32_t fires[DTL_FW_COUNT + 1],
                              const struct dtl_cli_ranges *ranges, struct dtl_arena *arena);

#endif
