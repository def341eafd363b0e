/* SPDX-License-Identifier: MIT */
/*
 * The versions a set-up really runs (issue 33): what the project's dependency files say, read
 * where they are, below dtypelint's own files and options.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lint-private.h"

int dtl_lint_versions_read(const struct dtl_lint_job *job, const struct dtl_lint_options *o,
                           const struct dtl_limits *limits, struct dtl_arena *arena,
                           struct dtl_requirements *ret, struct dtl_error *error)
{
	const char *const *files = o->versions_from.items;
	const char *start = job->input;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < o->versions_from.count && r == 0; i++)
		r = dtl_requirements_read(files[i], arena, limits, ret, error);
	if (o->versions_from.count || r < 0)
		return r;
	if (job->versions_file)
		return dtl_requirements_read(job->versions_file, arena, limits, ret, error);
	if (strcmp(start, "-") == 0)
		start = o->stdin_filename ? o->stdin_filename : ".";
	return dtl_requirements_find(start, arena, limits, ret, error);
}

void dtl_lint_versions_pin(struct dtl_plan *plan, const struct dtl_requirements *req)
{
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		const struct dtl_requirement *r = &req->fw[fw];
		if (plan->versions[fw].set || !dtl_requirement_pinned(r))
			continue;
		plan->versions[fw] = r->lo;
		plan->version_locs[fw] = r->loc;
	}
}

static const char *format(const struct dtl_version *v, struct dtl_arena *arena)
{
	char buf[32];
	return dtl_arena_strndup(arena, dtl_version_format(v, buf, sizeof(buf)),
	                         strlen(dtl_version_format(v, buf, sizeof(buf))));
}

/* ">=0.18, linted at 0.18, 0.19.2, 0.19.8" */
static const char *range_note(const struct dtl_requirement *r, const struct dtl_version_span *s,
                              size_t n, bool assume_newest, struct dtl_arena *arena)
{
	const char *text = dtl_arena_sprintf(arena, "%s, %s", *r->spec ? r->spec : "any version",
	                                     assume_newest ? "--assume newest:" : "linted at");
	for (size_t i = 0; i < n && text; i++)
		text = dtl_arena_sprintf(arena, "%s%s %s", text, i ? "," : "",
		                         format(&s[i].rep, arena));
	return text;
}

int dtl_lint_versions_ranges(struct dtl_plan *plan, const struct dtl_requirements *req,
                             const struct dtl_behavior_table *behaviors, bool assume_newest,
                             struct dtl_arena *arena, struct dtl_lint_ranges *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		const struct dtl_requirement *r = &req->fw[fw];
		struct dtl_version_span *spans = ret->spans[fw];
		if (plan->versions[fw].set || !r->present || dtl_requirement_pinned(r))
			continue;
		size_t n = dtl_behavior_spans(behaviors, fw, r, spans, DTL_LINT_MAX_SPANS);
		if (n == 0)
			continue; /* allows nothing the table tells apart: the newest known */
		if (assume_newest) {
			spans[0] = spans[n - 1];
			n = 1;
		}
		plan->versions[fw] = spans[n - 1].rep;
		plan->version_locs[fw] = r->loc;
		plan->version_range[fw] = range_note(r, spans, n, assume_newest, arena);
		if (!plan->version_range[fw])
			return -ENOMEM;
		ret->count[fw] = n;
		ret->req[fw] = r;
	}
	/* no input names the trainer: a hand-written loop, the HF Trainer and TRL's SFT trainer
	 * each run the files as written (issue 33, item 3) */
	if (!plan->trainer) {
		ret->trainers[0] = NULL;
		ret->trainers[1] = "hf-trainer";
		ret->trainers[2] = "trl-sft";
		ret->trainer_count = 3;
		plan->trainer_range =
		    "assumed: no input names it; also linted as hf-trainer, trl-sft";
	}
	return 0;
}

static const char *trainer_name(const char *t)
{
	return t ? t : "none (a hand-written loop)";
}

/* "none (a hand-written loop)", not with "hf-trainer, trl-sft" */
static int annotate_trainer(struct dtl_finding_range *out, uint32_t mask,
                            const struct dtl_lint_ranges *ranges, struct dtl_arena *arena)
{
	const char *fires = NULL, *not_with = NULL, *allowed = NULL;

	for (size_t k = 0; k < ranges->trainer_count; k++) {
		const char *t = ranges->trainers[k], **to = mask & (1u << k) ? &fires : &not_with;
		const char *name = to == &fires ? trainer_name(t) : t ? t : "none";
		*to = *to ? dtl_arena_sprintf(arena, "%s, %s", *to, name) : name;
		allowed =
		    allowed ? dtl_arena_sprintf(arena, "%s, %s", allowed, t ? t : "none") : "none";
		if (!*to || !allowed)
			return -ENOMEM;
	}
	out->name = "trainer";
	out->fires = fires;
	out->not_with = not_with;
	out->allowed = allowed;
	out->allowed_at = "assumed: no input names the trainer";
	for (size_t k = 0; k < ranges->trainer_count && !out->avoided_by; k++)
		if (!(mask & (1u << k)))
			out->avoided_by =
			    dtl_arena_sprintf(arena, "trainer: %s",
			                      ranges->trainers[k] ? ranges->trainers[k] : "none");
	return 0;
}

/* "0.18–0.19.2", ">=0.18,<0.18.5", "<=0.19.2", ">=0.19.3", "any" */
static const char *fires_text(const struct dtl_version_span *a, const struct dtl_version_span *b,
                              struct dtl_arena *arena)
{
	const char *lo = a->lo.set ? format(&a->lo, arena) : NULL;
	const char *hi = b->hi.set ? format(&b->hi, arena) : NULL;

	if (lo && hi && !b->hi_strict)
		return strcmp(lo, hi) == 0 ? lo : dtl_arena_sprintf(arena, "%s–%s", lo, hi);
	if (lo && hi)
		return dtl_arena_sprintf(arena, ">=%s,<%s", lo, hi);
	if (hi)
		return dtl_arena_sprintf(arena, "%s%s", b->hi_strict ? "<" : "<=", hi);
	if (lo)
		return dtl_arena_sprintf(arena, ">=%s", lo);
	return "any";
}

static int annotate_one(struct dtl_finding_range *out, uint32_t mask, enum dtl_framework fw,
                        const struct dtl_lint_ranges *ranges, struct dtl_arena *arena)
{
	const struct dtl_version_span *s = ranges->spans[fw];
	const struct dtl_requirement *r = ranges->req[fw];
	size_t n = ranges->count[fw], first = 0, last = n - 1;
	const char *name = dtl_framework_name(fw);

	while (!(mask & (1u << first)))
		first++;
	while (!(mask & (1u << last)))
		last--;
	out->name = name;
	out->fires = fires_text(&s[first], &s[last], arena);
	out->from = s[first].lo.set ? format(&s[first].lo, arena) : NULL;
	out->to = s[last].hi.set && !s[last].hi_strict ? format(&s[last].hi, arena) : NULL;
	out->allowed = *r->spec ? r->spec : "any version";
	out->allowed_at =
	    dtl_arena_sprintf(arena, "%s:%u:%u", r->loc.file, r->loc.line, r->loc.column);
	/* the pin that avoids it: above the versions it fires at, else below them */
	if (last + 1 < n)
		out->avoided_by =
		    dtl_arena_sprintf(arena, "%s>=%s", name, format(&s[last + 1].lo, arena));
	else if (first > 0 && s[first].lo.set)
		out->avoided_by =
		    dtl_arena_sprintf(arena, "%s<%s", name, format(&s[first].lo, arena));
	return out->fires && out->allowed_at ? 0 : -ENOMEM;
}

int dtl_lint_versions_annotate(struct dtl_finding *f, const uint32_t fires[DTL_FW_COUNT + 1],
                               const struct dtl_lint_ranges *ranges, struct dtl_arena *arena)
{
	struct dtl_finding_range *out = NULL;
	size_t count = 0;

	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		size_t n = ranges->count[fw];
		uint32_t all = n >= 32 ? UINT32_MAX : (1u << n) - 1;
		if (n < 2 || fires[fw] == 0 || (fires[fw] & all) == all)
			continue;
		if (!out && !(out = dtl_arena_calloc(arena, DTL_FW_COUNT + 1, sizeof(*out))))
			return -ENOMEM;
		int r = annotate_one(&out[count++], fires[fw], fw, ranges, arena);
		if (r < 0)
			return r;
	}
	uint32_t all = (1u << ranges->trainer_count) - 1, mask = fires[DTL_FW_COUNT];
	if (ranges->trainer_count > 1 && mask && (mask & all) != all) {
		if (!out && !(out = dtl_arena_calloc(arena, DTL_FW_COUNT + 1, sizeof(*out))))
			return -ENOMEM;
		int r = annotate_trainer(&out[count++], mask, ranges, arena);
		if (r < 0)
			return r;
	}
	f->ranges = out;
	f->range_count = count;
	return 0;
}
