/* SPDX-License-Identifier: MIT */
/*
 * The shard stage: FSDP1 units, FSDP2 groups and the ZeRO-3 persistent and trainable sets.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/core/glob.h"
#include "sim-private.h"

/*
 * The wrap and ignored patterns, compiled once per run so that matching every module does not
 * cost modules x patterns (include/dtypelint/core/glob.h).
 */
struct shard_patterns {
	struct dtl_strmap wrap_classes; /* class name -> first wrap entry naming it */
	struct dtl_globset wrap;        /* every wrap entry, as a path glob */
	struct dtl_globset ignored;
	/* modules parent first, tensors in creation order: the walks reuse what they share */
	struct dtl_module_match wrap_modules, ignored_modules;
	struct dtl_globset_cursor *ignored_tensors;
	/* wrap_classes' answers for the last class names asked, by their pointer: a model has
	 * a few classes, the pointers its modules share (the globs' values), asked 100k times */
	struct {
		const char *class_name;
		int64_t first;
	} by_class[16];
};

static int compile_patterns(struct dtl_sim *sim, struct shard_patterns *sp)
{
	const struct dtl_patterns *wrap = &sim->rp.wrap, *ignored = &sim->rp.plan.fsdp.ignored;

	dtl_strmap_init(&sp->wrap_classes, sim->arena);
	dtl_globset_init(&sp->wrap, sim->arena);
	dtl_globset_init(&sp->ignored, sim->arena);
	for (size_t i = 0; i < wrap->count; i++) {
		const struct dtl_pattern *p = &wrap->items[i];
		if (dtl_strmap_put(&sp->wrap_classes, p->text, p->len, (int64_t)i) < 0 ||
		    dtl_globset_add(&sp->wrap, p->text, p->len) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < ignored->count; i++)
		if (dtl_globset_add(&sp->ignored, ignored->items[i].text, ignored->items[i].len) <
		    0)
			return -ENOMEM;
	sp->ignored_tensors = dtl_globset_cursor_new(&sp->ignored, sim->arena);
	if (dtl_module_match_init(&sp->wrap_modules, sim, &sp->wrap) < 0 ||
	    dtl_module_match_init(&sp->ignored_modules, sim, &sp->ignored) < 0 ||
	    !sp->ignored_tensors)
		return -ENOMEM;
	return 0;
}

/* A module is a unit / fully_shard target when its class is in the wrap list or its path
 * matches a wrap glob (the root is always one): the first wrap entry that does either. */
static const struct dtl_pattern *wrap_match(const struct dtl_sim *sim, struct shard_patterns *sp,
                                            uint32_t mod)
{
	const struct dtl_module *m = &sim->modules[mod];
	int64_t first = dtl_module_match_first(&sp->wrap_modules, sim, mod);

	if (m->class_name) {
		size_t slot = ((uintptr_t)m->class_name >> 3) % 16;
		if (sp->by_class[slot].class_name != m->class_name) {
			sp->by_class[slot].class_name = m->class_name;
			sp->by_class[slot].first =
			    dtl_strmap_get(&sp->wrap_classes, m->class_name, strlen(m->class_name));
		}
		int64_t by_class = sp->by_class[slot].first;
		if (by_class >= 0 && (first < 0 || by_class < first))
			first = by_class;
	}
	return first < 0 ? NULL : &sim->rp.wrap.items[first];
}

/* apply_fsdp2_sharding_recursively's containers: isinstance(module, (nn.ModuleList,
 * nn.ModuleDict)); nn.Sequential is not one */
static bool container_class(const char *class_name)
{
	return class_name &&
	       (strcmp(class_name, "ModuleList") == 0 || strcmp(class_name, "ModuleDict") == 0);
}

/*
 * NeMo Automodel's FSDP2 unit: a child of a ModuleList (or ModuleDict) that is not itself one
 * (rules/versions.yaml recipes: automodel-fsdp2-module-list-units). The tree has no class for
 * most modules, so the parent is a container when the profile names its class ModuleList or
 * ModuleDict, and, with no class for it, when the child's name is an index: torch names the
 * children of a ModuleList "0", "1", ... An nn.Sequential names them so too; a profile that
 * says the parent is a Sequential, or any other class, makes its children none.
 */
static bool module_list_child(const struct dtl_sim *sim, uint32_t mod)
{
	const struct dtl_module *m = &sim->modules[mod];
	const struct dtl_module *parent = &sim->modules[m->parent];

	/* a nested ModuleList (a ModuleDict inside a ModuleDict) is walked into, not sharded */
	if (m->class_name && (strcmp(m->class_name, "ModuleList") == 0 ||
	                      (strcmp(m->class_name, "ModuleDict") == 0 && parent->class_name &&
	                       strcmp(parent->class_name, "ModuleDict") == 0)))
		return false;
	if (parent->class_name)
		return container_class(parent->class_name);
	const char *last = memrchr(m->path, '.', m->path_len);
	size_t from = last ? (size_t)(last - m->path) + 1 : 0;
	if (from == m->path_len)
		return false;
	for (size_t k = from; k < m->path_len; k++)
		if (m->path[k] < '0' || m->path[k] > '9')
			return false;
	return true;
}

/* the rule's description when the resolved plan could not keep one (out of memory there) */
static const struct dtl_pattern automodel_rule = {.text = "every child of a ModuleList", .len = 27};

/* The pattern that makes module mod a unit: the wrap list's, or under NeMo Automodel's rule
 * the rule's own description when mod is a ModuleList child that no unit above holds
 * (Automodel does not walk into a child it sharded); unit_module is set for the parents. */
static const struct dtl_pattern *unit_pattern(const struct dtl_sim *sim, struct shard_patterns *sp,
                                              const uint32_t *unit_module, uint32_t mod)
{
	if (!sim->rp.wrap_module_lists)
		return wrap_match(sim, sp, mod);
	if (unit_module[sim->modules[mod].parent] != 0 || !module_list_child(sim, mod))
		return NULL;
	return sim->rp.wrap.count ? &sim->rp.wrap.items[0] : &automodel_rule;
}

/* Ignored modules: a glob names the module or any module above it (the root excepted). */
static int ignored_modules(const struct dtl_sim *sim, struct shard_patterns *sp,
                           uint8_t **ret_ignored)
{
	uint8_t *ignored =
	    dtl_arena_calloc(sim->arena, sim->module_count ? sim->module_count : 1, 1);

	if (!ignored)
		return -ENOMEM;
	/* modules are created parent first, so one pass in index order sees parents first */
	for (size_t i = 1; sp->ignored.count && i < sim->module_count; i++)
		ignored[i] = ignored[sim->modules[i].parent] ||
		             dtl_module_match_first(&sp->ignored_modules, sim, (uint32_t)i) >= 0;
	*ret_ignored = ignored;
	return 0;
}

static bool is_ignored(const struct dtl_sim *sim, struct shard_patterns *sp,
                       const uint8_t *ignored_module, uint32_t t)
{
	if (!sp->ignored.count)
		return false;
	return ignored_module[sim->t.module[t]] ||
	       dtl_globset_cursor_first(sp->ignored_tensors, sim->t.name[t], sim->t.name_len[t]) >=
	           0;
}

static struct dtl_group *new_group(struct dtl_sim *sim, enum dtl_group_kind kind, const char *name,
                                   uint32_t module, struct dtl_loc loc)
{
	struct dtl_group *g = dtl_vec_push(&sim->groups, sim->arena, sizeof(*g));

	if (!g)
		return NULL;
	g->kind = kind;
	g->name = name;
	g->module = module;
	g->index = (uint32_t)(sim->groups.count - 1);
	g->loc = loc;
	return g;
}

static int fill_members(struct dtl_sim *sim, size_t first_group)
{
	struct dtl_group *groups = sim->groups.items;
	size_t n = sim->groups.count;
	size_t *fill = dtl_arena_calloc(sim->arena, n ? n : 1, sizeof(*fill));

	if (!fill)
		return -ENOMEM;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k], g = sim->t.group[t];
		if (g != DTL_NONE_INDEX && !(sim->t.flags[t] & DTL_TF_ALIAS))
			groups[g].count++;
	}
	for (size_t g = first_group; g < n; g++) {
		groups[g].members = dtl_arena_calloc(
		    sim->arena, groups[g].count ? groups[g].count : 1, sizeof(uint32_t));
		if (!groups[g].members)
			return -ENOMEM;
	}
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k], g = sim->t.group[t];
		if (g != DTL_NONE_INDEX && !(sim->t.flags[t] & DTL_TF_ALIAS))
			groups[g].members[fill[g]++] = t;
	}
	return 0;
}

/* PEFT's fsdp_auto_wrap_policy, lambda part: a leaf module whose weight requires grad (the
 * LoRA A / B layers, DoRA magnitudes, modules_to_save copies) is a unit of its own. */
static bool trainable_leaf(const struct dtl_sim *sim, uint32_t mod)
{
	const struct dtl_module *m = &sim->modules[mod];

	if (m->first_child != DTL_NONE_INDEX)
		return false;
	for (uint32_t t = m->first_tensor; t != DTL_NONE_INDEX; t = sim->t.next_in_module[t])
		if (sim->t.name_len[t] == m->path_len + 7 &&
		    memcmp(sim->t.name[t] + m->path_len + 1, "weight", 6) == 0)
			return sim->t.kind[t] == DTL_KIND_PARAM &&
			       (sim->t.flags[t] & DTL_TF_TRAINABLE);
	return false;
}

static const struct dtl_pattern *peft_wrap_pattern(struct dtl_sim *sim)
{
	struct dtl_pattern *p = dtl_arena_calloc(sim->arena, 1, sizeof(*p));
	if (!p)
		return NULL;
	const char *trainer = sim->rp.plan.trainer;
	p->text = trainer && strcmp(trainer, "verl") == 0
	              ? "verl get_fsdp_wrap_policy(is_lora=True) (a leaf module whose weight "
	                "requires grad)"
	              : "PEFT fsdp_auto_wrap_policy (a leaf module whose weight requires grad)";
	p->len = (uint32_t)strlen(p->text);
	p->loc = dtl_sim_plan_loc(sim, sim->rp.plan.trainer_loc, sim->manifest->adapter.loc);
	return p;
}

/*
 * FSDP1's _recursive_wrap
 * (https://github.com/pytorch/pytorch/blob/v2.7.1/torch/distributed/fsdp/wrap.py) and FSDP2's
 * fully_shard called bottom-up: wrapping runs post-order, children first; a unit/group owns the
 * parameters of its subtree that no nested unit took, minus ignored ones; the root takes the
 * leftovers. So each parameter belongs to its nearest wrapped ancestor, and units are built in
 * post-order with the root last.
 */
static int fsdp_groups(struct dtl_sim *sim, enum dtl_group_kind kind)
{
	size_t nmod = sim->module_count;
	uint32_t *unit_module = dtl_arena_calloc(sim->arena, nmod, sizeof(uint32_t));
	uint32_t *group_of = dtl_arena_calloc(sim->arena, nmod, sizeof(uint32_t));
	uint32_t *stack = dtl_arena_calloc(sim->arena, nmod + 1, sizeof(uint32_t));
	uint8_t *expanded = dtl_arena_calloc(sim->arena, nmod, 1);
	uint8_t *ignored;
	struct shard_patterns sp = {0};
	int r;

	uint8_t *carve =
	    kind == DTL_GROUP_FSDP2_GROUP ? dtl_arena_calloc(sim->arena, nmod, 1) : NULL;
	struct dtl_pattern *carve_why = dtl_arena_calloc(sim->arena, 1, sizeof(*carve_why));
	uint32_t tail_group = DTL_NONE_INDEX;

	if (!unit_module || !group_of || !stack || !expanded || !carve_why ||
	    (kind == DTL_GROUP_FSDP2_GROUP && !carve))
		return -ENOMEM;
	if (carve && (r = dtl_sim_accelerate_fsdp2_carve(sim, carve, carve_why)) < 0)
		return r;
	if ((r = compile_patterns(sim, &sp)) < 0 || (r = ignored_modules(sim, &sp, &ignored)) < 0)
		return r;
	const struct dtl_pattern *peft_policy =
	    kind == DTL_GROUP_FSDP1_UNIT && dtl_sim_hf_peft_fsdp(sim) ? peft_wrap_pattern(sim)
	                                                              : NULL;
	if (kind == DTL_GROUP_FSDP1_UNIT && dtl_sim_hf_peft_fsdp(sim) && !peft_policy)
		return -ENOMEM;
	sim->rp.peft_wrap_policy = peft_policy != NULL;
	/* modules are created parent first, so one pass in index order sees parents first */
	for (size_t i = 0; i < nmod; i++) {
		struct dtl_module *m = &sim->modules[i];
		const struct dtl_pattern *p =
		    i ? unit_pattern(sim, &sp, unit_module, (uint32_t)i) : NULL;
		if (!p && i && peft_policy && trainable_leaf(sim, (uint32_t)i))
			p = peft_policy;
		if (!p && i && carve && carve[i])
			p = carve_why;
		m->wrapped = i == 0 || p;
		m->wrap = p;
		unit_module[i] = m->wrapped ? (uint32_t)i : unit_module[m->parent];
		group_of[i] = DTL_NONE_INDEX;
	}
	/* post-order over wrapped modules: construction order of the units */
	size_t top = 0;
	stack[top++] = 0;
	while (top) {
		uint32_t mod = stack[top - 1];
		struct dtl_module *m = &sim->modules[mod];
		if (!expanded[mod]) {
			expanded[mod] = 1;
			size_t first = top;
			for (uint32_t c = m->first_child; c != DTL_NONE_INDEX;
			     c = sim->modules[c].next_sibling)
				stack[top++] = c;
			for (size_t a = first, b = top - 1; a < b; a++, b--) {
				uint32_t tmp = stack[a];
				stack[a] = stack[b];
				stack[b] = tmp;
			}
			continue;
		}
		top--;
		if (!m->wrapped)
			continue;
		if (carve && carve[mod] == 2 && tail_group != DTL_NONE_INDEX) {
			/* fully_shard([final_norm, ...]): one group for the tail's modules */
			struct dtl_group *tail =
			    &((struct dtl_group *)sim->groups.items)[tail_group];
			tail->name = dtl_arena_sprintf(sim->arena, "%s+%.*s", tail->name,
			                               (int)m->path_len, m->path);
			if (!tail->name)
				return -ENOMEM;
			group_of[mod] = tail_group;
			continue;
		}
		const char *name =
		    mod ? dtl_arena_strndup(sim->arena, m->path, m->path_len) : "<root>";
		struct dtl_loc loc =
		    mod ? m->wrap->loc
		        : dtl_sim_plan_loc(sim, sim->rp.plan.strategy_loc, sim->rp.plan.loc);
		struct dtl_group *g = new_group(sim, kind, name, mod, loc);
		if (!name || !g)
			return -ENOMEM;
		group_of[mod] = g->index;
		if (carve && carve[mod] == 2)
			tail_group = g->index;
	}
	/* parameters to groups; a tied parameter goes to the first unit built that holds any of
	 * its names (FSDP skips parameters already flattened / managed) */
	for (size_t t = 0; t < sim->t.count; t++) {
		/* an ignored module's buffers are FSDP1's _ignored_buffer_names: its buffer_dtype
		 * cast skips them (the compute stage) */
		if (sim->t.kind[t] == DTL_KIND_BUFFER && ignored[sim->t.module[t]])
			sim->t.flags[t] |= DTL_TF_IGNORED;
		if (sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		/* ignored by a glob, or by an earlier stage (accelerate's Params4bit exclusion) */
		if ((sim->t.flags[t] & DTL_TF_IGNORED) ||
		    is_ignored(sim, &sp, ignored, (uint32_t)t)) {
			sim->t.flags[t] |= DTL_TF_IGNORED;
			continue;
		}
		sim->t.group[t] = group_of[unit_module[sim->t.module[t]]];
		sim->t.home_group[t] = sim->t.group[t];
	}
	for (size_t t = 0; t < sim->t.count; t++) {
		uint32_t of = sim->t.alias_of[t];
		if (of != DTL_NONE_INDEX && sim->t.group[t] != DTL_NONE_INDEX &&
		    sim->t.group[t] < sim->t.group[of])
			sim->t.group[of] = sim->t.group[t];
	}
	return fill_members(sim, 0);
}

/*
 * The dtype FSDP2 reduces a trainable parameter's gradient in under MixedPrecisionPolicy(
 * param_dtype=..., reduce_dtype=None): param_dtype before torch 2.15, from 2.15 the parameter's
 * grad dtype, its own (rules/versions.yaml fsdp2-reduce-dtype-follows-grad, whose release is
 * unverified). From 2.15 it is noted in the trace of the parameters where the two differ;
 * no rule reads it.
 */
static int fsdp2_reduce_notes(struct dtl_sim *sim)
{
	static const char *fact = "https://github.com/pytorch/pytorch/blob/"
	                          "01d5c2cc8ac53ec6f45d10e2b90f7387df1f1ac4/torch/distributed/"
	                          "fsdp/_fully_shard/_fsdp_api.py";
	const struct dtl_plan_fsdp *f = &sim->rp.plan.fsdp;
	bool follows = dtl_sim_behavior(sim, DTL_B_FSDP2_REDUCE_FOLLOWS_GRAD);
	char v[32];

	/* the long-standing reduction in param_dtype needs no note */
	if (!follows || f->reduce_dtype != DTL_DTYPE_NONE || f->param_dtype == DTL_DTYPE_NONE)
		return 0;
	dtl_version_format(&sim->rp.plan.versions[DTL_FW_TORCH], v, sizeof(v));
	for (uint32_t t = 0; t < sim->t.count; t++) {
		enum dtl_dtype d = sim->t.dtype[t];
		if (sim->t.kind[t] != DTL_KIND_PARAM || sim->t.group[t] == DTL_NONE_INDEX ||
		    !(sim->t.flags[t] & DTL_TF_TRAINABLE) || !dtl_dtype_is_floating(d) ||
		    d == f->param_dtype)
			continue;
		const char *why = dtl_arena_sprintf(
		    sim->arena,
		    "reduce_dtype=None: torch %s reduces its gradient in its grad dtype, %s, not "
		    "in param_dtype %s as before 2.15",
		    v, dtl_dtype_name(d), dtl_dtype_name(f->param_dtype));
		if (!why)
			return -ENOMEM;
		int r = dtl_sim_note(sim, t, DTL_STAGE_SHARD, why, fact, f->param_dtype_loc);
		if (r < 0)
			return r;
	}
	return 0;
}

static int zero3_sets(struct dtl_sim *sim)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	struct dtl_loc loc =
	    dtl_sim_plan_loc(sim, rp->plan.zero3.persistence_threshold_loc, rp->plan.zero3.loc);
	struct dtl_group *persistent = new_group(
	    sim, DTL_GROUP_ZERO3_PERSISTENT, "ZeRO-3 persistent parameters", DTL_NONE_INDEX, loc);
	int64_t total = 0;
	int r;

	if (!persistent)
		return -ENOMEM;
	/* DeepSpeed's mark_persistent_parameters (deepspeed/runtime/zero/parameter_offload.py):
	 * named_parameters() order, persist
	 * when numel <= threshold; one that would pass the model threshold is skipped (continue,
	 * not break); requires_grad plays no part */
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		int64_t numel = sim->t.numel[t];
		if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS) ||
		    numel < 0)
			continue;
		if (numel > rp->persistence_threshold)
			continue;
		if (numel > rp->model_persistence_threshold - total)
			continue;
		total += numel;
		sim->t.flags[t] |= DTL_TF_ZERO_PERSIST;
		sim->t.group[t] = persistent->index;
		const char *reason =
		    dtl_arena_sprintf(sim->arena, "persistent in ZeRO-3 (numel %lld <= %lld)",
		                      (long long)numel, (long long)rp->persistence_threshold);
		r = dtl_sim_note(sim, t, DTL_STAGE_SHARD, reason,
		                 "https://github.com/deepspeedai/DeepSpeed/blob/"
		                 "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
		                 "parameter_offload.py#L311-L329",
		                 loc);
		if (r < 0)
			return r;
	}
	r = fill_members(sim, persistent->index);
	if (r < 0)
		return r;
	/* the trainable set: what the optimizer defragments into one buffer (rules/versions.yaml
	 * deepspeed-defragment-assert) */
	struct dtl_group *trainable =
	    new_group(sim, DTL_GROUP_ZERO3_TRAINABLE, "ZeRO-3 trainable parameters", DTL_NONE_INDEX,
	              dtl_sim_plan_loc(sim, rp->plan.zero3.offload_param_loc, rp->plan.zero3.loc));
	if (!trainable)
		return -ENOMEM;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] == DTL_KIND_PARAM && (sim->t.flags[t] & DTL_TF_TRAINABLE))
			trainable->count++;
	}
	trainable->members =
	    dtl_arena_calloc(sim->arena, trainable->count ? trainable->count : 1, sizeof(uint32_t));
	if (!trainable->members)
		return -ENOMEM;
	size_t n = 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] == DTL_KIND_PARAM && (sim->t.flags[t] & DTL_TF_TRAINABLE))
			trainable->members[n++] = t;
	}
	return 0;
}

/* transformers' _fsdp_qlora_plugin_updates: with a floating bnb_4bit_quant_storage,
 * fsdp_plugin.set_mixed_precision(storage, override=True): FSDP1 param, reduce and buffer
 * dtype become the storage dtype (accelerate >= 0.28). */
static void qlora_mixed_precision(struct dtl_sim *sim)
{
	struct dtl_plan_fsdp *fsdp = &sim->rp.plan.fsdp;
	enum dtl_dtype storage = DTL_DTYPE_NONE;

	if (sim->manifest->quantization.method != DTL_QUANT_BNB_4BIT ||
	    !dtl_sim_hf_peft_fsdp(sim) ||
	    !dtl_sim_behavior(sim, DTL_B_HF_TRAINER_QLORA_MIXED_PRECISION))
		return;
	for (uint32_t t = 0; t < sim->t.count && storage == DTL_DTYPE_NONE; t++)
		if ((sim->t.flags[t] & DTL_TF_QUANTIZED) && !(sim->t.flags[t] & DTL_TF_INT8) &&
		    sim->t.kind[t] == DTL_KIND_PARAM)
			storage = sim->t.dtype[t];
	if (!dtl_dtype_is_floating(storage))
		return;
	struct dtl_loc loc = dtl_sim_plan_loc(sim, sim->rp.plan.trainer_loc, sim->rp.plan.loc);
	fsdp->param_dtype = fsdp->reduce_dtype = fsdp->buffer_dtype = storage;
	fsdp->param_dtype_loc = fsdp->reduce_dtype_loc = fsdp->buffer_dtype_loc = loc;
}

/* One FSDP1 unit holds one dtype (else the constructor raised: DT101) and requires grad when
 * any of its parameters does. */
static bool fsdp1_unit_upcasts(const struct dtl_sim *sim, const struct dtl_group *g)
{
	bool trainable = false;

	for (size_t k = 0; k < g->count; k++) {
		uint32_t t = g->members[k];
		if (sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		if (sim->t.dtype[t] != sim->t.dtype[g->members[0]])
			return false;
		trainable |= (sim->t.flags[t] & DTL_TF_TRAINABLE) != 0;
	}
	return g->count && trainable && dtl_dtype_is_floating(sim->t.dtype[g->members[0]]) &&
	       sim->t.dtype[g->members[0]] != DTL_DTYPE_F32;
}

/* accelerate's prepare_model, once FSDP1 has wrapped, upcasts every FlatParameter that
 * requires grad and is not float32 when mixed precision is on ("Upcasted low precision
 * parameters ... because mixed precision turned on in FSDP"): all the unit's parameters,
 * frozen ones too, become float32 (rules/versions.yaml accelerate-fsdp1-upcast; seen by the
 * real-library oracle, tests/oracle/DISAGREEMENTS.md D7). Only when the plan names
 * accelerate: nothing else says that accelerate launches the run. */
static int accelerate_fsdp1_upcast(struct dtl_sim *sim)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_group *groups = sim->groups.items;
	char v[32];

	if (rp->version_assumed[DTL_FW_ACCELERATE] || rp->mode_dtype == DTL_DTYPE_NONE ||
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP1_UPCAST))
		return 0;
	dtl_version_format(&rp->plan.versions[DTL_FW_ACCELERATE], v, sizeof(v));
	const char *reason = dtl_arena_sprintf(sim->arena,
	                                       "accelerate %s upcasts the unit's FlatParameter "
	                                       "(it requires grad) to float32 after wrapping",
	                                       v);
	if (!reason)
		return -ENOMEM;
	for (size_t g = 0; g < sim->groups.count; g++) {
		if (groups[g].kind != DTL_GROUP_FSDP1_UNIT || !fsdp1_unit_upcasts(sim, &groups[g]))
			continue;
		for (size_t k = 0; k < groups[g].count; k++) {
			uint32_t t = groups[g].members[k];
			if (sim->t.kind[t] != DTL_KIND_PARAM)
				continue;
			int r =
			    dtl_sim_set_dtype(sim, t, DTL_STAGE_SHARD, DTL_DTYPE_F32, reason,
			                      "https://github.com/huggingface/accelerate/pull/2674",
			                      rp->plan.version_locs[DTL_FW_ACCELERATE]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * accelerate's TRANSFORMER_BASED_WRAP looks each class name up in the model
 * (get_module_class_from_name: a module whose class is named so) and raises when one is
 * missing, FSDP1 (set_auto_wrap_policy) and FSDP2 (fsdp2_prepare_auto_wrap_policy) alike
 * (rules/versions.yaml recipes: accelerate-wrap-class-missing). A class is missing here when
 * the architecture's profile and the manifest's model.modules name no module so: a module the
 * checkpoint lacks (a vision tower transformers builds anyway) is not proof of absence.
 */
static int put_classes(struct dtl_strmap *known, const struct dtl_glob_map *map, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (map[i].value &&
		    dtl_strmap_put(known, map[i].value, strlen(map[i].value), 1) < 0)
			return -ENOMEM;
	return 0;
}

static int wrap_class_missing(struct dtl_sim *sim, const struct dtl_pattern *p,
                              struct dtl_error *error)
{
	/* the HF Trainer hands a PEFT model under FSDP1 to PEFT's fsdp_auto_wrap_policy, which
	 * reads the same FSDP_TRANSFORMER_CLS_TO_WRAP first (Exception up to PEFT 0.19.1,
	 * TypeError from 0.20.0) */
	if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 && dtl_sim_hf_peft_fsdp(sim))
		return dtl_error_set(
		    error, p->loc, -EINVAL,
		    "%s is not a class of the model: PEFT's fsdp_auto_wrap_policy "
		    "raises 'Could not find the transformer layer class to wrap in "
		    "the model.'",
		    p->text);
	return dtl_error_set(error, p->loc, -EINVAL,
	                     "%s is not a class of the model: accelerate raises 'ValueError: "
	                     "Could not find the transformer layer class %s in the model.'",
	                     p->text, p->text);
}

static int check_wrap_classes(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_model_info *model = &sim->manifest->model;
	const struct dtl_profile *profile = sim->model.profile;
	const struct dtl_patterns *wrap = &sim->rp.wrap;
	struct dtl_strmap known;
	int r;

	if (!sim->rp.plan.fsdp.wrap_by_class || sim->rp.wrap_from_model ||
	    model->module_count + (profile ? profile->module_count : 0) == 0)
		return 0;
	dtl_strmap_init(&known, sim->arena);
	if ((r = put_classes(&known, model->modules, model->module_count)) < 0 ||
	    (profile && (r = put_classes(&known, profile->modules, profile->module_count)) < 0))
		return r;
	/* a module path (a --fix-plan candidate appends one to check it) is no class name */
	for (size_t i = 0; i < wrap->count; i++)
		if (!memchr(wrap->items[i].text, '.', wrap->items[i].len) &&
		    !memchr(wrap->items[i].text, '*', wrap->items[i].len) &&
		    dtl_strmap_get(&known, wrap->items[i].text, wrap->items[i].len) < 0)
			return wrap_class_missing(sim, &wrap->items[i], error);
	return 0;
}

int dtl_stage_shard(struct dtl_sim *sim, struct dtl_error *error)
{
	int r;

	if ((sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 ||
	     sim->rp.plan.strategy == DTL_STRATEGY_FSDP2) &&
	    (r = check_wrap_classes(sim, error)) < 0)
		return r;
	switch (sim->rp.plan.strategy) {
	case DTL_STRATEGY_FSDP1:
		qlora_mixed_precision(sim);
		r = fsdp_groups(sim, DTL_GROUP_FSDP1_UNIT);
		return r < 0 ? r : accelerate_fsdp1_upcast(sim);
	case DTL_STRATEGY_FSDP2:
		r = fsdp_groups(sim, DTL_GROUP_FSDP2_GROUP);
		return r < 0 ? r : fsdp2_reduce_notes(sim);
	case DTL_STRATEGY_ZERO3:
		return zero3_sets(sim);
	default:
		return 0;
	}
}
