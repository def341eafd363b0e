/* SPDX-License-Identifier: MIT */
/*
 * The lint run (include/dtypelint/lint/lint.h): one input composed, its plan resolved, simulated at
 * the newest allowed versions and once more per other version span and trainer, judged by the
 * rules, suppressions, per-file ignores and severities. Between the importers and the
 * reporters: every front end lints through dtl_lint_run().
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/compose.h"
#include "lint-private.h"

/* The config's plan values fill what the manifest's plan leaves unset (docs/design.md §3
 * precedence: config < manifest < --plan file < options). */
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

/* One simulation of a composed set-up at one plan, judged: its findings after suppressions and
 * the config's ignores and severities, sorted, their views resolved. */
struct judged {
	struct dtl_sim *sim;
	struct dtl_findings *findings;
	struct dtl_input_view *view;
	size_t suppressed;
};

static int judge(const struct dtl_lint_job *job, const struct dtl_lint_settings *s,
                 const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                 struct dtl_arena *arena, struct judged *ret, struct dtl_error *error)
{
	struct dtl_sim *sim = dtl_arena_alloc(arena, sizeof(*sim));
	struct dtl_findings *findings = dtl_arena_alloc(arena, sizeof(*findings));
	struct dtl_input_view *view = dtl_arena_alloc(arena, sizeof(*view));
	size_t suppressed = 0;
	int r;

	if (!sim || !findings || !view)
		return -ENOMEM;
	/* the tensors of these versions: a variant may have fewer or more created buffers */
	if ((r = dtl_manifest_at_versions(manifest, s->options->behaviors, plan, arena,
	                                  &manifest)) < 0)
		return r;
	r = dtl_sim_run(sim, manifest, plan, s->options->behaviors, arena, error);
	if (r < 0)
		return r;
	r = dtl_rules_run(sim, &s->selection, s->options->ops, findings, error);
	if (r < 0)
		return r;
	r = dtl_lint_suppress(sim, findings, &s->selection, &s->limits, s->stdin_source, arena,
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
		dtl_lint_apply_overrides(s->config, findings);
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
static int run_variant(const struct dtl_lint_job *job, const struct dtl_lint_settings *s,
                       const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                       const struct dtl_lint_ranges *ranges, int d, size_t k,
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
	r = judge(job, s, manifest, varied, arena, &got, error);
	return r < 0 ? r : merge_variant(mg, got.findings, d, k, arena);
}

/* Lints the set-up once more per other span of each version range (the newest of the others
 * kept) and per other trainer when no input names one, and says of each finding where it
 * fires: the verdict follows the worst version and trainer allowed (issue 33, items 2, 3). */
static int vary_versions(const struct dtl_lint_job *job, const struct dtl_lint_settings *s,
                         const struct dtl_manifest *manifest, const struct dtl_plan *plan,
                         const struct dtl_lint_ranges *ranges, struct dtl_arena *arena,
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
			r = run_variant(job, s, manifest, plan, ranges, fw, k, arena, &mg, error);
	for (size_t k = 1; k < ranges->trainer_count && r == 0; k++)
		r = run_variant(job, s, manifest, plan, ranges, DTL_FW_COUNT, k, arena, &mg, error);
	if (r < 0)
		return r;
	struct dtl_finding *f = findings->items.items;
	const struct fires *m = mg.fires.items;
	for (size_t i = 0; i < findings->items.count; i++)
		if (strcmp(f[i].rule->id, "DT002") != 0 && /* judged in the baseline run alone */
		    (r = dtl_lint_versions_annotate(&f[i], m[i].mask, ranges, arena)) < 0)
			return r;
	dtl_findings_sort(findings);
	return 0;
}

/* The plan of one input: its files', the config's defaults, `with:`, the options, and below
 * them all the versions the project's own dependency files pin or allow. */
static int resolve_plan(const struct dtl_lint_job *job, const struct dtl_lint_settings *s,
                        const struct dtl_manifest *manifest, struct dtl_arena *arena,
                        struct dtl_plan *plan, struct dtl_lint_ranges *ranges,
                        struct dtl_error *error)
{
	const struct dtl_lint_options *o = s->options;
	struct dtl_requirements *req = dtl_arena_alloc(arena, sizeof(*req));
	int r;

	if (!req)
		return -ENOMEM;
	*plan = manifest->plan;
	if (s->config && s->config->has_plan)
		plan_defaults(plan, &s->config->plan);
	/* a set-up's `with:` versions, then the options: docs/design.md §3, options win over every
	 * file */
	dtl_plan_overlay(plan, &job->versions);
	dtl_plan_overlay(plan, &o->overrides);
	r = dtl_lint_versions_read(job, o, &s->limits, arena, req, error);
	if (r < 0)
		return r;
	dtl_lint_versions_pin(plan, req);
	return dtl_lint_versions_ranges(plan, req, o->behaviors, o->assume_newest, arena, ranges);
}

/* The job's files composed into one manifest (standard input read already, if "-") */
static int compose(const struct dtl_lint_job *job, const struct dtl_lint_settings *s,
                   struct dtl_arena *arena, struct dtl_manifest *manifest, struct dtl_error *error)
{
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
	                                .launch_argv = job->launch_argv,
	                                .launch_argc = job->launch_argc,
	                                .input_source = job->setup ? NULL : s->stdin_source,
	                                .named_by = job->setup ? s->options->config_file : NULL,
	                                .named_at = job->loc};

	return dtl_compose(&in, arena, &s->limits, manifest, error);
}

/* The per-rank model states of the baseline simulation, for --memory */
static int memory_of(const struct dtl_sim *sim, struct dtl_arena *arena,
                     struct dtl_memory_view **ret)
{
	struct dtl_memory *memory = dtl_arena_alloc(arena, sizeof(*memory));
	struct dtl_memory_view *shown = dtl_arena_alloc(arena, sizeof(*shown));

	if (!memory || !shown)
		return -ENOMEM;
	dtl_memory_compute(sim, NULL, memory);
	dtl_memory_view_init(shown, memory);
	*ret = shown;
	return 0;
}

int dtl_lint_run(const struct dtl_lint_job *job, const struct dtl_lint_settings *s,
                 struct dtl_arena *arena, struct dtl_lint_result *ret, struct dtl_error *error)
{
	struct dtl_manifest *manifest = dtl_arena_alloc(arena, sizeof(*manifest));
	struct dtl_plan *plan = dtl_arena_alloc(arena, sizeof(*plan));
	struct dtl_lint_ranges *ranges = dtl_arena_alloc(arena, sizeof(*ranges));
	const struct dtl_lint_options *o = s->options;
	struct judged base;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->fail_on = s->fail_on;
	if (!manifest || !plan || !ranges)
		return -ENOMEM;
	if ((r = compose(job, s, arena, manifest, error)) < 0)
		return r;
	if (!dtl_lint_ignored("DT003", s))
		ret->warnings = &manifest->warnings;
	if ((r = resolve_plan(job, s, manifest, arena, plan, ranges, error)) < 0)
		return r;
	const struct dtl_manifest *at_plan;
	if ((r = dtl_manifest_at_versions(manifest, o->behaviors, plan, arena, &at_plan)) < 0 ||
	    (o->planned && (r = o->planned(o, at_plan, plan, error)) < 0))
		return r;
	if ((r = judge(job, s, manifest, plan, arena, &base, error)) < 0)
		return r;
	ret->manifest = at_plan;
	ret->plan = plan;
	ret->sim = base.sim;
	r = vary_versions(job, s, manifest, plan, ranges, arena, base.findings, error);
	if (r < 0)
		return r;
	ret->view = base.view;
	ret->findings = base.findings;
	ret->suppressed = base.suppressed;
	if (o->memory && (r = memory_of(base.sim, arena, &ret->memory)) < 0)
		return r;
	return 0;
}

int dtl_lint_input_error(const char *path, const struct dtl_error *error, struct dtl_arena *arena,
                         struct dtl_lint_result *ret)
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
	const struct dtl_vec *warnings = ret->warnings; /* those of a set-up composed */
	memset(ret, 0, sizeof(*ret));
	ret->warnings = warnings;
	ret->findings = findings;
	ret->fail_on = DTL_SEVERITY_ERROR;
	return 0;
}
