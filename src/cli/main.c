/* SPDX-License-Identifier: MIT */
/* dtypelint's entry point: the only place that prints diagnostics and decides the exit code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli-scan-kernels.h"
#include "dtypelint/atomic-file.h"
#include "dtypelint/compose.h"
#include "dtypelint/fix.h"
#include "dtypelint/import.h"

enum {
	EXIT_CLEAN = 0,
	EXIT_FINDINGS = 1,
	EXIT_INPUT = 2,
	EXIT_INTERNAL = 3,
};

static int print_error(const struct dtl_error *error, int code)
{
	if (code == -ENOMEM) {
		fprintf(stderr, "dtypelint: out of memory\n");
		return EXIT_INTERNAL;
	}
	/* file names and the tokens an error quotes come from the inputs: escaped, and no line
	 * starts with "::" (a workflow command in a CI log) */
	dtl_report_put_path(stderr, error->loc.file);
	if (error->loc.line)
		fprintf(stderr, ":%u:%u", error->loc.line, error->loc.column);
	fputs(": error: ", stderr);
	dtl_report_put_escaped(stderr, error->message);
	fputc('\n', stderr);
	return EXIT_INPUT;
}

/* What one input is linted with: its config (or none) merged with the options. */
struct settings {
	const struct dtl_config *config;
	struct dtl_limits limits;
	struct dtl_rule_selection selection;
	enum dtl_severity fail_on;
	const struct dtl_source *stdin_source; /* input "-", read once into the arena */
};

/* Standard input ("-"), read within the input's limits, its text kept in the arena (the
 * manifest and the inline-suppression scan both read it) and named --stdin-filename. */
static int read_stdin(const struct dtl_options *o, struct settings *s, struct dtl_arena *arena,
                      struct dtl_error *error)
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

/* Config files read so far, by path: inputs in one directory share one. */
struct config_cache {
	struct dtl_vec paths;   /* const char * */
	struct dtl_vec configs; /* struct dtl_config * */
	struct dtl_vec ignored; /* const char *: untrusted configs already warned about */
};

/* A .dtypelint.yaml others can write, skipped (cli.h, dtl_config_find) */
static void warn_untrusted_config(const char *path, const char *why)
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

static bool any_matches(const struct dtl_vec *selectors, const struct dtl_rule *rule)
{
	const char *const *s = selectors->items;

	for (size_t i = 0; i < selectors->count; i++)
		if (dtl_rule_matches(rule, s[i]))
			return true;
	return false;
}

/*
 * Rule selection in layers, as ruff does (facts/ecosystem-and-style.md §1.2): all rules, then
 * the config's select (a new base), extend-select and ignore, then the options' --select (a
 * new base), --extend-select and --ignore. The result is a list of rule ids.
 */
static int build_selection(const struct dtl_config *c, const struct dtl_options *o,
                           struct dtl_arena *arena, struct dtl_rule_selection *ret)
{
	static const char *const none[] = {"ALL"};
	size_t n, count = 0;
	const struct dtl_rule *const *rules = dtl_rules_all(&n);
	const char **ids = dtl_arena_calloc(arena, n ? n : 1, sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool on = true;
		if (c) {
			if (c->has_select)
				on = any_matches(&c->select, rules[i]);
			if (any_matches(&c->extend_select, rules[i]))
				on = true;
			if (any_matches(&c->ignore, rules[i]))
				on = false;
		}
		if (o->select_given)
			on = any_matches(&o->select, rules[i]);
		if (any_matches(&o->extend_select, rules[i]))
			on = true;
		if (any_matches(&o->ignore, rules[i]))
			on = false;
		if (on)
			ids[count++] = rules[i]->id;
	}
	*ret = (struct dtl_rule_selection){0};
	if (count == 0) {
		ret->ignore = none;
		ret->ignore_count = 1;
	} else if (count < n) {
		ret->select = ids;
		ret->select_count = count;
	}
	return 0;
}

static int validate_selectors(const struct dtl_vec *selectors, const char *option)
{
	const char *const *s = selectors->items;

	for (size_t i = 0; i < selectors->count; i++)
		if (!dtl_cli_selector_known(s[i])) {
			fprintf(stderr, "dtypelint: %s: '%s' names no rule (see --list-rules)\n",
			        option, s[i]);
			return -EINVAL;
		}
	return 0;
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
	dtl_cli_limits_apply(&limits, &o->limits);
	r = dtl_config_load(path, arena, &limits, c, error);
	if (r < 0)
		return r;
	*path_slot = path;
	*config_slot = c;
	*ret = c;
	return 0;
}

static int settings_for(const char *input, const struct dtl_options *o, struct config_cache *cache,
                        struct dtl_arena *arena, struct settings *s, struct dtl_error *error)
{
	const char *path = o->config_file;
	int r;

	memset(s, 0, sizeof(*s));
	if (!o->no_config && !path) {
		const char *ignored, *why;
		r = dtl_config_find(input, arena, &path, &ignored, &why);
		if (r < 0)
			return r;
		if (ignored && !warned_before(cache, ignored, arena))
			warn_untrusted_config(ignored, why);
	}
	if (!o->no_config && path &&
	    (r = load_config(path, o, cache, arena, &s->config, error)) < 0)
		return r;
	/* limits: the defaults, then the config's, then the options' */
	dtl_limits_default(&s->limits);
	if (s->config)
		dtl_cli_limits_apply(&s->limits, &s->config->limits);
	dtl_cli_limits_apply(&s->limits, &o->limits);
	s->fail_on = o->fail_on_given                      ? o->fail_on
	             : s->config && s->config->has_fail_on ? s->config->fail_on
	                                                   : DTL_SEVERITY_WARNING;
	return build_selection(s->config, o, arena, &s->selection);
}

/* The config's plan values fill what the manifest's plan leaves unset (DESIGN §3 precedence:
 * config < manifest < --plan file < options). */
static void plan_defaults(struct dtl_plan *plan, const struct dtl_plan *d)
{
	if (plan->strategy == DTL_STRATEGY_UNSET && d->strategy != DTL_STRATEGY_UNSET) {
		plan->strategy = d->strategy;
		plan->strategy_loc = d->strategy_loc;
	}
	if (plan->precision == DTL_PRECISION_UNSET && d->precision != DTL_PRECISION_UNSET) {
		plan->precision = d->precision;
		plan->precision_loc = d->precision_loc;
	}
	if (!plan->world_size && d->world_size) {
		plan->world_size = d->world_size;
		plan->world_size_loc = d->world_size_loc;
	}
	for (int fw = 0; fw < DTL_FW_COUNT; fw++)
		if (!plan->versions[fw].set && d->versions[fw].set) {
			plan->versions[fw] = d->versions[fw];
			plan->version_locs[fw] = d->version_locs[fw];
		}
	if (!plan->file) {
		plan->file = d->file;
		plan->loc = d->loc;
	}
}

/* The most specific override of a rule's severity: a name or full id beats a prefix, which
 * beats ALL; among equals the later one. */
static void apply_overrides(const struct dtl_config *c, struct dtl_findings *findings)
{
	const struct dtl_severity_override *o = c->overrides.items;
	struct dtl_finding *f = findings->items.items;

	for (size_t k = 0; k < findings->items.count; k++) {
		size_t best = 0;
		for (size_t i = 0; i < c->overrides.count; i++) {
			if (!dtl_rule_matches(f[k].rule, o[i].selector))
				continue;
			size_t weight = strcmp(o[i].selector, "ALL") == 0 ? 1
			                : strcmp(o[i].selector, f[k].rule->name) == 0
			                    ? 1000
			                    : 1 + strlen(o[i].selector);
			if (weight >= best) {
				best = weight;
				f[k].severity = o[i].severity;
			}
		}
	}
}

/* What one input became: kept for --fix-plan, which re-simulates from it. */
struct linted {
	struct dtl_manifest *manifest;
	struct dtl_plan *plan;
	struct dtl_rule_selection selection; /* a copy: the caller's settings are per-input */
	struct settings settings;            /* to lint it again after --write */
	bool write_failed;                   /* --export could not be written: exit 3 */
};

/* The simulation behind a report input (NULL: the input could not be read). */
static const struct dtl_sim *sim_of(const struct dtl_report_input *input)
{
	return input->view ? input->view->sim : NULL;
}

/* No output replaces a file this run read (source.h, dtl_read_log_has): a model folder's
 * shards, config.json and index, a file named by another file, a kernel source. Asked before
 * each write, once the files it could replace are read. */
static int outputs_not_read(const struct dtl_options *o, struct dtl_error *error)
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

/* Is the rule named by an ignore entry, of the options or of the config? (--select leaves
 * DT003 on: it is about the inputs, not the set-up) */
static bool ignored(const char *id, const struct dtl_options *o, const struct dtl_config *c)
{
	const struct dtl_rule *rule = dtl_rule_find(id);

	return rule && (any_matches(&o->ignore, rule) || (c && any_matches(&c->ignore, rule)));
}

/* The importers' warnings (near-miss keys, requests a checkpoint overrides) on standard
 * error, gcc-style with their rule's [ID name] as findings have, so that problem matchers
 * take them */
static void put_input_warnings(const struct dtl_manifest *manifest, const struct dtl_options *o,
                               const struct dtl_config *c)
{
	const struct dtl_input_warning *w = manifest->warnings.items;

	if (ignored("DT003", o, c))
		return;
	for (size_t i = 0; i < manifest->warnings.count; i++) {
		dtl_report_put_path(stderr, w[i].loc.file);
		fprintf(stderr, ":%u:%u: warning: ", w[i].loc.line, w[i].loc.column);
		dtl_report_put_escaped(stderr, w[i].message);
		fputs(" [DT003 input-warning]\n", stderr);
	}
}

/* One simulation of a composed set-up at one plan, judged: its findings after suppressions and
 * the config's ignores and severities, sorted, their views resolved. */
struct judged {
	struct dtl_sim *sim;
	struct dtl_findings *findings;
	struct dtl_input_view *view;
	size_t suppressed;
};

static int judge(const struct dtl_cli_job *job, const struct settings *s,
                 const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                 const struct dtl_behavior_table *behaviors, const struct dtl_op_oracle *ops,
                 struct dtl_arena *arena, struct judged *ret, struct dtl_error *error)
{
	struct dtl_sim *sim = dtl_arena_alloc(arena, sizeof(*sim));
	struct dtl_findings *findings = dtl_arena_alloc(arena, sizeof(*findings));
	struct dtl_input_view *view = dtl_arena_alloc(arena, sizeof(*view));
	size_t suppressed = 0;
	int r;

	if (!sim || !findings || !view)
		return -ENOMEM;
	r = dtl_sim_run(sim, manifest, plan, behaviors, arena, error);
	if (r < 0)
		return r;
	r = dtl_rules_run(sim, &s->selection, ops, findings, error);
	if (r < 0)
		return r;
	r = dtl_cli_suppress(sim, findings, &s->selection, &s->limits, s->stdin_source, arena,
	                     &suppressed, error);
	if (r < 0)
		return r;
	if (s->config) {
		struct dtl_finding *f = findings->items.items;
		size_t kept = 0;
		for (size_t k = 0; k < findings->items.count; k++) {
			if (dtl_config_file_ignored(s->config, job->input, f[k].rule))
				suppressed++;
			else
				f[kept++] = f[k];
		}
		findings->items.count = kept;
		apply_overrides(s->config, findings);
	}
	dtl_findings_sort(findings);
	if (dtl_input_view_init(view, sim, findings, arena) < 0)
		return -ENOMEM;
	*ret = (struct judged){sim, findings, view, suppressed};
	return 0;
}

/* The identity of a finding across simulations of one set-up: rule, place, group and tensor
 * (lengths before the names, so that no name can make two keys equal) */
static const char *finding_key(const struct dtl_finding *f, struct dtl_arena *arena, size_t *len)
{
	const char *file = f->loc.file ? f->loc.file : "";
	const char *group = f->view.group && f->view.group->name ? f->view.group->name : "";
	char *key = dtl_arena_sprintf(
	    arena, "%s|%zu:%s|%u|%u|%u|%zu:%s", f->rule->id, strlen(file), file, f->loc.line,
	    f->loc.column, f->tensor_count ? f->tensors[0] : UINT32_MAX, strlen(group), group);
	*len = key ? strlen(key) : 0;
	return key;
}

struct fires {
	uint32_t mask[DTL_FW_COUNT + 1]; /* per framework, then the trainer */
};

/* The set-up's findings so far, by identity, with where each fired */
struct merged {
	struct dtl_findings *all;
	struct dtl_vec fires; /* struct fires, parallel to all */
	struct dtl_strmap index;
};

/* Finds f among the merged findings, adding it when new (with its own view) or when it is
 * the baseline run's (whose findings are all kept, even two alike); its index */
static int64_t merged_slot(struct merged *mg, const struct dtl_finding *f, bool base,
                           struct dtl_arena *arena)
{
	size_t len;
	const char *key = finding_key(f, arena, &len);
	if (!key)
		return -ENOMEM;
	int64_t at = dtl_strmap_put(&mg->index, key, len, (int64_t)mg->all->items.count);
	if (at < 0 || (!base && (size_t)at < mg->all->items.count))
		return at;
	at = (int64_t)mg->all->items.count;
	struct dtl_finding *slot = dtl_vec_push(&mg->all->items, arena, sizeof(*slot));
	struct fires *m = dtl_vec_push(&mg->fires, arena, sizeof(*m));
	if (!slot || !m)
		return -ENOMEM;
	*slot = *f;
	memset(m, 0, sizeof(*m));
	return at;
}

/* Adds the findings of the simulation at span k of dimension d (a framework, or the trainer:
 * DTL_FW_COUNT) to the set-up's: a finding seen before gets the span, a new one is added
 * (DT002's unused suppressions are the baseline run's alone). */
static int merge_variant(struct merged *mg, const struct dtl_findings *got, int d, size_t k,
                         struct dtl_arena *arena)
{
	const struct dtl_finding *g = got->items.items;

	for (size_t i = 0; i < got->items.count; i++) {
		if (strcmp(g[i].rule->id, "DT002") == 0)
			continue;
		int64_t at = merged_slot(mg, &g[i], false, arena);
		if (at < 0)
			return (int)at;
		((struct fires *)mg->fires.items)[at].mask[d] |= 1u << k;
	}
	return 0;
}

/* Lints once more with one dimension changed: d a framework (its span k) or the trainer */
static int run_variant(const struct dtl_cli_job *job, const struct settings *s,
                       const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                       const struct dtl_cli_ranges *ranges, int d, size_t k,
                       const struct dtl_behavior_table *behaviors, const struct dtl_op_oracle *ops,
                       struct dtl_arena *arena, struct merged *mg, struct dtl_error *error)
{
	struct dtl_plan *varied = dtl_arena_alloc(arena, sizeof(*varied));
	struct judged got;
	int r;

	if (!varied)
		return -ENOMEM;
	*varied = *plan;
	if (d < DTL_FW_COUNT)
		varied->versions[d] = ranges->spans[d][k].rep;
	else
		varied->trainer = ranges->trainers[k];
	r = judge(job, s, manifest, varied, behaviors, ops, arena, &got, error);
	return r < 0 ? r : merge_variant(mg, got.findings, d, k, arena);
}

/* Lints the set-up once more per other span of each version range (the newest of the others
 * kept) and per other trainer when no input names one, and says of each finding where it
 * fires: the verdict follows the worst version and trainer allowed (issue 33, items 2, 3). */
static int vary_versions(const struct dtl_cli_job *job, const struct settings *s,
                         const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                         const struct dtl_cli_ranges *ranges,
                         const struct dtl_behavior_table *behaviors,
                         const struct dtl_op_oracle *ops, struct dtl_arena *arena,
                         struct dtl_findings *findings, struct dtl_error *error)
{
	struct dtl_findings base = *findings;
	struct merged mg = {.all = findings};
	const struct dtl_finding *b = base.items.items;
	int r = 0;

	findings->items = (struct dtl_vec){0};
	dtl_strmap_init(&mg.index, arena);
	for (size_t i = 0; i < base.items.count; i++) {
		int64_t at = merged_slot(&mg, &b[i], true, arena);
		if (at < 0)
			return (int)at;
		struct fires *m = &((struct fires *)mg.fires.items)[at];
		for (int fw = 0; fw < DTL_FW_COUNT; fw++)
			m->mask[fw] = ranges->count[fw] > 1 ? 1u << (ranges->count[fw] - 1) : 0;
		m->mask[DTL_FW_COUNT] = ranges->trainer_count > 1 ? 1 : 0; /* none, the first */
	}
	for (int fw = 0; fw < DTL_FW_COUNT && r == 0; fw++)
		for (size_t k = 0; k + 1 < ranges->count[fw] && r == 0; k++)
			r = run_variant(job, s, manifest, plan, ranges, fw, k, behaviors, ops,
			                arena, &mg, error);
	for (size_t k = 1; k < ranges->trainer_count && r == 0; k++)
		r = run_variant(job, s, manifest, plan, ranges, DTL_FW_COUNT, k, behaviors, ops,
		                arena, &mg, error);
	if (r < 0)
		return r;
	struct dtl_finding *f = findings->items.items;
	const struct fires *m = mg.fires.items;
	for (size_t i = 0; i < findings->items.count; i++)
		if (strcmp(f[i].rule->id, "DT002") != 0 && /* judged in the baseline run alone */
		    (r = dtl_cli_versions_annotate(&f[i], m[i].mask, ranges, arena)) < 0)
			return r;
	dtl_findings_sort(findings);
	return 0;
}

/* The plan of one input: its files', the config's defaults, `with:`, the options, and below
 * them all the versions the project's own dependency files pin or allow. */
static int resolve_plan(const struct dtl_cli_job *job, const struct dtl_options *o,
                        const struct settings *s, const struct dtl_manifest *manifest,
                        const struct dtl_behavior_table *behaviors, struct dtl_arena *arena,
                        struct dtl_plan *plan, struct dtl_cli_ranges *ranges,
                        struct dtl_error *error)
{
	struct dtl_requirements *req = dtl_arena_alloc(arena, sizeof(*req));
	int r;

	if (!req)
		return -ENOMEM;
	*plan = manifest->plan;
	if (s->config && s->config->has_plan)
		plan_defaults(plan, &s->config->plan);
	/* a set-up's `with:` versions, then the options: DESIGN §3, options win over every file */
	dtl_plan_overlay(plan, &job->versions);
	dtl_plan_overlay(plan, &o->overrides);
	r = dtl_cli_versions_read(job, o, &s->limits, arena, req, error);
	if (r < 0)
		return r;
	dtl_cli_versions_pin(plan, req);
	return dtl_cli_versions_ranges(plan, req, behaviors, o->assume_newest, arena, ranges);
}

static int lint_one(const struct dtl_cli_job *job, const struct dtl_options *o,
                    const struct settings *s, const struct dtl_behavior_table *behaviors,
                    const struct dtl_op_oracle *ops, struct dtl_arena *arena,
                    struct dtl_report_input *ret_input, struct dtl_findings **ret_findings,
                    size_t *ret_suppressed, struct linted *ret_linted, struct dtl_error *error)
{
	struct dtl_manifest *manifest = dtl_arena_alloc(arena, sizeof(*manifest));
	struct dtl_plan *plan = dtl_arena_alloc(arena, sizeof(*plan));
	struct dtl_cli_ranges *ranges = dtl_arena_alloc(arena, sizeof(*ranges));
	struct judged base;
	int r;

	if (!manifest || !plan || !ranges)
		return -ENOMEM;
	struct dtl_compose_inputs in = {.input = job->input,
	                                .plan_file = job->plan_file,
	                                .deepspeed_file = job->deepspeed_file,
	                                .accelerate_file = job->accelerate_file,
	                                .peft_file = job->peft_file,
	                                .trainer_args_file = job->trainer_args_file,
	                                .framework_file = job->framework_file,
	                                .framework_overrides = job->framework_overrides,
	                                .framework_override_count = job->framework_override_count,
	                                .launch_file = job->launch_file,
	                                .input_source = job->setup ? NULL : s->stdin_source,
	                                .named_by = job->setup ? o->config_file : NULL,
	                                .named_at = job->loc};
	r = dtl_compose(&in, arena, &s->limits, manifest, error);
	if (r < 0)
		return r;
	put_input_warnings(manifest, o, s->config);
	r = resolve_plan(job, o, s, manifest, behaviors, arena, plan, ranges, error);
	if (r < 0)
		return r;
	if (o->export_file) {
		/* the export carries the plan the simulation uses, so linting it gives the same */
		struct dtl_manifest exported = *manifest;
		exported.plan = *plan;
		if ((r = outputs_not_read(o, error)) < 0)
			return r;
		r = dtl_export_manifest(o->export_file, &exported, error);
		if (r < 0) {
			/* a refusal (a hard-linked file) is the input's fault; the rest is ours */
			ret_linted->write_failed = r != -EPERM;
			return r;
		}
	}
	r = judge(job, s, manifest, plan, behaviors, ops, arena, &base, error);
	if (r < 0)
		return r;
	ret_linted->manifest = manifest;
	ret_linted->plan = plan;
	ret_linted->selection = s->selection;
	ret_linted->settings = *s;
	r = vary_versions(job, s, manifest, plan, ranges, behaviors, ops, arena, base.findings,
	                  error);
	if (r < 0)
		return r;
	ret_input->view = base.view;
	ret_input->file = job->input;
	ret_input->setup = job->setup;
	ret_input->findings = base.findings;
	if (o->memory) {
		struct dtl_memory *memory = dtl_arena_alloc(arena, sizeof(*memory));
		struct dtl_memory_view *shown = dtl_arena_alloc(arena, sizeof(*shown));
		if (!memory || !shown)
			return -ENOMEM;
		dtl_memory_compute(base.sim, NULL, memory);
		dtl_memory_view_init(shown, memory);
		ret_input->memory = shown;
	}
	*ret_findings = base.findings;
	*ret_suppressed += base.suppressed;
	return 0;
}

/* Line ends of the files findings point into, for SARIF regions. */
struct line_ends {
	struct dtl_arena *arena;
	struct dtl_vec files; /* struct line_file */
};

struct line_file {
	const char *path;
	uint32_t *ends; /* ends[l - 1]: the column past line l's last character */
	size_t count;
};

static int index_lines(struct line_ends *le, const char *path, struct line_file *lf)
{
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_vec ends = {0};
	uint32_t column = 1;

	lf->path = path;
	dtl_limits_default(&limits);
	if (dtl_source_read(&source, path, &limits, NULL) < 0)
		return 0; /* no ends: the reporter marks one character */
	for (size_t i = 0; i <= source.size; i++) {
		char ch = i < source.size ? source.data[i] : '\n';
		if (ch == '\n') {
			uint32_t *slot = dtl_vec_push(&ends, le->arena, sizeof(*slot));
			if (!slot) {
				dtl_source_fini(&source);
				return -ENOMEM;
			}
			*slot = column;
			column = 1;
		} else if (ch != '\r' && ((unsigned char)ch & 0xc0) != 0x80) {
			column++;
		}
	}
	dtl_source_fini(&source);
	lf->ends = ends.items;
	lf->count = ends.count;
	return 0;
}

static uint32_t line_end(void *data, const char *file, uint32_t line)
{
	struct line_ends *le = data;
	struct line_file *files = le->files.items, *lf = NULL;

	for (size_t i = 0; i < le->files.count && !lf; i++)
		if (strcmp(files[i].path, file) == 0)
			lf = &files[i];
	if (!lf) {
		lf = dtl_vec_push(&le->files, le->arena, sizeof(*lf));
		if (!lf || index_lines(le, file, lf) < 0)
			return 0;
	}
	return line >= 1 && line <= lf->count ? lf->ends[line - 1] : 0;
}

static bool env_set(const char *name)
{
	const char *value = getenv(name);
	return value && *value;
}

/* --color wins over the environment; then https://no-color.org (a non-empty NO_COLOR: off)
 * wins over the variables that force colour for CI logs that render ANSI: FORCE_COLOR
 * (https://force-color.org: non-empty, whatever its value) and CLICOLOR_FORCE (non-empty and
 * not "0", https://bixense.com/clicolors); a forced colour ignores TERM=dumb. */
static bool use_color(const struct dtl_options *o, FILE *out)
{
	const char *term = getenv("TERM"), *clicolor_force = getenv("CLICOLOR_FORCE");

	if ((o->format != DTL_FORMAT_TEXT && o->format != DTL_FORMAT_CONCISE) || o->statistics ||
	    o->color == DTL_COLOR_NEVER)
		return false;
	if (o->color == DTL_COLOR_ALWAYS)
		return true;
	if (env_set("NO_COLOR"))
		return false;
	if (env_set("FORCE_COLOR") || (env_set("CLICOLOR_FORCE") && strcmp(clicolor_force, "0")))
		return true;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fileno(out));
}

/* The columns of the terminal that out is, or 0 (a file, a pipe: lines stay whole, so that
 * grep and editors see each finding on its line). */
static unsigned terminal_width(FILE *out)
{
	struct winsize ws;

	if (!isatty(fileno(out)))
		return 0;
	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *columns = getenv("COLUMNS");
	long v = columns ? strtol(columns, NULL, 10) : 0;
	return v > 0 && v < 100000 ? (unsigned)v : 80;
}

/* The nearest folder from the working directory up that holds .git (a folder, or a file for
 * a worktree or submodule), into buf; NULL when none does. */
static const char *git_root(char *buf, size_t size)
{
	struct stat st;

	if (!getcwd(buf, size))
		return NULL;
	for (;;) {
		size_t len = strlen(buf);
		if (len + sizeof("/.git") > size)
			return NULL;
		memcpy(buf + len, "/.git", sizeof("/.git"));
		bool found = stat(buf, &st) == 0;
		buf[len] = '\0';
		if (found)
			return buf;
		char *slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return NULL;
		*slash = '\0';
	}
}

/* What the paths of a CI format are relative to, whichever subfolder dtypelint runs from: the
 * folder the CI system names (GitHub Actions' GITHUB_WORKSPACE for SARIF and annotations,
 * GitLab's CI_PROJECT_DIR for Code Quality and SARIF), else the repository root, else the
 * working directory (NULL). */
static const char *report_root(const struct dtl_options *o, char *buf, size_t size)
{
	const char *github = getenv("GITHUB_WORKSPACE"), *gitlab = getenv("CI_PROJECT_DIR");

	if (o->format != DTL_FORMAT_SARIF && o->format != DTL_FORMAT_GITHUB &&
	    o->format != DTL_FORMAT_GITLAB)
		return NULL;
	if (o->format != DTL_FORMAT_GITLAB && github && *github)
		return github;
	if (o->format != DTL_FORMAT_GITHUB && gitlab && *gitlab)
		return gitlab;
	return git_root(buf, size);
}

static int write_report(FILE *out, const struct dtl_options *o,
                        const struct dtl_report_input *inputs, struct dtl_arena *arena)
{
	struct line_ends le = {.arena = arena};
	char root[4096];
	struct dtl_report_options options = {.color = use_color(o, out),
	                                     .root = report_root(o, root, sizeof(root)),
	                                     .verbose = o->verbose,
	                                     .width = terminal_width(out),
	                                     .line_end = line_end,
	                                     .line_end_data = &le};
	size_t n = o->input_count;

	if (o->show_plan)
		return dtl_report_plan(out, inputs, n, o->format == DTL_FORMAT_JSON);
	if (o->statistics)
		return dtl_report_statistics(out, inputs, n, o->format == DTL_FORMAT_JSON);
	switch (o->format) {
	case DTL_FORMAT_TEXT:
		return dtl_report_text_styled(out, inputs, n, &options);
	case DTL_FORMAT_JSON:
		return dtl_report_json(out, inputs, n);
	case DTL_FORMAT_JSON_LINES:
		return dtl_report_json_lines(out, inputs, n);
	case DTL_FORMAT_SARIF:
		return dtl_report_sarif(out, inputs, n, &options);
	case DTL_FORMAT_GITHUB:
		return dtl_report_github(out, inputs, n, &options);
	case DTL_FORMAT_GITLAB:
		return dtl_report_gitlab(out, inputs, n, &options);
	case DTL_FORMAT_MARKDOWN:
		return dtl_report_markdown(out, inputs, n);
	case DTL_FORMAT_HTML:
		return dtl_report_html(out, inputs, n);
	case DTL_FORMAT_CONCISE:
		return dtl_report_concise(out, inputs, n, &options);
	}
	return -EINVAL;
}

static void print_summary(const struct dtl_options *o, const struct dtl_report_counts *counts,
                          size_t suppressed, size_t baselined)
{
	if (counts->findings)
		fprintf(stderr,
		        "Found %zu problem%s (%zu error%s, %zu warning%s, %zu info) in %zu file%s",
		        counts->findings, counts->findings == 1 ? "" : "s", counts->errors,
		        counts->errors == 1 ? "" : "s", counts->warnings,
		        counts->warnings == 1 ? "" : "s", counts->infos, o->input_count,
		        o->input_count == 1 ? "" : "s");
	else
		fprintf(stderr, "No problems found");
	if (suppressed && baselined)
		fprintf(stderr, "; %zu suppressed, %zu in the baseline", suppressed, baselined);
	else if (suppressed)
		fprintf(stderr, "; %zu suppressed", suppressed);
	else if (baselined)
		fprintf(stderr, "; %zu in the baseline", baselined);
	fputs(".\n", stderr);
}

static int run_linting(struct dtl_options *o, struct dtl_arena *arena,
                       const struct dtl_op_oracle *ops);

/* No file arguments: lint the set-ups of the config (--config, else the nearest trusted
 * .dtypelint.yaml from the working directory up), all or those --setup names. That config then
 * applies to every set-up. Returns 0, or the exit status of a usage or config error. */
static int choose_setups(struct dtl_options *o, struct dtl_arena *arena)
{
	struct dtl_error error = {0};
	struct dtl_config config;
	struct dtl_limits limits;
	const char *path = o->config_file, *ignored = NULL, *why = NULL;
	int r;

	if (o->plan_file || o->deepspeed_file || o->accelerate_file || o->peft_file ||
	    o->trainer_args_file || o->framework_file || o->launch_file || o->stdin_filename) {
		fprintf(
		    stderr,
		    "dtypelint: --plan, --deepspeed, --accelerate, --peft, --trainer-args, "
		    "--framework-config and --launch go with file arguments; a set-up names its "
		    "own files in the config's setups:\n");
		return EXIT_INPUT;
	}
	if (!path && !o->no_config && (r = dtl_config_find(".", arena, &path, &ignored, &why)) < 0)
		return print_error(&error, r);
	if (ignored)
		warn_untrusted_config(ignored, why);
	if (!path) {
		fprintf(stderr, "dtypelint: no manifest given, and no .dtypelint.yaml with setups: "
		                "here or above\nTry 'dtypelint --help'.\n");
		return EXIT_INPUT;
	}
	dtl_limits_default(&limits);
	dtl_cli_limits_apply(&limits, &o->limits);
	if ((r = dtl_config_load(path, arena, &limits, &config, &error)) < 0)
		return print_error(&error, r);
	const struct dtl_cli_job *all = config.setups.items;
	if (config.setups.count == 0) {
		fputs("dtypelint: no manifest given, and ", stderr);
		dtl_report_put_path(stderr, path);
		fputs(" has no setups:\nTry 'dtypelint --help'.\n", stderr);
		return EXIT_INPUT;
	}
	const char *const *names = o->setups.items;
	for (size_t k = 0; k < o->setups.count; k++) {
		bool known = false;
		for (size_t j = 0; j < config.setups.count; j++)
			known = known || strcmp(all[j].setup, names[k]) == 0;
		if (known)
			continue;
		fputs("dtypelint: --setup: ", stderr);
		dtl_report_put_path(stderr, path);
		fputs(" has no set-up named '", stderr);
		dtl_report_put_escaped(stderr, names[k]);
		fputs("' (it has:", stderr);
		for (size_t j = 0; j < config.setups.count; j++) {
			fputc(' ', stderr);
			dtl_report_put_escaped(stderr, all[j].setup);
		}
		fputs(")\n", stderr);
		return EXIT_INPUT;
	}
	struct dtl_cli_job *jobs = dtl_arena_calloc(arena, config.setups.count, sizeof(*jobs));
	const char **inputs = dtl_arena_calloc(arena, config.setups.count, sizeof(*inputs));
	size_t n = 0;
	if (!jobs || !inputs)
		return print_error(&error, -ENOMEM);
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

static int run(struct dtl_options *o, struct dtl_arena *arena)
{
	struct dtl_error error = {0};
	int r;

	if (o->explain) {
		r = dtl_cli_explain(stdout, o->explain);
		if (r == -ENOENT) {
			fprintf(stderr,
			        "dtypelint: --explain: '%s' names no rule (see --list-rules)\n",
			        o->explain);
			return EXIT_INPUT;
		}
		return r < 0 ? EXIT_INTERNAL : EXIT_CLEAN;
	}
	if (o->list_rules)
		return dtl_cli_list_rules(stdout, o->format) < 0 ? EXIT_INTERNAL : EXIT_CLEAN;
	if (o->scan_kernels.count) {
		struct dtl_op_oracle unused;
		void *kernels = NULL;
		r = dtl_cli_kernels_scan(o->scan_kernels.items, o->scan_kernels.count,
		                         isatty(STDERR_FILENO), o->scan_budget_s, arena, &unused,
		                         &kernels, &error);
		if (r < 0)
			return print_error(&error, r);
		r = dtl_cli_kernels_print(stdout, kernels, o->format == DTL_FORMAT_JSON, &error);
		dtl_cli_kernels_fini(kernels);
		if (r < 0)
			return print_error(&error, r);
		return EXIT_CLEAN;
	}
	if (o->input_count == 0 && (r = choose_setups(o, arena)) != 0)
		return r;
	struct dtl_op_oracle ops_storage, *ops = NULL;
	void *kernels = NULL;
	if (o->kernels.count) {
		r = dtl_cli_kernels_scan(o->kernels.items, o->kernels.count, isatty(STDERR_FILENO),
		                         o->scan_budget_s, arena, &ops_storage, &kernels, &error);
		if (r < 0)
			return print_error(&error, r);
		ops = &ops_storage;
	}
	r = run_linting(o, arena, ops);
	dtl_cli_kernels_fini(kernels);
	return r;
}

/* The files --write may edit for a job: its own */
static struct dtl_fix_files fix_files_of(const struct dtl_cli_job *job)
{
	return (struct dtl_fix_files){.input = job->input,
	                              .plan_file = job->plan_file,
	                              .deepspeed_file = job->deepspeed_file,
	                              .accelerate_file = job->accelerate_file,
	                              .peft_file = job->peft_file,
	                              .trainer_args_file = job->trainer_args_file};
}

/* --fix-plan --diff / --write for input i: the first of its most severe findings with a proven
 * fix, and of its fixes the first one a file of the input can hold (or the --pick N-th); the
 * others are code changes, printed as such. --write edits that file, lints the input again and
 * says whether the finding is gone (exit 0) or still reported (exit 1), and names findings the
 * edit brought (exit 1 when they reach --fail-on). */
/* The finding of input i whose fixes --write takes: the most severe with a proven fix. Returns
 * its index in plan, or plan->count after saying that none has one. */
static size_t finding_to_fix(const struct dtl_options *o, size_t i, const struct dtl_fix_plan *plan)
{
	size_t best = plan->count;

	for (size_t k = 0; k < plan->count; k++)
		if (plan->items[k].count &&
		    (best == plan->count ||
		     plan->items[k].finding->severity > plan->items[best].finding->severity))
			best = k;
	if (best == plan->count) {
		fputs("dtypelint: no finding of ", stderr);
		dtl_report_put_path(stderr, o->inputs[i]);
		fputs(" has a fix dtypelint can prove\n", stderr);
	}
	return best;
}

/* The edit of the first fix of item (or the --pick one) that a file of the input can hold;
 * code changes are said and skipped. Returns -1 with *ret_edit and *ret_fix set, else an exit
 * status after saying why. */
static int edit_for(const struct dtl_options *o, size_t i, struct dtl_arena *arena,
                    const struct linted *linted, const struct dtl_fix_item *item,
                    struct dtl_fix_edit *ret_edit, const struct dtl_fix **ret_fix)
{
	struct dtl_fix_files files = fix_files_of(&o->jobs[i]);
	struct dtl_error error = {0};
	size_t k = o->fix_pick ? (size_t)o->fix_pick - 1 : 0;
	int r = -ENOTSUP;

	if ((size_t)o->fix_pick > item->count) {
		fprintf(stderr, "dtypelint: --pick %d: the finding has %zu fix%s\n", o->fix_pick,
		        item->count, item->count == 1 ? "" : "es");
		return EXIT_INPUT;
	}
	for (; k < item->count; k++) {
		*ret_fix = &item->fixes[k];
		r = dtl_fix_edit_build(*ret_fix, &files, linted->manifest, linted->plan, arena,
		                       ret_edit, &error);
		if (r != -ENOTSUP)
			break;
		/* a code change: said, never written */
		fprintf(stderr, "dtypelint: fix %zu is not written: ", k + 1);
		dtl_report_put_escaped(stderr, error.message);
		fputc('\n', stderr);
		if (o->fix_pick)
			return EXIT_INPUT;
	}
	if (r == -ENOTSUP) {
		fputs("dtypelint: no fix of this finding can be written into the files of ",
		      stderr);
		dtl_report_put_path(stderr, o->inputs[i]);
		fputc('\n', stderr);
		return EXIT_INPUT;
	}
	return r < 0 ? print_error(&error, r) : -1;
}

/* After the edit: is the fixed finding (or its rule on one of its tensors, for a finding that
 * stood for several alike) still among the findings of the input linted again? */
static bool still_reported(struct dtl_arena *arena, const struct dtl_sim *sim,
                           const struct dtl_finding *target, const struct dtl_report_input *again,
                           const struct dtl_findings *found, struct dtl_strmap *names)
{
	const char *key = dtl_fix_finding_key(arena, sim, target);
	const struct dtl_finding *now = found->items.items;

	for (size_t n = 0; n < found->items.count; n++) {
		const char *k2 = dtl_fix_finding_key(arena, sim_of(again), &now[n]);
		if (now[n].severity < target->severity || strcmp(now[n].rule->id, target->rule->id))
			continue;
		bool same = key && k2 && !strcmp(key, k2);
		for (size_t b = 0; b < now[n].tensor_count && !same; b++) {
			uint32_t t = now[n].tensors[b];
			same = dtl_strmap_get(names, sim_of(again)->t.name[t],
			                      sim_of(again)->t.name_len[t]) >= 0;
		}
		if (same) {
			fprintf(stderr,
			        "dtypelint: re-run: %s %s is still reported: ", target->rule->id,
			        target->rule->name);
			dtl_report_put_escaped(stderr, now[n].message);
			fputc('\n', stderr);
			return true;
		}
	}
	return false;
}

/* Findings the edit brought (the plan said so: "it creates"): at --fail-on they fail. Returns
 * the exit status, or -ENOMEM. */
static int brought_findings(struct dtl_arena *arena, const struct dtl_sim *sim,
                            const struct dtl_findings *findings,
                            const struct dtl_report_input *again, const struct dtl_findings *found,
                            enum dtl_severity fail_on)
{
	const struct dtl_finding *old = findings->items.items, *now = found->items.items;
	struct dtl_strmap before;
	int status = EXIT_CLEAN;

	dtl_strmap_init(&before, arena);
	for (size_t n = 0; n < findings->items.count; n++) {
		const char *was = dtl_fix_finding_key(arena, sim, &old[n]);
		if (!was || dtl_strmap_put(&before, was, strlen(was), 1) < 0)
			return -ENOMEM;
	}
	for (size_t n = 0; n < found->items.count; n++) {
		const char *is = dtl_fix_finding_key(arena, sim_of(again), &now[n]);
		if (!is || dtl_strmap_get(&before, is, strlen(is)) >= 0 ||
		    now[n].severity < fail_on)
			continue;
		fprintf(stderr, "dtypelint: re-run: the edit brings %s %s: ", now[n].rule->id,
		        now[n].rule->name);
		dtl_report_put_escaped(stderr, now[n].message);
		fputc('\n', stderr);
		status = EXIT_FINDINGS;
	}
	return status;
}

static int write_fix(const struct dtl_options *o, size_t i, struct dtl_arena *arena,
                     const struct dtl_behavior_table *behaviors, const struct dtl_op_oracle *ops,
                     const struct dtl_sim *sim, const struct dtl_findings *findings,
                     const struct linted *linted, const struct dtl_fix_plan *plan)
{
	struct dtl_error error = {0};
	struct dtl_fix_edit edit;
	const struct dtl_fix *fix = NULL;
	size_t best = finding_to_fix(o, i, plan);
	int r;

	if (best == plan->count)
		return EXIT_INPUT;
	const struct dtl_fix_item *item = &plan->items[best];
	if ((r = edit_for(o, i, arena, linted, item, &edit, &fix)) >= 0)
		return r;
	if (o->fix_diff)
		return dtl_fix_edit_diff(stdout, &edit) < 0 ? EXIT_INTERNAL : EXIT_CLEAN;
	/* a path typed or named may reach outside the tree; an edit never does (issue 35) */
	if ((r = dtl_confine_tree(edit.path, (struct dtl_loc){0}, &error)) < 0)
		return print_error(&error, r);
	/* a write that failed, or a file changed meanwhile, exits 3 as every write error does;
	 * a refusal (a hard-linked file) is the input's, 2 (README, Exit status) */
	if ((r = dtl_fix_edit_commit(&edit, &error)) < 0)
		return r == -EPERM ? print_error(&error, r)
		                   : (print_error(&error, r), EXIT_INTERNAL);
	if (dtl_fix_edit_diff(stdout, &edit) < 0)
		return EXIT_INTERNAL;
	if (!o->quiet) {
		fputs("dtypelint: applied to ", stderr);
		dtl_report_put_path(stderr, edit.path);
		fputs(" (", stderr);
		dtl_report_put_escaped(stderr, edit.setting);
		fputs("): ", stderr);
		dtl_report_put_escaped(stderr, fix->proposed.title);
		fputc('\n', stderr);
	}
	/* lint the input again, from the edited files */
	const struct dtl_finding *target = item->finding;
	struct dtl_report_input again;
	struct dtl_findings *found;
	struct linted relinted;
	size_t suppressed = 0;
	r = lint_one(&o->jobs[i], o, &linted->settings, behaviors, ops, arena, &again, &found,
	             &suppressed, &relinted, &error);
	if (r < 0)
		return print_error(&error, r);
	/* the finding's tensors, by name: one look-up per tensor of the findings after */
	struct dtl_strmap names;
	dtl_strmap_init(&names, arena);
	for (size_t a = 0; a < target->tensor_count; a++) {
		uint32_t t = target->tensors[a];
		if (dtl_strmap_put(&names, sim->t.name[t], sim->t.name_len[t], 1) < 0)
			return print_error(&error, -ENOMEM);
	}
	if (still_reported(arena, sim, target, &again, found, &names))
		return EXIT_FINDINGS;
	fprintf(stderr, "dtypelint: re-run: %s %s is gone from ", target->rule->id,
	        target->rule->name);
	dtl_report_put_path(stderr, o->inputs[i]);
	fputc('\n', stderr);
	r = brought_findings(arena, sim, findings, &again, found, linted->settings.fail_on);
	return r < 0 ? print_error(&error, r) : r;
}

/* --fix-plan and --wrap-plan: printed instead of the report. */
static int run_fix_modes(const struct dtl_options *o, struct dtl_arena *arena,
                         const struct dtl_behavior_table *behaviors,
                         const struct dtl_op_oracle *ops, const struct dtl_report_input *inputs,
                         struct dtl_findings **findings, const struct linted *linted)
{
	struct dtl_error error = {0};
	int r = 0, worst = EXIT_CLEAN;

	for (size_t i = 0; i < o->input_count && r >= 0; i++) {
		if (o->wrap_plan) {
			r = dtl_wrap_plan_write(stdout, sim_of(&inputs[i]),
			                        o->format == DTL_FORMAT_JSON, &error);
			if (r < 0)
				return print_error(&error, r);
			continue;
		}
		struct dtl_fix_context ctx = {.manifest = linted[i].manifest,
		                              .plan = linted[i].plan,
		                              .behaviors = behaviors,
		                              .selection = &linted[i].selection,
		                              .ops = ops,
		                              .arena = arena};
		struct dtl_fix_plan plan;
		r = dtl_fix_plan_build(&ctx, sim_of(&inputs[i]), findings[i], &plan, &error);
		if (r < 0)
			return print_error(&error, r);
		if (!o->fix_write && !o->fix_diff) {
			/* say of each fix where --write would put it, or that it is a code change
			 */
			struct dtl_fix_files files = fix_files_of(&o->jobs[i]);
			for (size_t k = 0; k < plan.count; k++)
				for (size_t n = 0; n < plan.items[k].count; n++) {
					struct dtl_fix *fix = &plan.items[k].fixes[n];
					struct dtl_fix_edit edit;
					struct dtl_error why = {0};
					if (dtl_fix_edit_build(fix, &files, linted[i].manifest,
					                       linted[i].plan, arena, &edit,
					                       &why) >= 0) {
						fix->edit_file = edit.path;
						fix->edit_setting = edit.setting;
					} else {
						fix->not_written = dtl_arena_strndup(
						    arena, why.message, strlen(why.message));
					}
				}
			r = o->format == DTL_FORMAT_JSON
			        ? dtl_fix_plan_write_json(stdout, &plan, sim_of(&inputs[i]))
			        : dtl_fix_plan_write_text(stdout, &plan);
			continue;
		}
		int status = write_fix(o, i, arena, behaviors, ops, sim_of(&inputs[i]), findings[i],
		                       &linted[i], &plan);
		if (status > worst)
			worst = status;
	}
	/* what stdout could not take (/dev/full, a closed pipe) is a failed write, exit 3 */
	if (r >= 0 && (fflush(stdout) != 0 || ferror(stdout)))
		r = -EIO;
	if (r < 0) {
		fprintf(stderr, "dtypelint: cannot write the plan to standard output\n");
		return EXIT_INTERNAL;
	}
	return worst;
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
		const struct dtl_cli_job *job = &o->jobs[i / per_job];
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

/* An input that could not be read becomes its own finding, DT001 input-error, at the error's
 * position (ruff's E902): the other inputs are still linted and reported. */
static int input_error_finding(const char *path, const struct dtl_error *error,
                               struct dtl_arena *arena, struct dtl_report_input *ret_input,
                               struct dtl_findings **ret_findings)
{
	struct dtl_findings *findings = dtl_arena_calloc(arena, 1, sizeof(*findings));
	struct dtl_finding *f = findings ? dtl_vec_push(&findings->items, arena, sizeof(*f)) : NULL;
	const char *file = error->loc.file ? error->loc.file : path;

	if (!f)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->rule = dtl_rule_find("DT001");
	f->severity = DTL_SEVERITY_ERROR;
	f->message = dtl_arena_strndup(arena, error->message, strlen(error->message));
	f->loc.file = dtl_arena_strndup(arena, file, strlen(file));
	f->loc.line = error->loc.line;
	f->loc.column = error->loc.column;
	if (!f->rule || !f->message || !f->loc.file)
		return -ENOMEM;
	ret_input->view = NULL;
	ret_input->file = path;
	ret_input->findings = findings;
	*ret_findings = findings;
	return 0;
}

/* What linting every input gave, for the modes and the report after it. */
struct lint_run {
	struct dtl_report_input *inputs;
	struct dtl_findings **findings;
	enum dtl_severity *fail_on; /* per input: its config's --fail-on */
	struct linted *linted;
	size_t suppressed;
	bool input_failed; /* an input could not be read: its DT001 finding stands in */
};

/* Lints each input. An unreadable input becomes a DT001 finding and the others go on, except in
 * the modes that act on the findings (fixes, baselines, plans), which stop at it. Returns an
 * exit status (>= 0) after printing the error, or -1 when every input was linted or reported. */
static int lint_inputs(struct dtl_options *o, struct dtl_arena *arena,
                       const struct dtl_behavior_table *behaviors, const struct dtl_op_oracle *ops,
                       struct lint_run *run)
{
	struct config_cache cache = {0};
	struct dtl_error error = {0};
	int r;

	run->inputs = dtl_arena_calloc(arena, o->input_count, sizeof(*run->inputs));
	run->findings = dtl_arena_calloc(arena, o->input_count, sizeof(*run->findings));
	run->fail_on = dtl_arena_calloc(arena, o->input_count, sizeof(*run->fail_on));
	run->linted = dtl_arena_calloc(arena, o->input_count, sizeof(*run->linted));
	if (!run->inputs || !run->findings || !run->fail_on || !run->linted)
		return print_error(&error, -ENOMEM);
	for (size_t i = 0; i < o->input_count; i++) {
		struct settings s;
		/* a set-up's "-" names no standard input: compose refuses it */
		bool from_stdin = !o->jobs[i].setup && strcmp(o->inputs[i], "-") == 0;
		/* standard input finds its config from the name it is given */
		const char *where =
		    from_stdin && o->stdin_filename ? o->stdin_filename : o->inputs[i];
		r = settings_for(where, o, &cache, arena, &s, &error);
		if (r >= 0 && from_stdin)
			r = read_stdin(o, &s, arena, &error);
		if (r >= 0)
			r = lint_one(&o->jobs[i], o, &s, behaviors, ops, arena, &run->inputs[i],
			             &run->findings[i], &run->suppressed, &run->linted[i], &error);
		if (r < 0 && run->linted[i].write_failed)
			return (print_error(&error, r), EXIT_INTERNAL);
		if (r < 0 && (r == -ENOMEM || o->fix_plan || o->wrap_plan || o->write_baseline ||
		              o->show_plan))
			return print_error(&error, r);
		if (r < 0) {
			if ((r = input_error_finding(o->inputs[i], &error, arena, &run->inputs[i],
			                             &run->findings[i])) < 0)
				return print_error(&error, r);
			run->inputs[i].setup = o->jobs[i].setup;
			run->input_failed = true;
			run->fail_on[i] = DTL_SEVERITY_ERROR;
			memset(&error, 0, sizeof(error));
			continue;
		}
		run->fail_on[i] = s.fail_on;
	}
	return -1;
}

/* --write-baseline: every finding as a baseline entry, instead of a report. */
static int write_baseline(const struct dtl_options *o, struct dtl_arena *arena,
                          const struct lint_run *run)
{
	struct dtl_report_counts counts;
	struct dtl_error error = {0};
	size_t entries = 0;
	int r;

	dtl_report_count(run->inputs, o->input_count, &counts);
	r = dtl_baseline_write(o->write_baseline, run->inputs, o->input_count, arena, &entries,
	                       &error);
	if (r < 0) {
		/* exit 3 for a write that failed; 2 for a refusal (a hard-linked file) */
		print_error(&error, r);
		return r == -EPERM ? EXIT_INPUT : EXIT_INTERNAL;
	}
	if (!o->quiet)
		fprintf(stderr, "dtypelint: wrote %zu baseline entr%s for %zu finding%s to %s\n",
		        entries, entries == 1 ? "y" : "ies", counts.findings,
		        counts.findings == 1 ? "" : "s",
		        strcmp(o->write_baseline, "-") == 0 ? "standard output"
		                                            : o->write_baseline);
	return EXIT_CLEAN;
}

/* The report, its --memory table and --trace, to standard output or -o FILE (written whole or
 * not at all). Returns an exit status after printing the error, or -1 when written. */
static int emit_report(const struct dtl_options *o, struct dtl_arena *arena,
                       const struct lint_run *run)
{
	struct dtl_atomic_file report_file = {0};
	struct dtl_error error = {0};
	FILE *out = stdout;
	int r;

	if (o->output) {
		r = dtl_atomic_open(&report_file, o->output, &error);
		if (r < 0)
			return r == -EPERM ? print_error(&error, r)
			                   : (print_error(&error, r), EXIT_INTERNAL);
		out = report_file.out;
	}
	errno = 0;
	r = write_report(out, o, run->inputs, arena);
	if (r >= 0 && o->memory && o->format == DTL_FORMAT_TEXT && !o->statistics && !o->show_plan)
		r = dtl_report_memory_text(out, run->inputs, o->input_count);
	if (r >= 0 && o->trace.count) {
		/* after a text report on its stream; machine formats keep theirs clean */
		FILE *trace_out = o->format == DTL_FORMAT_TEXT && !o->statistics ? out : stderr;
		r = dtl_report_trace(trace_out, run->inputs, o->input_count, o->trace.items,
		                     o->trace.count);
	}
	/* the stream's errno says why (ENOSPC, EPIPE, ...) better than -EIO */
	if (r == -EIO && errno)
		r = -errno;
	if (out == stdout) {
		if (fflush(out) != 0 && r >= 0)
			r = errno ? -errno : -EIO;
	} else if (r < 0) {
		dtl_atomic_abort(&report_file); /* the old report stays as it was */
	} else {
		r = dtl_atomic_commit(&report_file, &error);
	}
	if (r < 0) {
		fprintf(stderr, "dtypelint: cannot write the report to %s: %s\n",
		        o->output ? o->output : "standard output", strerror(-r));
		return EXIT_INTERNAL;
	}
	return -1;
}

/* The exit status of a run whose report was written. */
static int exit_status(const struct dtl_options *o, const struct lint_run *run)
{
	/* an input that was not read was not checked: no option makes that a pass */
	if (run->input_failed)
		return EXIT_INPUT;
	if (o->exit_zero)
		return EXIT_CLEAN;
	for (size_t i = 0; i < o->input_count; i++) {
		const struct dtl_finding *f = run->findings[i]->items.items;
		for (size_t k = 0; k < run->findings[i]->items.count; k++)
			if (f[k].severity >= run->fail_on[i])
				return EXIT_FINDINGS;
	}
	return EXIT_CLEAN;
}

static int run_linting(struct dtl_options *o, struct dtl_arena *arena,
                       const struct dtl_op_oracle *ops)
{
	struct dtl_behavior_table *behaviors = dtl_arena_alloc(arena, sizeof(*behaviors));
	struct dtl_error error = {0};
	struct dtl_report_counts counts;
	struct lint_run run = {0};
	size_t baselined = 0;
	int r;

	if (!behaviors)
		return print_error(&error, -ENOMEM);
	if (output_is_input(o, o->output) < 0 || output_is_input(o, o->export_file) < 0 ||
	    output_is_input(o, o->write_baseline) < 0)
		return EXIT_INPUT;
	if (o->export_file && o->input_count > 1) {
		/* one file holds one manifest: writing each in turn would keep only the last */
		fprintf(stderr, "dtypelint: --export writes one manifest; %zu inputs given\n",
		        o->input_count);
		return EXIT_INPUT;
	}
	r = dtl_behavior_table_load(behaviors, arena, &error);
	if (r < 0) {
		print_error(&error, r);
		return EXIT_INTERNAL;
	}
	if (validate_selectors(&o->select, "--select") < 0 ||
	    validate_selectors(&o->extend_select, "--extend-select") < 0 ||
	    validate_selectors(&o->ignore, "--ignore") < 0)
		return EXIT_INPUT;
	if ((r = lint_inputs(o, arena, behaviors, ops, &run)) >= 0)
		return r;
	if ((r = outputs_not_read(o, &error)) < 0)
		return print_error(&error, r);
	if (o->fix_plan || o->wrap_plan)
		return run_fix_modes(o, arena, behaviors, ops, run.inputs, run.findings,
		                     run.linted);
	if (o->write_baseline)
		return write_baseline(o, arena, &run);
	if (o->baseline) {
		struct dtl_baseline baseline;
		struct dtl_limits limits;
		dtl_limits_default(&limits);
		dtl_cli_limits_apply(&limits, &o->limits);
		r = dtl_baseline_load(o->baseline, arena, &limits, &baseline, &error);
		if (r < 0)
			return print_error(&error, r);
		baselined =
		    dtl_baseline_filter(&baseline, run.inputs, run.findings, o->input_count, arena);
		dtl_baseline_report_stale(&baseline, stderr);
	}
	if ((r = emit_report(o, arena, &run)) >= 0)
		return r;
	if (o->show_plan)
		return EXIT_CLEAN;
	if (!o->quiet) {
		/* what the verdict assumed, beside the summary: problem matchers and piped
		 * output see neither */
		dtl_report_count(run.inputs, o->input_count, &counts);
		dtl_report_versions_line(stderr, run.inputs, o->input_count);
		print_summary(o, &counts, run.suppressed, baselined);
	}
	return exit_status(o, &run);
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
		return r > 0 ? EXIT_CLEAN : r == -ENOMEM ? EXIT_INTERNAL : EXIT_INPUT;
	}
	status = run(&options, &arena);
	dtl_arena_fini(&arena);
	dtl_read_log_clear();
	return status;
}
