/* SPDX-License-Identifier: MIT */
/*
 * The inputs of one run linted through the lint library (include/dtypelint/lint/lint.h): for each,
 * the config that applies found and loaded, standard input read, the settings made and the
 * lint run; what it says on standard error (the importers' warnings, untrusted configs,
 * errors) said here.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli-run.h"
#include "dtypelint/model/import.h"

/* Config files read so far, by path: inputs in one directory share one. */
struct config_cache {
	struct dtl_vec paths;   /* const char * */
	struct dtl_vec configs; /* struct dtl_config * */
	struct dtl_vec ignored; /* const char *: untrusted configs already warned about */
};

void dtl_cli_warn_untrusted_config(const char *path, const char *why)
{
	fputs("dtypelint: warning: ignoring ", stderr);
	dtl_report_put_path(stderr, path);
	fprintf(stderr, ": %s (pass it with --config to use it)\n", why);
}

/* Was path warned about already? Remembers it if not. */
static bool warned_before(struct config_cache *cache, const char *path, struct dtl_arena *arena)
{
	const char *const *seen = cache->ignored.items;
	for (size_t i = 0; i < cache->ignored.count; i++)
		if (strcmp(seen[i], path) == 0)
			return true;
	const char **slot = dtl_vec_push(&cache->ignored, arena, sizeof(*slot));
	if (slot)
		*slot = path;
	return false;
}

static int load_config(const char *path, const struct dtl_options *o, struct config_cache *cache,
                       struct dtl_arena *arena, const struct dtl_config **ret,
                       struct dtl_error *error)
{
	const char *const *paths = cache->paths.items;
	struct dtl_config **configs = cache->configs.items;
	struct dtl_limits limits;
	int r;

	for (size_t i = 0; i < cache->paths.count; i++)
		if (strcmp(paths[i], path) == 0) {
			*ret = configs[i];
			return 0;
		}
	struct dtl_config *c = dtl_arena_alloc(arena, sizeof(*c));
	const char **path_slot = dtl_vec_push(&cache->paths, arena, sizeof(*path_slot));
	struct dtl_config **config_slot =
	    dtl_vec_push(&cache->configs, arena, sizeof(*config_slot));
	if (!c || !path_slot || !config_slot)
		return -ENOMEM;
	/* a config file is read within the limits the options set */
	dtl_limits_default(&limits);
	dtl_lint_limits_apply(&limits, &o->limits);
	r = dtl_config_load(path, arena, &limits, c, error);
	if (r < 0)
		return r;
	*path_slot = path;
	*config_slot = c;
	*ret = c;
	return 0;
}

/* The config input is linted with: --config, else the nearest trusted one (none with
 * --no-config), cached */
static int config_for(const char *input, const struct dtl_options *o, struct config_cache *cache,
                      struct dtl_arena *arena, const struct dtl_config **ret,
                      struct dtl_error *error)
{
	const char *path = o->config_file;
	int r;

	*ret = NULL;
	if (o->no_config)
		return 0;
	if (!path) {
		const char *ignored, *why;
		r = dtl_config_find(input, arena, &path, &ignored, &why);
		if (r < 0)
			return r;
		if (ignored && !warned_before(cache, ignored, arena))
			dtl_cli_warn_untrusted_config(ignored, why);
	}
	return path ? load_config(path, o, cache, arena, ret, error) : 0;
}

/* Standard input ("-"), read within the input's limits, its text kept in the arena (the
 * manifest and the inline-suppression scan both read it) and named --stdin-filename. */
static int read_stdin(const struct dtl_options *o, struct dtl_lint_settings *s,
                      struct dtl_arena *arena, struct dtl_error *error)
{
	struct dtl_source raw, *kept = dtl_arena_alloc(arena, sizeof(*kept));
	const char *name = o->stdin_filename ? o->stdin_filename : "-";
	int r;

	if (!kept)
		return -ENOMEM;
	if ((r = dtl_source_read(&raw, "-", &s->limits, error)) < 0) {
		if (error->loc.file && strcmp(error->loc.file, "-") == 0) {
			struct dtl_error named;
			dtl_error_copy(&named, error);
			named.loc.file = name;
			dtl_error_copy(error, &named);
		}
		return r;
	}
	kept->path = dtl_arena_strndup(arena, name, strlen(name));
	kept->data = dtl_arena_strndup(arena, raw.data, raw.size);
	kept->size = raw.size;
	dtl_source_fini(&raw);
	if (!kept->path || !kept->data)
		return -ENOMEM;
	s->stdin_source = kept;
	return 0;
}

int dtl_cli_outputs_not_read(const struct dtl_options *o, struct dtl_error *error)
{
	const char *outputs[] = {o->output, o->export_file, o->write_baseline};
	struct stat st;

	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		const char *path = outputs[i];
		if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0 ||
		    !S_ISREG(st.st_mode) || !dtl_read_log_has(st.st_dev, st.st_ino))
			continue;
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(
		    error, loc, -EEXIST,
		    "refusing to write: this run reads the file (one of the inputs, "
		    "a file in a model folder, a file another names, or a kernel "
		    "source)");
	}
	return 0;
}

/* Never overwrite an input: an output (-o, --export, --write-baseline) that is the same file
 * (device and inode) as one of the files read is refused, before anything is read. */
static int output_is_input(const struct dtl_options *o, const char *output)
{
	const char *named[] = {o->plan_file,   o->deepspeed_file,    o->accelerate_file,
	                       o->peft_file,   o->trainer_args_file, o->framework_file,
	                       o->launch_file, o->config_file,       o->baseline};
	struct stat out, in;

	if (!output || strcmp(output, "-") == 0 || stat(output, &out) != 0 || !S_ISREG(out.st_mode))
		return 0;
	size_t per_job = 7, jobs = o->input_count * per_job;
	for (size_t i = 0; i < jobs + sizeof(named) / sizeof(named[0]); i++) {
		const struct dtl_lint_job *job = &o->jobs[i / per_job];
		const char *of_job[] = {job->input,          job->plan_file,
		                        job->deepspeed_file, job->accelerate_file,
		                        job->peft_file,      job->trainer_args_file,
		                        job->launch_file};
		const char *path = i < jobs ? of_job[i % per_job] : named[i - jobs];
		if (!path || stat(path, &in) != 0 || in.st_dev != out.st_dev ||
		    in.st_ino != out.st_ino)
			continue;
		fputs("dtypelint: refusing to write ", stderr);
		dtl_report_put_escaped(stderr, output);
		fputs(": it is one of the inputs (", stderr);
		dtl_report_put_escaped(stderr, path);
		fputs(")\n", stderr);
		return -EEXIST;
	}
	return 0;
}

int dtl_cli_outputs_not_inputs(const struct dtl_options *o)
{
	if (output_is_input(o, o->output) < 0 || output_is_input(o, o->export_file) < 0 ||
	    output_is_input(o, o->write_baseline) < 0)
		return -EEXIST;
	return 0;
}

/* --export: the manifest with the plan the simulation uses, so that linting it gives the
 * same; written once the plan is resolved (the lint library's planned hook) */
static int export_planned(const struct dtl_lint_options *lint, const struct dtl_manifest *manifest,
                          const struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_cli_run *run = lint->planned_data;
	struct dtl_manifest exported = *manifest;
	int r;

	exported.plan = *plan;
	if ((r = dtl_cli_outputs_not_read(run->o, error)) < 0)
		return r;
	r = dtl_export_manifest(run->o->export_file, &exported, error);
	/* a refusal (a hard-linked file) is the input's fault; the rest is ours */
	if (r < 0 && r != -EPERM)
		run->export_failed = true;
	return r;
}

/* The options as the lint library takes them */
static void lint_options(struct dtl_cli_run *run, const struct dtl_behavior_table *behaviors,
                         const struct dtl_op_oracle *ops)
{
	const struct dtl_options *o = run->o;

	run->lint = (struct dtl_lint_options){.behaviors = behaviors,
	                                      .ops = ops,
	                                      .select = o->select,
	                                      .extend_select = o->extend_select,
	                                      .ignore = o->ignore,
	                                      .select_given = o->select_given,
	                                      .fail_on = o->fail_on,
	                                      .fail_on_given = o->fail_on_given,
	                                      .limits = o->limits,
	                                      .overrides = o->overrides,
	                                      .versions_from = o->versions_from,
	                                      .assume_newest = o->assume_newest,
	                                      .stdin_filename = o->stdin_filename,
	                                      .config_file = o->config_file,
	                                      .memory = o->memory,
	                                      .planned = o->export_file ? export_planned : NULL,
	                                      .planned_data = run};
}

size_t dtl_cli_put_input_warnings(const struct dtl_vec *warnings)
{
	const struct dtl_input_warning *w = warnings ? warnings->items : NULL;
	size_t i = 0;

	for (; w && i < warnings->count; i++) {
		dtl_report_put_path(stderr, w[i].loc.file);
		fprintf(stderr, ":%u:%u: warning: ", w[i].loc.line, w[i].loc.column);
		dtl_report_put_escaped(stderr, w[i].message);
		fputs(" [DT003 input-warning]\n", stderr);
	}
	return i;
}

/* Lints input i with its settings, what the lint makes in arena, into *ret */
static int lint_input(struct dtl_cli_run *run, size_t i, struct config_cache *cache,
                      struct dtl_arena *arena, struct dtl_lint_result *ret, struct dtl_error *error)
{
	const struct dtl_options *o = run->o;
	struct dtl_lint_settings *s = &run->settings[i];
	const struct dtl_config *config;
	/* a set-up's "-" names no standard input: compose refuses it */
	bool from_stdin = !o->jobs[i].setup && strcmp(o->inputs[i], "-") == 0;
	/* standard input finds its config from the name it is given */
	const char *where = from_stdin && o->stdin_filename ? o->stdin_filename : o->inputs[i];
	int r;

	if ((r = config_for(where, o, cache, run->arena, &config, error)) < 0)
		return r;
	if ((r = dtl_lint_settings_init(s, config, &run->lint, run->arena)) < 0)
		return r;
	if (from_stdin && (r = read_stdin(o, s, run->arena, error)) < 0)
		return r;
	r = dtl_lint_run(&o->jobs[i], s, arena, ret, error);
	/* the github format's workflow commands are the warnings: on standard error too, the
	 * problem matcher action.yml registers would annotate each twice */
	if (o->format == DTL_FORMAT_GITHUB)
		run->input_warnings += ret->warnings ? ret->warnings->count : 0;
	else
		run->input_warnings += dtl_cli_put_input_warnings(ret->warnings);
	return r;
}

/* An input that could not be linted: an error that stops the run in the modes that act on the
 * findings (fixes, baselines, plans), else its DT001 finding and the run goes on */
static int input_failed(struct dtl_cli_run *run, size_t i, int r, const struct dtl_error *error)
{
	const struct dtl_options *o = run->o;

	if (run->export_failed)
		return dtl_cli_note(run, DTL_EXIT_INTERNAL, dtl_cli_fail(run, error, r));
	if (r == -ENOMEM || o->fix_plan || o->wrap_plan || o->write_baseline || o->show_plan)
		return dtl_cli_fail(run, error, r);
	if ((r = dtl_lint_input_error(o->inputs[i], error, run->arena, &run->results[i])) < 0)
		return dtl_cli_fail(run, error, r);
	run->input_failed = true;
	return 0;
}

/* Can the inputs be linted in a scratch arena each, emptied once what the report reads is kept
 * (dtl_lint_keep)? Not for the outputs that read the simulation itself, and not for one input,
 * whose copy would only add to the peak (a 20,000-tensor manifest's: 90 MB, 113 MB copied). */
static bool scratch_lint(const struct dtl_options *o)
{
	return o->input_count > 1 && !o->fix_plan && !o->wrap_plan && !o->show_plan && !o->memory &&
	       !o->trace.count && o->format != DTL_FORMAT_HTML;
}

/* Lints input i into run->results[i]: in the scratch arena when the run allows one (NULL: it
 * does not), emptied once what the report reads is kept, so that the memory of many set-ups
 * stays that of one plus their findings (issue 35, item 7) */
static int lint_kept(struct dtl_cli_run *run, size_t i, struct config_cache *cache,
                     struct dtl_arena *scratch)
{
	struct dtl_error error = {0};
	struct dtl_lint_result scratched;
	int r;

	if (!scratch) {
		r = lint_input(run, i, cache, run->arena, &run->results[i], &error);
		return r < 0 ? input_failed(run, i, r, &error) : 0;
	}
	r = lint_input(run, i, cache, scratch, &scratched, &error);
	if (r >= 0 && (r = dtl_lint_keep(&scratched, run->arena, &run->results[i])) < 0)
		r = dtl_cli_fail(run, &error, r);
	else if (r < 0)
		r = input_failed(run, i, r, &error); /* the error may point into scratch */
	dtl_arena_reset(scratch); /* its newest chunk is kept for the next input */
	return r;
}

/* Input i's report input and findings, from its lint result */
static void report_input(struct dtl_cli_run *run, size_t i)
{
	const struct dtl_lint_result *res = &run->results[i];

	run->inputs[i] = (struct dtl_report_input){.view = res->view,
	                                           .findings = res->findings,
	                                           .file = run->o->inputs[i],
	                                           .setup = run->o->jobs[i].setup,
	                                           .memory = res->memory,
	                                           .warnings = res->warnings};
	run->findings[i] = res->findings;
	run->suppressed += res->suppressed;
}

int dtl_cli_lint_inputs(struct dtl_cli_run *run, const struct dtl_behavior_table *behaviors,
                        const struct dtl_op_oracle *ops)
{
	const struct dtl_options *o = run->o;
	size_t n = o->input_count;
	struct config_cache cache = {0};
	struct dtl_error error = {0};
	int r;

	lint_options(run, behaviors, ops);
	run->inputs = dtl_arena_calloc(run->arena, n, sizeof(*run->inputs));
	run->findings = dtl_arena_calloc(run->arena, n, sizeof(*run->findings));
	run->results = dtl_arena_calloc(run->arena, n, sizeof(*run->results));
	run->settings = dtl_arena_calloc(run->arena, n, sizeof(*run->settings));
	if (!run->inputs || !run->findings || !run->results || !run->settings)
		return dtl_cli_fail(run, &error, -ENOMEM);
	struct dtl_arena scratch;
	dtl_arena_init(&scratch);
	r = 0;
	for (size_t i = 0; i < n && r >= 0; i++)
		if ((r = lint_kept(run, i, &cache, scratch_lint(o) ? &scratch : NULL)) >= 0)
			report_input(run, i);
	dtl_arena_fini(&scratch);
	return r;
}
