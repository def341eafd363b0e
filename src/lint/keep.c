/* SPDX-License-Identifier: MIT */
/*
 * What a report reads of a lint result, copied out of the arena it was linted in
 * (dtl_lint_keep, include/dtypelint/lint/lint.h): a run over thousands of set-ups lints each in a
 * scratch arena, freed once its findings are kept, so that its memory stays that of one
 * set-up's simulations plus what is reported (issue 35, item 7). Every string and array a kept
 * finding points to is copied; what only the simulation's readers use (its columns, the wrap
 * patterns, the groups' members) is left out.
 */
#include <errno.h>
#include <string.h>

#include "lint-private.h"

/* A copier: the arena, and whether an allocation failed */
struct keeper {
	struct dtl_arena *arena;
	bool oom;
};

static const char *str(struct keeper *k, const char *s)
{
	char *copy;

	if (!s)
		return NULL;
	if (!(copy = dtl_arena_strndup(k->arena, s, strlen(s))))
		k->oom = true;
	return copy;
}

static void *mem(struct keeper *k, const void *p, size_t size)
{
	void *copy;

	if (!p || !size)
		return NULL;
	if (!(copy = dtl_arena_alloc(k->arena, size)))
		k->oom = true;
	else
		memcpy(copy, p, size);
	return copy;
}

static struct dtl_loc loc(struct keeper *k, struct dtl_loc l)
{
	l.file = str(k, l.file);
	return l;
}

static const struct dtl_trace_step *steps(struct keeper *k, const struct dtl_trace_step *s,
                                          size_t n)
{
	struct dtl_trace_step *copy = mem(k, s, n * sizeof(*s));

	for (size_t i = 0; copy && i < n; i++) {
		copy[i].name = str(k, s[i].name);
		copy[i].reason = str(k, s[i].reason);
		copy[i].fact = str(k, s[i].fact);
		copy[i].loc = loc(k, s[i].loc);
	}
	return copy;
}

static const struct dtl_finding_tensor *tensors(struct keeper *k,
                                                const struct dtl_finding_tensor *t, size_t n)
{
	struct dtl_finding_tensor *copy = mem(k, t, n * sizeof(*t));

	for (size_t i = 0; copy && i < n; i++) {
		copy[i].name = str(k, t[i].name);
		copy[i].loc = loc(k, t[i].loc);
		copy[i].shape = mem(k, t[i].shape, t[i].rank * sizeof(*t[i].shape));
		copy[i].steps = steps(k, t[i].steps, t[i].step_count);
	}
	return copy;
}

/* The finding's group (its name and place; not its members) */
static const struct dtl_group *group(struct keeper *k, const struct dtl_group *g)
{
	struct dtl_group *copy = mem(k, g, sizeof(*g));

	if (copy) {
		copy->name = str(k, g->name);
		copy->members = NULL;
		copy->count = g->count;
		copy->loc = loc(k, g->loc);
	}
	return copy;
}

static const struct dtl_finding_group *view_group(struct keeper *k,
                                                  const struct dtl_finding_group *g)
{
	struct dtl_finding_group *copy = mem(k, g, sizeof(*g));

	if (copy)
		copy->name = str(k, g->name);
	return copy;
}

static struct dtl_note *notes(struct keeper *k, const struct dtl_note *n, size_t count)
{
	struct dtl_note *copy = mem(k, n, count * sizeof(*n));

	for (size_t i = 0; copy && i < count; i++) {
		copy[i].loc = loc(k, n[i].loc);
		copy[i].text = str(k, n[i].text);
		copy[i].same_way = str(k, n[i].same_way);
	}
	return copy;
}

static const struct dtl_finding_range *ranges(struct keeper *k, const struct dtl_finding_range *r,
                                              size_t n)
{
	struct dtl_finding_range *copy = mem(k, r, n * sizeof(*r));

	for (size_t i = 0; copy && i < n; i++) {
		copy[i].name = str(k, r[i].name);
		copy[i].fires = str(k, r[i].fires);
		copy[i].from = str(k, r[i].from);
		copy[i].to = str(k, r[i].to);
		copy[i].allowed = str(k, r[i].allowed);
		copy[i].allowed_at = str(k, r[i].allowed_at);
		copy[i].avoided_by = str(k, r[i].avoided_by);
		copy[i].not_with = str(k, r[i].not_with);
	}
	return copy;
}

static void finding(struct keeper *k, struct dtl_finding *f)
{
	f->message = str(k, f->message);
	f->loc = loc(k, f->loc);
	f->error_text = str(k, f->error_text);
	f->error_when = str(k, f->error_when);
	f->error_versions = str(k, f->error_versions);
	f->effect = str(k, f->effect);
	f->tensors = mem(k, f->tensors, f->tensor_count * sizeof(*f->tensors));
	f->group = f->group ? group(k, f->group) : NULL;
	f->notes = notes(k, f->notes, f->note_count);
	f->fix = str(k, f->fix);
	f->ranges = ranges(k, f->ranges, f->range_count);
	f->view.tensors = tensors(k, f->view.tensors, f->view.tensors ? f->tensor_count : 0);
	f->view.group = f->view.group ? view_group(k, f->view.group) : NULL;
}

static struct dtl_findings *findings(struct keeper *k, const struct dtl_findings *from)
{
	struct dtl_findings *copy = dtl_arena_calloc(k->arena, 1, sizeof(*copy));
	size_t n = from->items.count;

	if (!copy) {
		k->oom = true;
		return NULL;
	}
	copy->items.items = mem(k, from->items.items, n * sizeof(struct dtl_finding));
	copy->items.count = copy->items.capacity = copy->items.items ? n : 0;
	struct dtl_finding *f = copy->items.items;
	for (size_t i = 0; i < copy->items.count; i++)
		finding(k, &f[i]);
	return copy;
}

/* The plan as the reports and the versions line read it: its values and where each came
 * from; the nested wrap and ZeRO-3 settings and the unmodelled uses are left out. */
static const struct dtl_plan *plan(struct keeper *k, const struct dtl_plan *p)
{
	struct dtl_plan *copy = mem(k, p, sizeof(*p));

	if (!copy)
		return NULL;
	copy->file = str(k, p->file);
	copy->loc = loc(k, p->loc);
	copy->strategy_loc = loc(k, p->strategy_loc);
	copy->precision_loc = loc(k, p->precision_loc);
	copy->precision_auto_loc = loc(k, p->precision_auto_loc);
	copy->world_size_loc = loc(k, p->world_size_loc);
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		copy->version_locs[fw] = loc(k, p->version_locs[fw]);
		copy->version_range[fw] = str(k, p->version_range[fw]);
	}
	copy->trainer = str(k, p->trainer);
	copy->trainer_loc = loc(k, p->trainer_loc);
	copy->trainer_range = str(k, p->trainer_range);
	memset(&copy->fsdp, 0, sizeof(copy->fsdp));
	memset(&copy->zero3, 0, sizeof(copy->zero3));
	memset(&copy->direct_access, 0, sizeof(copy->direct_access));
	copy->merge_loc = loc(k, p->merge_loc);
	copy->model_cast_loc = loc(k, p->model_cast_loc);
	copy->optimizer_loc = loc(k, p->optimizer_loc);
	copy->device_memory_loc = loc(k, p->device_memory_loc);
	copy->unmodelled = (struct dtl_vec){0};
	return copy;
}

/* The input's view without the simulation: its counts, its manifest's name and its plan */
static struct dtl_input_view *view(struct keeper *k, const struct dtl_input_view *v)
{
	struct dtl_input_view *copy = dtl_arena_calloc(k->arena, 1, sizeof(*copy));
	struct dtl_manifest *manifest = dtl_arena_calloc(k->arena, 1, sizeof(*manifest));

	if (!copy || !manifest) {
		k->oom = true;
		return NULL;
	}
	manifest->file = str(k, v->manifest->file);
	copy->manifest = manifest;
	copy->rp = v->rp;
	copy->rp.plan = plan(k, v->rp.plan);
	copy->rp.version_assumed =
	    mem(k, v->rp.version_assumed, DTL_FW_COUNT * sizeof(*v->rp.version_assumed));
	copy->rp.wrap = NULL;
	copy->tensor_count = v->tensor_count;
	copy->module_count = v->module_count;
	copy->group_count = v->group_count;
	return copy;
}

/* The importers' warnings (struct dtl_input_warning), which the reports show too */
static const struct dtl_vec *warnings(struct keeper *k, const struct dtl_vec *from)
{
	const struct dtl_input_warning *w = from->items;
	struct dtl_input_warning *copy = mem(k, w, from->count * sizeof(*w));
	struct dtl_vec *vec = mem(k, from, sizeof(*from));

	if (!copy || !vec)
		return NULL;
	for (size_t i = 0; i < from->count; i++) {
		copy[i].loc = loc(k, w[i].loc);
		copy[i].message = str(k, w[i].message);
	}
	*vec = (struct dtl_vec){.items = copy, .count = from->count, .capacity = from->count};
	return vec;
}

int dtl_lint_keep(const struct dtl_lint_result *result, struct dtl_arena *arena,
                  struct dtl_lint_result *ret)
{
	struct keeper k = {.arena = arena};

	*ret =
	    (struct dtl_lint_result){.suppressed = result->suppressed, .fail_on = result->fail_on};
	ret->findings = result->findings ? findings(&k, result->findings) : NULL;
	ret->view = result->view ? view(&k, result->view) : NULL;
	if (result->warnings && result->warnings->count)
		ret->warnings = warnings(&k, result->warnings);
	return k.oom ? -ENOMEM : 0;
}
