/* SPDX-License-Identifier: MIT */
/*
 * One linting run of the command line, between main.c's option handling and the printing: the
 * inputs linted through the lint library (lint-inputs.c), then the report (report-output.c) or
 * the fix and wrap plans (fix-modes.c). Each step returns 0 or a negative errno after saying
 * why on standard error, and notes the exit status its outcome calls for in the run.
 */
#ifndef DTL_CLI_RUN_H
#define DTL_CLI_RUN_H

#include "cli.h"

enum {
	DTL_EXIT_CLEAN = 0,
	DTL_EXIT_FINDINGS = 1,
	DTL_EXIT_INPUT = 2,
	DTL_EXIT_INTERNAL = 3,
};

struct dtl_cli_run {
	const struct dtl_options *o;
	struct dtl_arena *arena;
	struct dtl_lint_options lint; /* the options, as the lint library takes them */
	/* per input */
	struct dtl_report_input *inputs;
	struct dtl_findings **findings;
	struct dtl_lint_result *results;
	struct dtl_lint_settings *settings; /* to lint it again after --write */
	size_t suppressed;
	size_t input_warnings; /* DT003 lines printed: the summary counts them */
	bool input_failed;     /* an input could not be read: its DT001 finding stands in */
	bool export_failed;    /* the --export write failed (not a refusal): exit 3 */
	int status;            /* the worst exit status noted so far */
};

/* Notes status in run (the worst wins); returns r. */
int dtl_cli_note(struct dtl_cli_run *run, int status, int r);
/* Says error on standard error ("out of memory" for -ENOMEM); returns the exit status it calls
 * for: 3 for -ENOMEM, else 2. */
int dtl_cli_error(const struct dtl_error *error, int r);
/* dtl_cli_error(), its status noted in run; returns r. */
int dtl_cli_fail(struct dtl_cli_run *run, const struct dtl_error *error, int r);
/* A .dtypelint.yaml others can write, skipped (cli.h, dtl_config_find) */
void dtl_cli_warn_untrusted_config(const char *path, const char *why);

/* Refuses an output (-o, --export, --write-baseline) that is one of the files named (device and
 * inode), before anything is read. Returns 0 or -EEXIST after saying so. */
int dtl_cli_outputs_not_inputs(const struct dtl_options *o);
/* Lints every input (lint-inputs.c). An unreadable input becomes a DT001 finding and the others
 * go on, except in the modes that act on the findings (fixes, baselines, plans), which stop at
 * it. Returns 0 or a negative errno, its status noted. */
int dtl_cli_lint_inputs(struct dtl_cli_run *run, const struct dtl_behavior_table *behaviors,
                        const struct dtl_op_oracle *ops);
/* The importers' warnings (near-miss keys, requests a checkpoint overrides; NULL: none) on
 * standard error, gcc-style with their rule's [ID name] as findings have, so that problem
 * matchers take them. Returns how many it printed. */
size_t dtl_cli_put_input_warnings(const struct dtl_vec *warnings);
/* No output replaces a file this run read (model folders' members, files named by files,
 * kernel sources). Returns 0 or -EEXIST with error set. */
int dtl_cli_outputs_not_read(const struct dtl_options *o, struct dtl_error *error);

/* --fix-plan and --wrap-plan, printed instead of the report (fix-modes.c). */
int dtl_cli_fix_modes(struct dtl_cli_run *run);

/* --write-baseline: every finding as a baseline entry, instead of a report. */
int dtl_cli_write_baseline(struct dtl_cli_run *run);
/* The report, its --memory table and --trace, to standard output or -o FILE (written whole or
 * not at all). */
int dtl_cli_emit_report(struct dtl_cli_run *run);
/* "Found N problems ..." on standard error, with the run's input warnings counted, so that
 * "No problems found" never stands alone under a warning. */
void dtl_cli_print_summary(const struct dtl_options *o, const struct dtl_report_counts *counts,
                           const struct dtl_cli_run *run, size_t baselined);

#endif
