/* SPDX-License-Identifier: MIT */
/*
 * dtypelint's entry point: the options parsed, the mode chosen (--explain, --list-rules,
 * --scan-kernels, or linting the inputs or the config's set-ups) and the exit status decided.
 * The lint itself is the library's (include/dtypelint/lint/lint.h); lint-inputs.c runs it per
 * input, report-output.c and fix-modes.c print what it found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli-run.h"
#include "cli-scan-kernels.h"

int dtl_cli_error(const struct dtl_error *error, int r)
{
	if (r == -ENOMEM) {
		fprintf(stderr, "dtypelint: out of memory\n");
		return DTL_EXIT_INTERNAL;
	}
	/* file names and the tokens an error quotes come from the inputs: escaped, and no line
	 * starts with "::" (a workflow command in a CI log) */
	dtl_report_put_path(stderr, error->loc.file);
	if (error->loc.line)
		fprintf(stderr, ":%u:%u", error->loc.line, error->loc.column);
	fputs(": error: ", stderr);
	dtl_report_put_escaped(stderr, error->message);
	fputc('\n', stderr);
	return DTL_EXIT_INPUT;
}

int dtl_cli_note(struct dtl_cli_run *run, int status, int r)
{
	if (status > run->status)
		run->status = status;
	return r;
}

int dtl_cli_fail(struct dtl_cli_run *run, const struct dtl_error *error, int r)
{
	return dtl_cli_note(run, dtl_cli_error(error, r), r);
}

/* The exit status of a step that failed with r after saying why: 3 when out of memory, else 2
 * (a usage, configuration or input error) */
static int status_of(int r)
{
	return r == -ENOMEM ? DTL_EXIT_INTERNAL : DTL_EXIT_INPUT;
}

static int validate_selectors(const struct dtl_vec *selectors, const char *option)
{
	const char *const *s = selectors->items;

	for (size_t i = 0; i < selectors->count; i++)
		if (!dtl_lint_selector_known(s[i])) {
			fprintf(stderr, "dtypelint: %s: '%s' names no rule (see --list-rules)\n",
			        option, s[i]);
			return -EINVAL;
		}
	return 0;
}

/* The config whose set-ups are linted when no file is named: --config, else the nearest
 * trusted .dtypelint.yaml from the working directory up */
static int setups_config(const struct dtl_options *o, struct dtl_arena *arena,
                         struct dtl_config *config, const char **ret_path)
{
	struct dtl_error error = {0};
	struct dtl_limits limits;
	const char *path = o->config_file, *ignored = NULL, *why = NULL;
	int r;

	if (!path && !o->no_config && (r = dtl_config_find(".", arena, &path, &ignored, &why)) < 0)
		return (dtl_cli_error(&error, r), r);
	if (ignored)
		dtl_cli_warn_untrusted_config(ignored, why);
	if (!path) {
		fprintf(stderr, "dtypelint: no manifest given, and no .dtypelint.yaml with setups: "
		                "here or above\nTry 'dtypelint --help'.\n");
		return -ENOENT;
	}
	dtl_limits_default(&limits);
	dtl_lint_limits_apply(&limits, &o->limits);
	if ((r = dtl_config_load(path, arena, &limits, config, &error)) < 0)
		return (dtl_cli_error(&error, r), r);
	if (config->setups.count == 0) {
		fputs("dtypelint: no manifest given, and ", stderr);
		dtl_report_put_path(stderr, path);
		fputs(" has no setups:\nTry 'dtypelint --help'.\n", stderr);
		return -ENOENT;
	}
	*ret_path = path;
	return 0;
}

/* Is every --setup name one of config's set-ups? Says which is not. */
static int setups_known(const struct dtl_options *o, const struct dtl_config *config,
                        const char *path)
{
	const struct dtl_lint_job *all = config->setups.items;
	const char *const *names = o->setups.items;

	for (size_t k = 0; k < o->setups.count; k++) {
		bool known = false;
		for (size_t j = 0; j < config->setups.count; j++)
			known = known || strcmp(all[j].setup, names[k]) == 0;
		if (known)
			continue;
		fputs("dtypelint: --setup: ", stderr);
		dtl_report_put_path(stderr, path);
		fputs(" has no set-up named '", stderr);
		dtl_report_put_escaped(stderr, names[k]);
		fputs("' (it has:", stderr);
		for (size_t j = 0; j < config->setups.count; j++) {
			fputc(' ', stderr);
			dtl_report_put_escaped(stderr, all[j].setup);
		}
		fputs(")\n", stderr);
		return -ENOENT;
	}
	return 0;
}

/* No file arguments: lint the set-ups of the config, all or those --setup names. That config
 * then applies to every set-up. Returns 0 or a negative errno after saying why. */
static int choose_setups(struct dtl_options *o, struct dtl_arena *arena)
{
	struct dtl_config config;
	const char *path = NULL;
	int r;

	if (o->plan_file || o->deepspeed_file || o->accelerate_file || o->peft_file ||
	    o->trainer_args_file || o->framework_file || o->launch_file || o->launch_argc ||
	    o->stdin_filename) {
		fprintf(
		    stderr,
		    "dtypelint: --plan, --deepspeed, --accelerate, --peft, --trainer-args, "
		    "--framework-config and --launch go with file arguments; a set-up names its "
		    "own files in the config's setups:\n");
		return -EINVAL;
	}
	if ((r = setups_config(o, arena, &config, &path)) < 0 ||
	    (r = setups_known(o, &config, path)) < 0)
		return r;
	const struct dtl_lint_job *all = config.setups.items;
	const char *const *names = o->setups.items;
	struct dtl_lint_job *jobs = dtl_arena_calloc(arena, config.setups.count, sizeof(*jobs));
	const char **inputs = dtl_arena_calloc(arena, config.setups.count, sizeof(*inputs));
	size_t n = 0;
	if (!jobs || !inputs)
		return (dtl_cli_error(NULL, -ENOMEM), -ENOMEM);
	for (size_t j = 0; j < config.setups.count; j++) {
		bool picked = o->setups.count == 0;
		for (size_t k = 0; k < o->setups.count; k++)
			picked = picked || strcmp(all[j].setup, names[k]) == 0;
		if (!picked)
			continue;
		jobs[n] = all[j];
		inputs[n++] = all[j].input;
	}
	o->jobs = jobs;
	o->inputs = inputs;
	o->input_count = n;
	o->config_file = path;
	o->no_config = false;
	return 0;
}

/* What a run checks before it reads an input: no output is a file named as an input, one
 * manifest for --export, rule selectors that name rules */
static int check_run(const struct dtl_options *o)
{
	if (dtl_cli_outputs_not_inputs(o) < 0)
		return -EEXIST;
	if (o->export_file && o->input_count > 1) {
		/* one file holds one manifest: writing each in turn would keep only the last */
		fprintf(stderr, "dtypelint: --export writes one manifest; %zu inputs given\n",
		        o->input_count);
		return -EINVAL;
	}
	if (validate_selectors(&o->select, "--select") < 0 ||
	    validate_selectors(&o->extend_select, "--extend-select") < 0 ||
	    validate_selectors(&o->ignore, "--ignore") < 0)
		return -EINVAL;
	return 0;
}

/* --baseline: the findings it holds removed (and its stale entries said); how many */
static int apply_baseline(struct dtl_cli_run *run, size_t *ret_baselined)
{
	const struct dtl_options *o = run->o;
	struct dtl_error error = {0};
	struct dtl_baseline baseline;
	struct dtl_limits limits;
	int r;

	dtl_limits_default(&limits);
	dtl_lint_limits_apply(&limits, &o->limits);
	r = dtl_baseline_load(o->baseline, run->arena, &limits, &baseline, &error);
	if (r < 0)
		return dtl_cli_fail(run, &error, r);
	*ret_baselined =
	    dtl_baseline_filter(&baseline, run->inputs, run->findings, o->input_count, run->arena);
	dtl_baseline_report_stale(&baseline, stderr);
	return 0;
}

/* The exit status of a run whose report was written. */
static int exit_status(const struct dtl_cli_run *run)
{
	const struct dtl_options *o = run->o;

	/* an input that was not read was not checked: no option makes that a pass */
	if (run->input_failed)
		return DTL_EXIT_INPUT;
	if (o->exit_zero)
		return DTL_EXIT_CLEAN;
	for (size_t i = 0; i < o->input_count; i++) {
		const struct dtl_finding *f = run->findings[i]->items.items;
		for (size_t k = 0; k < run->findings[i]->items.count; k++)
			if (f[k].severity >= run->results[i].fail_on)
				return DTL_EXIT_FINDINGS;
	}
	return DTL_EXIT_CLEAN;
}

/* The report after the lint, its summary on standard error; the exit status */
static int report(struct dtl_cli_run *run)
{
	const struct dtl_options *o = run->o;
	struct dtl_report_counts counts;
	size_t baselined = 0;

	if (o->baseline && apply_baseline(run, &baselined) < 0)
		return run->status;
	if (dtl_cli_emit_report(run) < 0)
		return run->status;
	if (o->show_plan)
		return DTL_EXIT_CLEAN;
	if (!o->quiet) {
		/* what the verdict assumed, beside the summary: problem matchers and piped
		 * output see neither */
		dtl_report_count(run->inputs, o->input_count, &counts);
		dtl_report_versions_line(stderr, run->inputs, o->input_count);
		dtl_cli_print_summary(o, &counts, run, baselined);
	}
	return exit_status(run);
}

/* Replaces the behaviour table's newest known versions by the snapshot file that
 * DTYPELINT_NEWEST_KNOWN names, if set: a test-only hook (HACKING.md, "Goldens and the newest
 * known versions") that keeps golden outputs still when rules/versions.yaml adds a release. */
static int pin_newest(struct dtl_behavior_table *behaviors, struct dtl_arena *arena,
                      struct dtl_error *error)
{
	const char *pin = getenv("DTYPELINT_NEWEST_KNOWN");
	struct dtl_source source;
	struct dtl_limits limits;
	int r;

	if (!pin || !*pin)
		return 0;
	dtl_limits_default(&limits);
	if ((r = dtl_source_read(&source, pin, &limits, error)) < 0)
		return r;
	r = dtl_behavior_table_pin_newest(behaviors, &source, arena, error);
	dtl_source_fini(&source);
	return r;
}

/* Lints the inputs, then prints what the mode asks for; the exit status */
static int run_linting(const struct dtl_options *o, struct dtl_arena *arena,
                       const struct dtl_op_oracle *ops)
{
	struct dtl_behavior_table *behaviors = dtl_arena_alloc(arena, sizeof(*behaviors));
	struct dtl_cli_run run = {.o = o, .arena = arena};
	struct dtl_error error = {0};
	int r;

	if (!behaviors)
		return dtl_cli_error(&error, -ENOMEM);
	if (check_run(o) < 0)
		return DTL_EXIT_INPUT;
	if ((r = dtl_behavior_table_load(behaviors, arena, &error)) < 0)
		return (dtl_cli_error(&error, r), DTL_EXIT_INTERNAL);
	if ((r = pin_newest(behaviors, arena, &error)) < 0)
		return dtl_cli_error(&error, r);
	if (dtl_cli_lint_inputs(&run, behaviors, ops) < 0)
		return run.status;
	if ((r = dtl_cli_outputs_not_read(o, &error)) < 0)
		return dtl_cli_error(&error, r);
	if (o->fix_plan || o->wrap_plan) {
		dtl_cli_fix_modes(&run);
		return run.status;
	}
	if (o->write_baseline)
		return dtl_cli_write_baseline(&run) < 0 ? run.status : DTL_EXIT_CLEAN;
	return report(&run);
}

/* --scan-kernels: the contracts of the kernels under the folders, printed */
static int scan_kernels(const struct dtl_options *o, struct dtl_arena *arena)
{
	struct dtl_error error = {0};
	struct dtl_op_oracle unused;
	void *kernels = NULL;
	int r;

	r = dtl_cli_kernels_scan(o->scan_kernels.items, o->scan_kernels.count,
	                         isatty(STDERR_FILENO), o->scan_budget_s, arena, &unused, &kernels,
	                         &error);
	if (r < 0)
		return dtl_cli_error(&error, r);
	r = dtl_cli_kernels_print(stdout, kernels, o->format == DTL_FORMAT_JSON, &error);
	dtl_cli_kernels_fini(kernels);
	return r < 0 ? dtl_cli_error(&error, r) : DTL_EXIT_CLEAN;
}

/* --explain RULE */
static int explain(const struct dtl_options *o)
{
	int r = dtl_cli_explain(stdout, o->explain);

	if (r == -ENOENT) {
		fprintf(stderr, "dtypelint: --explain: '%s' names no rule (see --list-rules)\n",
		        o->explain);
		return DTL_EXIT_INPUT;
	}
	return r < 0 ? DTL_EXIT_INTERNAL : DTL_EXIT_CLEAN;
}

/* The mode the options ask for; the exit status */
static int run(struct dtl_options *o, struct dtl_arena *arena)
{
	struct dtl_error error = {0};
	int r;

	if (o->explain)
		return explain(o);
	if (o->list_rules)
		return dtl_cli_list_rules(stdout, o->format) < 0 ? DTL_EXIT_INTERNAL
		                                                 : DTL_EXIT_CLEAN;
	if (o->scan_kernels.count)
		return scan_kernels(o, arena);
	if (o->input_count == 0 && (r = choose_setups(o, arena)) < 0)
		return status_of(r);
	struct dtl_op_oracle ops_storage, *ops = NULL;
	void *kernels = NULL;
	if (o->kernels.count) {
		r = dtl_cli_kernels_scan(o->kernels.items, o->kernels.count, isatty(STDERR_FILENO),
		                         o->scan_budget_s, arena, &ops_storage, &kernels, &error);
		if (r < 0)
			return dtl_cli_error(&error, r);
		ops = &ops_storage;
	}
	r = run_linting(o, arena, ops);
	dtl_cli_kernels_fini(kernels);
	return r;
}

int main(int argc, char **argv)
{
	struct dtl_arena arena;
	struct dtl_options options;
	int r, status;

	dtl_arena_init(&arena);
	r = dtl_cli_parse(argc, argv, &arena, &options);
	if (r != 0) {
		dtl_arena_fini(&arena);
		return r > 0 ? DTL_EXIT_CLEAN : r == -ENOMEM ? DTL_EXIT_INTERNAL : DTL_EXIT_INPUT;
	}
	status = run(&options, &arena);
	dtl_arena_fini(&arena);
	dtl_read_log_clear();
	return status;
}
