/* SPDX-License-Identifier: MIT */
/* The command line: options, config files, baselines; the lint itself is the lint library's
 * (include/dtypelint/lint/lint.h). Only src/cli/ prints. */
#ifndef DTL_CLI_H
#define DTL_CLI_H

#include <stdio.h>

#include "dtypelint/cli/dtypelint.h"
#include "dtypelint/model/requirements.h"

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

/* The option name of limit i without dashes ("max-file-size"), its help text, its maximum. */
const char *dtl_cli_limit_name(int i);
const char *dtl_cli_limit_help(int i);
uint64_t dtl_cli_limit_max(int i);
/* Parses "N" or "N" with a K, M or G suffix (powers of 1024) into a limit value in
 * [1, its maximum]; returns -EINVAL or -ERANGE. */
int dtl_cli_limit_parse(int i, const char *text, uint64_t *ret_value);
uint64_t dtl_cli_limit_get(const struct dtl_limits *limits, int i);
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
	struct dtl_vec trace;      /* --trace globs, const char * */
	struct dtl_vec setups;     /* --setup names, const char * */
	struct dtl_lint_job *jobs; /* one per input: what it is composed from */
	struct dtl_limit_settings limits;
	bool list_rules;
	const char *explain;
	/* inputs composed with the manifest (include/dtypelint/model/compose.h) */
	const char *deepspeed_file, *accelerate_file, *peft_file, *trainer_args_file;
	const char *framework_file;         /* --framework-config */
	struct dtl_vec framework_overrides; /* --framework-override KEY=VALUE, const char * */
	const char *launch_file;
	const char *const *launch_argv; /* --launch -- CMD...: the words after "--" */
	size_t launch_argc;
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

/* Reads the baseline file at path (--baseline: a document of entries) into *ret_baseline,
 * strings and index in arena; 0, or a negative errno with error filled (a directory, a bad
 * document). */
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

#endif
