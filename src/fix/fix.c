/* SPDX-License-Identifier: MIT */
/*
 * --fix-plan: candidates per finding (only fixes the facts support), applied to copies and
 * re-simulated. A candidate is kept only when it removes the finding it was proposed for;
 * candidates are ranked by the findings left, the findings created and their cost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/fix/fix.h"
#include "dtypelint/sim/sim.h"

/* A finding's identity across re-simulations: its rule and group (a unit that still fails
 * with another offender is the same finding), else its first tensor, else its message. */
const char *dtl_fix_finding_key(struct dtl_arena *arena, const struct dtl_sim *sim,
                                const struct dtl_finding *f)
{
	if (f->group)
		return dtl_arena_sprintf(arena, "%s|%s", f->rule->id, f->group->name);
	if (f->tensor_count)
		return dtl_arena_sprintf(arena, "%s||%s", f->rule->id, sim->t.name[f->tensors[0]]);
	/* no tensor: its position (DT801's figures change with every fix; where it points,
	 * device_memory, does not) */
	return dtl_arena_sprintf(arena, "%s|||%s:%u:%u", f->rule->id,
	                         f->loc.file ? f->loc.file : "", f->loc.line, f->loc.column);
}

/* The candidates the finding's rule proposes (its propose_fixes), as fixes to evaluate. */
static int candidates(const struct dtl_sim *sim, const struct dtl_finding *f, struct dtl_arena *a,
                      struct dtl_vec *out)
{
	struct dtl_vec proposed = {0};
	struct dtl_fix_request req = {
	    .sim = sim, .finding = f, .arena = a, .candidates = &proposed};
	const struct dtl_fix_candidate *c;
	int r;

	if (!f->rule->propose_fixes)
		return 0;
	if ((r = f->rule->propose_fixes(&req)) < 0)
		return r;
	c = proposed.items;
	for (size_t k = 0; k < proposed.count; k++) {
		struct dtl_fix *fix = dtl_vec_push(out, a, sizeof(*fix));
		if (!fix)
			return -ENOMEM;
		*fix = (struct dtl_fix){.proposed = c[k]};
	}
	return 0;
}

static struct dtl_patterns append(struct dtl_arena *arena, const struct dtl_patterns *base,
                                  const char *text, bool *ok)
{
	struct dtl_patterns p = *base;
	p.items = dtl_arena_calloc(arena, base->count + 1, sizeof(*p.items));
	*ok = p.items != NULL;
	if (!p.items)
		return p;
	if (base->count)
		memcpy(p.items, base->items, base->count * sizeof(*p.items));
	p.items[base->count].text = text;
	p.items[base->count].len = (uint32_t)strlen(text);
	p.count = base->count + 1;
	p.present = true;
	return p;
}

/* p without the patterns that are exactly text (a copy: p's items are shared). */
static int remove_exact(struct dtl_arena *arena, struct dtl_patterns *p, const char *text)
{
	struct dtl_pattern *items = dtl_arena_calloc(arena, p->count + 1, sizeof(*items));
	size_t n = 0;

	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < p->count; i++)
		if (strlen(text) != p->items[i].len ||
		    memcmp(p->items[i].text, text, p->items[i].len) != 0)
			items[n++] = p->items[i];
	p->items = items;
	p->count = n;
	return 0;
}

/* Explicit adapters (exported after get_peft_model) take the base dtype: with autocast off,
 * the f32 LoRA tensors of m (copied, as m's table is shared) load in the checkpoint dtype. */
static int adapters_take_base_dtype(struct dtl_manifest *m, struct dtl_arena *arena)
{
	for (size_t i = 0; i < m->tensor_count; i++) {
		const char *n = m->tensors[i].name;
		if (strstr(n, ".lora_") && m->tensors[i].dtype == DTL_DTYPE_F32) {
			struct dtl_tensor_decl *copy =
			    dtl_arena_calloc(arena, m->tensor_count, sizeof(*copy));
			if (!copy)
				return -ENOMEM;
			memcpy(copy, m->tensors, m->tensor_count * sizeof(*copy));
			m->tensors = copy;
			for (size_t k = 0; k < m->tensor_count; k++)
				if (strstr(copy[k].name, ".lora_") &&
				    copy[k].dtype == DTL_DTYPE_F32)
					copy[k].dtype = DTL_DTYPE_NONE; /* the checkpoint dtype */
			return 0;
		}
	}
	return 0;
}

int dtl_fix_apply(const struct dtl_fix *fix, struct dtl_manifest *m, struct dtl_plan *plan,
                  struct dtl_arena *arena)
{
	static const struct dtl_loc fixed = {.file = "--fix-plan", .line = 1, .column = 1};
	bool ok = true;

	switch (fix->proposed.kind) {
	case DTL_FIX_VERSION:
		if (dtl_version_parse(fix->proposed.text, strlen(fix->proposed.text),
		                      &plan->versions[fix->proposed.framework]) < 0)
			return -EINVAL;
		plan->version_locs[fix->proposed.framework] = fixed;
		break;
	case DTL_FIX_ALLGATHER_SEQUENTIAL:
		plan->zero3.allgather_sequential = DTL_TRUE;
		plan->zero3.allgather_sequential_loc = fixed;
		break;
	case DTL_FIX_PERSISTENCE_ZERO:
		plan->zero3.persistence_threshold = 0;
		plan->zero3.persistence_auto = false;
		plan->zero3.persistence_threshold_loc = fixed;
		break;
	case DTL_FIX_AUTOCAST_OFF:
		m->adapter.autocast_adapter_dtype = DTL_FALSE;
		m->adapter.autocast_adapter_dtype_loc = fixed;
		if (!m->adapter.present && adapters_take_base_dtype(m, arena) < 0)
			return -ENOMEM;
		break;
	case DTL_FIX_QUANT_STORAGE:
		m->quantization.quant_storage = fix->proposed.dtype;
		m->quantization.quant_storage_loc = fixed;
		break;
	case DTL_FIX_USE_ORIG_PARAMS:
		plan->fsdp.use_orig_params = DTL_TRUE;
		plan->fsdp.use_orig_params_loc = fixed;
		break;
	case DTL_FIX_WRAP_ADD: {
		const struct dtl_patterns *base =
		    plan->fsdp.wrap.present ? &plan->fsdp.wrap : &m->model.no_split_modules;
		plan->fsdp.wrap = append(arena, base, fix->proposed.text, &ok);
		break;
	}
	case DTL_FIX_WRAP_REMOVE: {
		struct dtl_patterns w =
		    plan->fsdp.wrap.present ? plan->fsdp.wrap : m->model.no_split_modules;
		if (remove_exact(arena, &w, fix->proposed.text) < 0)
			return -ENOMEM;
		w.present = true;
		plan->fsdp.wrap = w;
		break;
	}
	case DTL_FIX_IGNORE_ADD:
		plan->fsdp.ignored = append(arena, &plan->fsdp.ignored, fix->proposed.text, &ok);
		break;
	case DTL_FIX_FSDP_BUFFER_DTYPE:
		plan->fsdp.buffer_dtype = fix->proposed.dtype;
		plan->fsdp.buffer_dtype_loc = fixed;
		break;
	case DTL_FIX_ZERO3_BUFFER_DTYPE:
		plan->zero3.buffer_dtype = fix->proposed.dtype;
		plan->zero3.buffer_dtype_loc = fixed;
		break;
	case DTL_FIX_KEEP_STRICT_ADD:
		m->model.keep_in_fp32_strict =
		    append(arena, &m->model.keep_in_fp32_strict, fix->proposed.text, &ok);
		break;
	case DTL_FIX_WORLD_SIZE:
		plan->world_size = strtoll(fix->proposed.text, NULL, 10);
		plan->world_size_loc = fixed;
		break;
	case DTL_FIX_OFFLOAD_OPTIMIZER:
		plan->zero3.offload_optimizer = DTL_OFFLOAD_CPU;
		plan->zero3.offload_optimizer_loc = fixed;
		break;
	case DTL_FIX_FSDP_CPU_OFFLOAD:
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = fixed;
		break;
	case DTL_FIX_OPTIMIZER_8BIT:
		plan->optimizer = DTL_OPTIMIZER_ADAMW_8BIT;
		plan->optimizer_loc = fixed;
		break;
	case DTL_FIX_GATHER_CONTEXT: {
		/* the read, gathered, is no longer one of a partitioned tensor: the patterns
		 * naming exactly it go (a glob naming others too stays: nothing is proven) */
		struct dtl_patterns d = plan->direct_access;
		if (remove_exact(arena, &d, fix->proposed.text) < 0)
			return -ENOMEM;
		plan->direct_access = d;
		break;
	}
	}
	return ok ? 0 : -ENOMEM;
}

static size_t serious(const struct dtl_findings *f)
{
	const struct dtl_finding *items = f->items.items;
	size_t n = 0;
	for (size_t i = 0; i < f->items.count; i++)
		n += items[i].severity >= DTL_SEVERITY_WARNING;
	return n;
}

static int evaluate(const struct dtl_fix_context *ctx, const struct dtl_sim *sim,
                    const struct dtl_findings *findings, const char *target,
                    enum dtl_severity target_severity, struct dtl_fix *fix, struct dtl_error *error)
{
	struct dtl_manifest m = *ctx->manifest;
	struct dtl_plan plan = *ctx->plan;
	struct dtl_sim *after = dtl_arena_alloc(ctx->arena, sizeof(*after));
	struct dtl_findings *found = dtl_arena_alloc(ctx->arena, sizeof(*found));
	struct dtl_strmap before;
	int r;

	if (!after || !found)
		return -ENOMEM;
	if ((r = dtl_fix_apply(fix, &m, &plan, ctx->arena)) < 0)
		return r;
	/* the plan is applied through the manifest: the simulation reads both */
	m.plan = plan;
	r = dtl_sim_run(after, &m, &plan, ctx->behaviors, ctx->arena, error);
	if (r < 0)
		return r;
	if ((r = dtl_rules_run(after, ctx->selection, ctx->ops, found, error)) < 0)
		return r;
	dtl_strmap_init(&before, ctx->arena);
	const struct dtl_finding *old = findings->items.items, *now = found->items.items;
	for (size_t i = 0; i < findings->items.count; i++) {
		const char *k = dtl_fix_finding_key(ctx->arena, sim, &old[i]);
		if (!k || dtl_strmap_put(&before, k, strlen(k), (int64_t)i) < 0)
			return -ENOMEM;
	}
	fix->before = serious(findings);
	fix->after = serious(found);
	fix->total_after = found->items.count;
	fix->resolves = true;
	fix->appeared = dtl_arena_calloc(ctx->arena, found->items.count + 1, sizeof(char *));
	if (!fix->appeared)
		return -ENOMEM;
	for (size_t i = 0; i < found->items.count; i++) {
		const char *k = dtl_fix_finding_key(ctx->arena, after, &now[i]);
		if (!k)
			return -ENOMEM;
		/* still there at the same severity or worse (a DT102 error may become a warning) */
		if (strcmp(k, target) == 0 && now[i].severity >= target_severity)
			fix->resolves = false;
		if (dtl_strmap_get(&before, k, strlen(k)) < 0 &&
		    now[i].severity >= DTL_SEVERITY_WARNING)
			fix->appeared[fix->appeared_count++] =
			    dtl_arena_sprintf(ctx->arena, "%s %s: %s", now[i].rule->id,
			                      now[i].rule->name, now[i].message);
	}
	return 0;
}

static int rank(const void *pa, const void *pb)
{
	const struct dtl_fix *a = pa, *b = pb;
	if (a->resolves != b->resolves)
		return a->resolves ? -1 : 1;
	if (a->appeared_count != b->appeared_count)
		return a->appeared_count < b->appeared_count ? -1 : 1;
	if (a->after != b->after)
		return a->after < b->after ? -1 : 1;
	if (a->proposed.cost != b->proposed.cost)
		return a->proposed.cost - b->proposed.cost;
	if (a->total_after != b->total_after)
		return a->total_after < b->total_after ? -1 : 1;
	return strcmp(a->proposed.title, b->proposed.title);
}

int dtl_fix_plan_build(const struct dtl_fix_context *ctx, const struct dtl_sim *sim,
                       const struct dtl_findings *findings, struct dtl_fix_plan *ret_plan,
                       struct dtl_error *error)
{
	const struct dtl_finding *f = findings->items.items;
	struct dtl_fix_plan plan = {0};
	int r;

	plan.items = dtl_arena_calloc(ctx->arena, findings->items.count + 1, sizeof(*plan.items));
	if (!plan.items)
		return -ENOMEM;
	for (size_t i = 0; i < findings->items.count; i++) {
		struct dtl_vec fixes = {0};
		struct dtl_fix_item *item = &plan.items[plan.count++];
		item->finding = &f[i];
		if ((r = candidates(sim, &f[i], ctx->arena, &fixes)) < 0)
			return r;
		const char *target = dtl_fix_finding_key(ctx->arena, sim, &f[i]);
		if (!target)
			return -ENOMEM;
		for (size_t k = 0; k < fixes.count; k++)
			if ((r = evaluate(ctx, sim, findings, target, f[i].severity,
			                  &((struct dtl_fix *)fixes.items)[k], error)) < 0)
				return r;
		/* only candidates that remove the finding are proposed */
		size_t kept = 0;
		struct dtl_fix *all = fixes.items;
		for (size_t k = 0; k < fixes.count; k++)
			if (all[k].resolves)
				all[kept++] = all[k];
		if (kept > 1)
			qsort(all, kept, sizeof(*all), rank);
		item->fixes = all;
		item->count = kept;
	}
	*ret_plan = plan;
	return 0;
}
