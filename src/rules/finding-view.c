/* SPDX-License-Identifier: MIT */
/* What reporters read of a linted input (include/dtypelint/rules/finding-view.h), resolved from the
 * finished simulation once the findings are final. */
#include <errno.h>
#include <string.h>

#include "dtypelint/sim/memory.h"
#include "dtypelint/rules/rules.h"
#include "dtypelint/sim/sim.h"

_Static_assert(sizeof(((struct dtl_memory_view *)0)->line) /
                       sizeof(((struct dtl_memory_view *)0)->line[0]) ==
                   DTL_MEM_PART_COUNT,
               "memory parts");

#define HISTORY_MAX 64

static void step_of(struct dtl_trace_step *s, const struct dtl_event *e)
{
	*s = (struct dtl_trace_step){.stage = (uint8_t)e->stage,
	                             .from = e->from,
	                             .to = e->to,
	                             .name = dtl_stage_name(e->stage),
	                             .reason = e->reason,
	                             .fact = e->fact,
	                             .loc = e->loc};
}

size_t dtl_input_view_history(const struct dtl_input_view *view, uint32_t t,
                              struct dtl_trace_step *out, size_t max)
{
	struct dtl_event history[HISTORY_MAX];
	size_t n = dtl_sim_history(view->sim, t, history, max < HISTORY_MAX ? max : HISTORY_MAX);

	for (size_t i = 0; i < n; i++)
		step_of(&out[i], &history[i]);
	return n;
}

struct dtl_loc dtl_input_view_tensor_loc(const struct dtl_input_view *view, uint32_t t)
{
	return dtl_sim_tensor_loc(view->sim, t);
}

static int tensor_of(struct dtl_finding_tensor *ft, const struct dtl_sim *sim, uint32_t t,
                     struct dtl_arena *arena)
{
	struct dtl_event history[HISTORY_MAX];
	size_t n = dtl_sim_history(sim, t, history, HISTORY_MAX);
	struct dtl_trace_step *steps = dtl_arena_alloc(arena, (n ? n : 1) * sizeof(*steps));
	uint32_t d = sim->t.decl[t];

	if (!steps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		step_of(&steps[i], &history[i]);
	*ft = (struct dtl_finding_tensor){.index = t,
	                                  .name = sim->t.name[t],
	                                  .kind = sim->t.kind[t],
	                                  .dtype = sim->t.dtype[t],
	                                  .compute_dtype = sim->t.compute_dtype[t],
	                                  .flags = sim->t.flags[t],
	                                  .loc = dtl_sim_tensor_loc(sim, t),
	                                  .numel = sim->t.numel[t],
	                                  .steps = steps,
	                                  .step_count = n};
	if (d != DTL_NONE_INDEX && sim->manifest->tensors[d].shape) {
		ft->shape = sim->manifest->tensors[d].shape;
		ft->rank = sim->manifest->tensors[d].rank;
	}
	return 0;
}

/* A finding's tensors and group; findings folded by dtl_check_merge_groups share none. */
static int finding_view(struct dtl_finding *f, const struct dtl_sim *sim, struct dtl_arena *arena)
{
	const struct dtl_group *groups = sim->groups.items;

	if (f->tensor_count) {
		struct dtl_finding_tensor *ts =
		    dtl_arena_alloc(arena, f->tensor_count * sizeof(*ts));
		if (!ts)
			return -ENOMEM;
		for (size_t i = 0; i < f->tensor_count; i++)
			if (tensor_of(&ts[i], sim, f->tensors[i], arena) < 0)
				return -ENOMEM;
		f->view.tensors = ts;
	}
	if (f->group) {
		struct dtl_finding_group *g = dtl_arena_alloc(arena, sizeof(*g));
		if (!g)
			return -ENOMEM;
		*g = (struct dtl_finding_group){.name = f->group->name,
		                                .kind = (enum dtl_group_kind)f->group->kind,
		                                .id = f->group >= groups &&
		                                              f->group < groups + sim->groups.count
		                                          ? (uint32_t)(f->group - groups)
		                                          : DTL_NONE_INDEX,
		                                .index = f->group->index,
		                                .module = f->group->module,
		                                .size = f->group->count};
		f->view.group = g;
	}
	return 0;
}

int dtl_input_view_init(struct dtl_input_view *view, const struct dtl_sim *sim,
                        struct dtl_findings *findings, struct dtl_arena *arena)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_table *t = &sim->t;

	*view = (struct dtl_input_view){.sim = sim,
	                                .manifest = sim->manifest,
	                                .rp = {.plan = &rp->plan,
	                                       .version_assumed = rp->version_assumed,
	                                       .world_size_assumed = rp->world_size_assumed,
	                                       .wrap = &rp->wrap,
	                                       .wrap_from_model = rp->wrap_from_model,
	                                       .wrap_module_lists = rp->wrap_module_lists,
	                                       .persistence_threshold = rp->persistence_threshold,
	                                       .zero_init = rp->zero_init,
	                                       .mode_dtype = (uint8_t)rp->mode_dtype,
	                                       .zero_init_dtype = (uint8_t)rp->zero_init_dtype,
	                                       .peft_wrap_policy = rp->peft_wrap_policy},
	                                .tensor_count = t->count,
	                                .module_count = sim->module_count,
	                                .group_count = sim->groups.count,
	                                .name = t->name,
	                                .name_len = t->name_len,
	                                .module = t->module,
	                                .next_in_module = t->next_in_module,
	                                .flags = t->flags,
	                                .group = t->group,
	                                .decl = t->decl,
	                                .order = t->order,
	                                .rank = t->rank,
	                                .kind = t->kind,
	                                .dtype = t->dtype,
	                                .compute_dtype = t->compute_dtype,
	                                .numel = t->numel};
	struct dtl_finding *f = findings->items.items;
	for (size_t i = 0; i < findings->items.count; i++)
		if (finding_view(&f[i], sim, arena) < 0)
			return -ENOMEM;
	return 0;
}

int dtl_input_view_tree(const struct dtl_input_view *view, struct dtl_arena *arena,
                        struct dtl_view_module **ret_modules, struct dtl_view_group **ret_groups)
{
	const struct dtl_sim *sim = view->sim;
	const struct dtl_group *groups = sim->groups.items;
	size_t nm = sim->module_count, ng = sim->groups.count;
	struct dtl_view_module *m = dtl_arena_alloc(arena, (nm ? nm : 1) * sizeof(*m));
	struct dtl_view_group *g = dtl_arena_alloc(arena, (ng ? ng : 1) * sizeof(*g));

	if (!m || !g)
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++) {
		const struct dtl_module *s = &sim->modules[i];
		m[i] = (struct dtl_view_module){.path = s->path,
		                                .path_len = s->path_len,
		                                .parent = s->parent,
		                                .first_child = s->first_child,
		                                .next_sibling = s->next_sibling,
		                                .first_tensor = s->first_tensor,
		                                .wrapped = s->wrapped,
		                                .class_name = s->class_name};
	}
	for (size_t i = 0; i < ng; i++)
		g[i] = (struct dtl_view_group){.kind = (enum dtl_group_kind)groups[i].kind,
		                               .name = groups[i].name,
		                               .module = groups[i].module,
		                               .index = groups[i].index,
		                               .members = groups[i].members,
		                               .count = groups[i].count};
	*ret_modules = m;
	*ret_groups = g;
	return 0;
}

void dtl_memory_view_init(struct dtl_memory_view *view, const struct dtl_memory *m)
{
	*view = (struct dtl_memory_view){.line_count = DTL_MEM_PART_COUNT,
	                                 .strategy = dtl_strategy_name(m->strategy),
	                                 .optimizer = dtl_optimizer_name(m->optimizer),
	                                 .world_size = m->world_size,
	                                 .total = m->total,
	                                 .host = m->host,
	                                 .gathered_name = m->gathered_name,
	                                 .unknown_numel = m->unknown_numel};
	for (int p = 0; p < DTL_MEM_PART_COUNT; p++)
		view->line[p] = (struct dtl_memory_view_line){
		    .name = dtl_memory_part_name(p),
		    .device = m->line[p].device,
		    .host = m->line[p].host,
		    .by_dtype = m->line[p].by_dtype,
		    .rule = m->line[p].rule,
		    .source = m->line[p].source,
		    .largest = p == DTL_MEM_GATHERED ? m->gathered_name : NULL};
}

const char *dtl_view_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	return dtl_memory_format(bytes, buf, size);
}
