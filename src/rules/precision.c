/* SPDX-License-Identifier: MIT */
/*
 * Precision rules: the silent ones. DT201 fp32-pin-downcast, DT202 unpinned-router, DT203
 * keep-in-fp32-not-applied, DT301 fp32-buffer-leak, DT302 fp32-buffer-downcast, DT601
 * pattern-unused, DT603 unknown-architecture. Findings about many tensors for one reason (the
 * same buffer in 61 layers) are one finding naming the first tensors and the count.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dtypelint/glob.h"

/* Groups findings by a key: one finding per key, tensors appended. */
struct grouper {
	struct dtl_check *c;
	struct dtl_strmap keys;
	size_t *counts; /* per finding index */
	size_t first_finding;
};

static void grouper_init(struct grouper *g, struct dtl_check *c)
{
	g->c = c;
	dtl_strmap_init(&g->keys, c->arena);
	g->counts = NULL;
	g->first_finding = c->findings->items.count;
}

/* Returns the finding for key, or NULL when it must be created by the caller (then call
 * grouper_add after creating it). */
static struct dtl_finding *grouper_get(struct grouper *g, const char *key)
{
	int64_t idx = dtl_strmap_get(&g->keys, key, strlen(key));
	if (idx < 0)
		return NULL;
	return &((struct dtl_finding *)g->c->findings->items.items)[idx];
}

static int grouper_add(struct grouper *g, const char *key, struct dtl_finding *f, uint32_t tensor,
                       const char *role)
{
	size_t idx = (size_t)(f - (struct dtl_finding *)g->c->findings->items.items);
	const char *stored = dtl_arena_strndup(g->c->arena, key, strlen(key));
	if (!stored || dtl_strmap_put(&g->keys, stored, strlen(stored), (int64_t)idx) < 0)
		return -ENOMEM;
	return dtl_check_add_tensor(g->c, f, tensor, role);
}

/* Every further tensor of a group: listed, with a note for the first three. */
static int grouper_more(struct grouper *g, struct dtl_finding *f, uint32_t tensor)
{
	f->group_offset++; /* counts the tensors beyond the first */
	if (f->tensor_count < 3)
		return dtl_check_add_tensor(g->c, f, tensor, NULL);
	return 0;
}

static int grouper_finish(struct grouper *g)
{
	struct dtl_finding *f = g->c->findings->items.items;
	for (size_t i = g->first_finding; i < g->c->findings->items.count; i++) {
		if (f[i].group_offset == 0)
			continue;
		f[i].message = dtl_arena_sprintf(
		    g->c->arena, "%s (and %u more like it%s)", f[i].message, f[i].group_offset,
		    f[i].group_offset + 1 > f[i].tensor_count ? "; notes name the first three"
		                                              : "");
		f[i].group_offset = 0;
		if (!f[i].message)
			return -ENOMEM;
	}
	return 0;
}

static const char *leaf(const struct dtl_sim *sim, uint32_t t)
{
	const char *dot = strrchr(sim->t.name[t], '.');
	return dot ? dot + 1 : sim->t.name[t];
}

/* The newest event that gave the tensor its 16-bit stored or compute dtype. */
static const struct dtl_event *cause(const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_event *events = sim->events.items;
	for (uint32_t e = sim->t.last_event[t]; e != DTL_NONE_INDEX; e = events[e].prev)
		if (events[e].from != events[e].to && dtl_dtype_is_half(events[e].to))
			return &events[e];
	return NULL;
}

static const char *pin_why(const struct dtl_sim *sim, uint32_t t, struct dtl_arena *arena)
{
	const struct dtl_pattern *e;
	if ((e = dtl_sim_keep_entry(sim, &sim->model.strict_set, t)))
		return dtl_arena_sprintf(arena, "keep_in_fp32_strict '%s'", e->text);
	if ((e = dtl_sim_keep_entry(sim, &sim->model.keep_set, t)))
		return dtl_arena_sprintf(arena, "keep_in_fp32 '%s'", e->text);
	return "a float32 buffer on purpose";
}

/* DT201 — a pinned tensor stored or computed in 16-bit because of the strategy. */
static int dt201_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct grouper g;

	grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_PINNED) || sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		bool stored = dtl_dtype_is_half(sim->t.dtype[t]);
		if (!stored && !dtl_dtype_is_half(sim->t.compute_dtype[t]))
			continue;
		const struct dtl_event *why = cause(sim, t);
		const char *stage = why ? dtl_stage_name(why->stage) : "?";
		char key[256];
		snprintf(key, sizeof(key), "%s|%s|%d", leaf(sim, t), stage, stored);
		struct dtl_finding *f = grouper_get(&g, key);
		if (f) {
			if (grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(
		    c, c->rule->severity, why ? why->loc : dtl_sim_tensor_loc(sim, t),
		    "'%s' must stay float32 (%s) but is %s in %s", sim->t.name[t],
		    pin_why(sim, t, c->arena), stored ? "stored" : "computed",
		    dtl_dtype_name(stored ? sim->t.dtype[t] : sim->t.compute_dtype[t]));
		if (!f)
			return -ENOMEM;
		f->effect =
		    dtl_arena_sprintf(c->arena, "%s", why ? why->reason : "the strategy casts it");
		f->error_versions = NULL;
		f->fix =
		    why && why->stage == DTL_STAGE_COMPUTE
		        ? "shard the module on its own with a float32 policy (the \"fp32 "
		          "layer\" pattern: fully_shard(module, mp_policy=MixedPrecisionPolicy("
		          "param_dtype=torch.float32))), or list it in fsdp.ignored"
		        : "keep the tensor out of the cast: for zero.Init there is no "
		          "per-parameter escape (DeepSpeed #7747 is open); build the module "
		          "outside zero.Init or accept the 16-bit storage";
		if (grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return grouper_finish(&g);
}

/* DT202 — router logits computed in 16-bit by a router that does not upcast, with no pin. */
/* The dtype a tensor's manifest entry gives it (DESIGN §3: its own, else
 * model.checkpoint_dtype, else float32); NONE for a tensor with no entry. */
static enum dtl_dtype declared(const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_manifest *m = sim->manifest;
	uint32_t decl = sim->t.decl[t];

	if (decl == DTL_NONE_INDEX)
		return DTL_DTYPE_NONE;
	return m->tensors[decl].dtype != DTL_DTYPE_NONE      ? m->tensors[decl].dtype
	       : m->model.checkpoint_dtype != DTL_DTYPE_NONE ? m->model.checkpoint_dtype
	                                                     : DTL_DTYPE_F32;
}

/* The model's dtype: model.checkpoint_dtype, else the dtype most of its parameters are declared
 * in. */
static enum dtl_dtype model_dtype(const struct dtl_sim *sim)
{
	size_t count[DTL_DTYPE_COUNT] = {0}, best = 0;
	enum dtl_dtype d = DTL_DTYPE_NONE;

	if (sim->manifest->model.checkpoint_dtype != DTL_DTYPE_NONE)
		return sim->manifest->model.checkpoint_dtype;
	for (uint32_t t = 0; t < sim->t.count; t++)
		if (sim->t.kind[t] == DTL_KIND_PARAM && declared(sim, t) != DTL_DTYPE_NONE)
			count[declared(sim, t)]++;
	for (int i = 0; i < DTL_DTYPE_COUNT; i++)
		if (count[i] > best && dtl_dtype_is_floating((enum dtl_dtype)i)) {
			best = count[i];
			d = (enum dtl_dtype)i;
		}
	return d;
}

/*
 * DT202 — a router the model keeps in float32 (its checkpoint or live model holds it in float32
 * beside 16-bit weights) that the plan makes compute in 16-bit, with no pin that would say so
 * (DT201 reports pinned ones). Stock MoE checkpoints store their routers in the model dtype and
 * their code computes the logits in it (Mixtral, Qwen-MoE, OLMoE, gpt-oss): nothing to report.
 */
static int dt202_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	enum dtl_dtype model = DTL_DTYPE_NONE;
	bool model_known = false;
	struct grouper g;

	grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_ROUTER) || (sim->t.flags[t] & DTL_TF_PINNED) ||
		    !dtl_dtype_is_half(sim->t.compute_dtype[t]) ||
		    strcmp(leaf(sim, t), "weight") != 0)
			continue;
		if (declared(sim, t) != DTL_DTYPE_F32)
			continue;
		if (!model_known) {
			model = model_dtype(sim);
			model_known = true;
		}
		if (!dtl_dtype_is_half(model))
			continue; /* a float32 model: the router is cast with everything else */
		const struct dtl_module *md = &sim->modules[sim->t.module[t]];
		const struct dtl_router_rule *rr = dtl_sim_router_rule(sim, sim->t.module[t]);
		if (rr && rr->upcasts)
			continue; /* logits from fp32 operands whatever the storage */
		const char *key = rr ? rr->path.text : "heuristic";
		struct dtl_finding *f = grouper_get(&g, key);
		if (f) {
			if (grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(
		    c, c->rule->severity, dtl_sim_tensor_loc(sim, t),
		    "router '%.*s' is kept in float32 beside %s weights but computes "
		    "its logits in %s: no keep-in-fp32 entry or pin covers it",
		    (int)md->path_len, md->path, dtl_dtype_name(model),
		    dtl_dtype_name(sim->t.compute_dtype[t]));
		if (!f)
			return -ENOMEM;
		f->effect =
		    rr && rr->origin == DTL_FROM_PROFILE
		        ? "the router's matmul runs in the hidden dtype (its forward does not "
		          "upcast): expert choice is made from 16-bit logits"
		        : "expert choice is made from 16-bit logits (router found by name; "
		          "dtypelint assumes its forward does not upcast)";
		uint32_t leaf_at = md->path_len;
		while (leaf_at > 0 && md->path[leaf_at - 1] != '.')
			leaf_at--;
		f->fix = dtl_arena_sprintf(
		    c->arena,
		    "pin it: add '%.*s' to model.keep_in_fp32_strict (transformers keeps it fp32 "
		    "at "
		    "load), and under FSDP shard it in an fp32 group; under ZeRO-3 zero.Init "
		    "casts it anyway (DeepSpeed #7747)",
		    (int)(md->path_len - leaf_at), md->path + leaf_at);
		if (grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return grouper_finish(&g);
}

/* How many tensors each entry of a compiled keep list matches, and the first (arrays in the
 * check's arena). */
static int keep_counts(struct dtl_check *c, const struct dtl_keep_set *set, uint32_t **count,
                       uint32_t **first)
{
	const struct dtl_sim *sim = c->sim;
	*count = dtl_arena_calloc(c->arena, set->entry_count + 1, sizeof(uint32_t));
	*first = dtl_arena_calloc(c->arena, set->entry_count + 1, sizeof(uint32_t));
	if (!*count || !*first)
		return -ENOMEM;
	return dtl_keep_set_count(set, (const char *const *)sim->t.name, sim->t.name_len,
	                          sim->t.count, *count, *first);
}

/* DT203 — a plain keep-in-fp32 entry this transformers does not apply for this dtype. */
static int dt203_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;
	const struct dtl_patterns *plain = &sim->model.keep_in_fp32;
	enum dtl_dtype target;

	if (m->model.load_mode == DTL_LOAD_AS_IS || m->model.load_mode == DTL_LOAD_NONE)
		return 0;
	target =
	    m->model.load_mode == DTL_LOAD_DTYPE ? m->model.load_dtype : m->model.checkpoint_dtype;
	if (target != DTL_DTYPE_BF16)
		return 0;
	bool window = dtl_sim_behavior(sim, DTL_B_HF_KEEP_PLAIN_UNDER_BF16);
	uint32_t *count, *first_tensor;
	int r;
	if ((r = keep_counts(c, &sim->model.keep_set, &count, &first_tensor)) < 0)
		return r;
	for (size_t k = 0; k < plain->count; k++) {
		const struct dtl_pattern *e = &plain->items[k];
		uint32_t first = first_tensor[k];
		size_t n = count[k];
		if (!n)
			continue;
		/* a profile's entry is reported at the manifest's architecture line */
		struct dtl_loc loc =
		    sim->model.keep_from_profile ? m->model.architecture_loc : e->loc;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, loc,
		    window
		        ? "keep_in_fp32 entry '%s'%s is applied under bfloat16 by this "
		          "transformers (the v5 regression window): %zu tensor(s) load in float32"
		        : "keep_in_fp32 entry '%s'%s is not applied under bfloat16: %zu "
		          "tensor(s) load in bfloat16",
		    e->text, sim->model.keep_from_profile ? " (from the architecture profile)" : "",
		    n);
		if (!f)
			return -ENOMEM;
		f->effect = window
		                ? "the plain list was applied under bf16 until PR #43683; mixed "
		                  "dtypes appear where the model class did not intend them"
		                : "_keep_in_fp32_modules applies only under float16; use "
		                  "_keep_in_fp32_modules_strict to keep it float32 under bfloat16";
		f->error_versions = dtl_check_version(c, DTL_FW_TRANSFORMERS);
		f->fix = window
		             ? "upgrade transformers past the fix (PR #43683), or expect these "
		               "tensors in float32"
		             : "nothing to do if bf16 is intended; to keep them float32 list the "
		               "entry in keep_in_fp32_strict";
		if (dtl_check_add_tensor(c, f, first, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The dtype the module holding a buffer computes in: its own parameters', else the nearest
 * ancestor's with parameters. NONE when no parameter is above it. */
static enum dtl_dtype module_compute(const struct dtl_sim *sim, uint32_t mod)
{
	for (uint32_t m = mod; m != DTL_NONE_INDEX; m = sim->modules[m].parent) {
		const struct dtl_module *md = &sim->modules[m];
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t])
			if (sim->t.kind[t] == DTL_KIND_PARAM &&
			    dtl_dtype_is_floating(sim->t.dtype[t]))
				return sim->t.compute_dtype[t];
		/* a module without own parameters: look at its children's first parameter */
		for (uint32_t ch = md->first_child; ch != DTL_NONE_INDEX;
		     ch = sim->modules[ch].next_sibling)
			for (uint32_t t = sim->modules[ch].first_tensor; t != DTL_NONE_INDEX;
			     t = sim->t.next_in_module[t])
				if (sim->t.kind[t] == DTL_KIND_PARAM &&
				    dtl_dtype_is_floating(sim->t.dtype[t]))
					return sim->t.compute_dtype[t];
	}
	return DTL_DTYPE_NONE;
}

static const char *buffer_cast_note(const struct dtl_sim *sim)
{
	switch (sim->rp.plan.strategy) {
	case DTL_STRATEGY_FSDP2:
		return "FSDP2's MixedPrecisionPolicy has no buffer_dtype: buffers keep their dtype "
		       "(https://github.com/pytorch/pytorch/blob/"
		       "05f814fecfca7d2a17f28cbe7e1cb2d8d4c13230/torch/distributed/fsdp/"
		       "_fully_shard/_fsdp_api.py)";
	case DTL_STRATEGY_FSDP1:
		return "FSDP1 buffer_dtype is None: buffers keep their dtype "
		       "(https://github.com/pytorch/pytorch/blob/"
		       "acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/torch/distributed/fsdp/api.py)";
	case DTL_STRATEGY_ZERO3:
		return "DeepSpeed keeps buffers in their loaded dtype unless "
		       "data_types.buffer_dtype "
		       "is set (https://github.com/deepspeedai/DeepSpeed/pull/8066)";
	default:
		return "nothing casts buffers under this strategy";
	}
}

/* DT301 — an fp32 buffer in a module that computes in 16-bit, not cast, not self-casting. */
static int dt301_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct grouper g;

	grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] != DTL_KIND_BUFFER || sim->t.compute_dtype[t] != DTL_DTYPE_F32)
			continue;
		const struct dtl_buffer_info *info = dtl_sim_buffer_info(sim, t);
		if (info && info->self_casting)
			continue;
		/* facts §4: only a dimensioned fp32 operand promotes */
		int64_t numel = sim->t.numel[t];
		const struct dtl_tensor_decl *d = sim->t.decl[t] != DTL_NONE_INDEX
		                                      ? &sim->manifest->tensors[sim->t.decl[t]]
		                                      : NULL;
		if (d && d->shape && d->rank == 0)
			continue;
		(void)numel;
		enum dtl_dtype around = module_compute(sim, sim->t.module[t]);
		if (!dtl_dtype_is_half(around))
			continue;
		const struct dtl_module *md = &sim->modules[sim->t.module[t]];
		char key[256];
		snprintf(key, sizeof(key), "%s|%s", md->class_name ? md->class_name : "",
		         leaf(sim, t));
		struct dtl_finding *f = grouper_get(&g, key);
		if (f) {
			if (grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(c, c->rule->severity, dtl_sim_tensor_loc(sim, t),
		                     "float32 buffer '%s' sits in a module that computes in %s: it "
		                     "promotes activations to float32",
		                     sim->t.name[t], dtl_dtype_name(around));
		if (!f)
			return -ENOMEM;
		f->effect = dtl_arena_sprintf(
		    c->arena,
		    "%s; a bf16 tensor combined with a dimensioned fp32 tensor gives fp32, so the "
		    "next 16-bit Linear or norm gets float32 input (RuntimeError: mat1 and mat2 "
		    "must have the same dtype, or silent fp32 compute under autocast)",
		    buffer_cast_note(sim));
		f->fix = dtl_arena_sprintf(
		    c->arena,
		    "cast the buffer to %s after loading (module.%s.data = ...to(torch.%s)), or "
		    "set a buffer dtype (FSDP1 buffer_dtype, DeepSpeed data_types.buffer_dtype); "
		    "if its consumer casts it, it is safe: add it to the profile's self-casting "
		    "list or suppress with a reason",
		    dtl_dtype_name(around), leaf(sim, t), dtl_dtype_name(around));
		if (grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return grouper_finish(&g);
}

/* DT302 — a buffer that must stay float32 cast to 16-bit by the strategy. */
static int dt302_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct grouper g;

	grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] != DTL_KIND_BUFFER)
			continue;
		if (!(sim->t.flags[t] & DTL_TF_PINNED) && !dtl_sim_buffer_info(sim, t))
			continue;
		bool stored = dtl_dtype_is_half(sim->t.dtype[t]);
		if (!stored && !dtl_dtype_is_half(sim->t.compute_dtype[t]))
			continue;
		const struct dtl_event *why = cause(sim, t);
		if (!why)
			continue; /* declared 16-bit: nothing in the plan cast it */
		char key[256];
		snprintf(key, sizeof(key), "%s|%s", leaf(sim, t), dtl_stage_name(why->stage));
		struct dtl_finding *f = grouper_get(&g, key);
		if (f) {
			if (grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(
		    c, c->rule->severity, why->loc, "buffer '%s' must stay float32 but is %s in %s",
		    sim->t.name[t], stored ? "stored" : "computed",
		    dtl_dtype_name(stored ? sim->t.dtype[t] : sim->t.compute_dtype[t]));
		if (!f)
			return -ENOMEM;
		f->effect = dtl_arena_sprintf(
		    c->arena,
		    "%s; precision is lost silently (RoPE inv_freq rounded to 16-bit "
		    "shifts every position's angle)",
		    why->reason);
		f->fix =
		    why->stage == DTL_STAGE_ZERO_INIT && !stored
		        ? "upgrade transformers to >= 4.38 (the RoPE cache from an int64 "
		          "arange, PR #28760), or build the rotary embedding outside zero.Init"
		        : "leave buffers uncast: FSDP1 buffer_dtype=None (or float32), DeepSpeed "
		          ">= 0.19.2 without data_types.buffer_dtype; or recompute the buffer in "
		          "float32 after wrapping";
		if (grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return grouper_finish(&g);
}

static int unused(struct dtl_check *c, const struct dtl_pattern *p, const char *what)
{
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, p->loc, "%s pattern '%s' matches no tensor", what, p->text);
	if (!f)
		return -ENOMEM;
	f->effect = "the pattern does nothing; a typo here silently disables a pin or a freeze";
	f->fix = "correct the pattern (keep-in-fp32 entries are matched as transformers does, "
	         "not as globs) or remove it";
	return 0;
}

/* DT601 for the frozen globs: one walk of the tensors through a compiled set marks every
 * pattern that matches something (glob.h), instead of a scan of the tensors per pattern. */
static int dt601_frozen(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_patterns *frozen = &sim->manifest->frozen;
	struct dtl_globset set;
	size_t unmatched = 0;
	int r;

	if (frozen->count == 0)
		return 0;
	/* the declared tensors were matched when the table was built */
	bool *hit = dtl_arena_calloc(c->arena, frozen->count, sizeof(*hit));
	uint32_t *matched = dtl_arena_calloc(c->arena, frozen->count, sizeof(*matched));
	if (!hit || !matched)
		return -ENOMEM;
	for (size_t k = 0; k < frozen->count; k++)
		unmatched += !(hit[k] = sim->frozen_hit[k]);
	/* and the tensors the simulation added since (tied names, adapters) here */
	if (unmatched && sim->frozen_scanned < sim->t.count) {
		dtl_globset_init(&set, c->arena);
		for (size_t k = 0; k < frozen->count; k++)
			if (dtl_globset_add(&set, frozen->items[k].text, frozen->items[k].len) < 0)
				return -ENOMEM;
		struct dtl_globset_cursor *cursor = dtl_globset_cursor_new(&set, c->arena);
		if (!cursor)
			return -ENOMEM;
		for (size_t t = sim->frozen_scanned; t < sim->t.count && unmatched > 0; t++) {
			size_t n = dtl_globset_cursor_matches(
			    cursor, sim->t.name[t], sim->t.name_len[t], matched, frozen->count);
			for (size_t i = 0; i < n && i < frozen->count; i++)
				if (!hit[matched[i]]) {
					hit[matched[i]] = true;
					unmatched--;
				}
		}
	}
	for (size_t k = 0; k < frozen->count; k++)
		if (!hit[k] && (r = unused(c, &frozen->items[k], "frozen")) < 0)
			return r;
	return 0;
}

/* Tells the keep set every segment of every tensor name (dtl_keep_possible_add) until no entry
 * is left, through the module tree: a name is its module's path, a '.', and its leaf, and a
 * module's path its parent's, a '.', and its last segment, so each segment is read once per
 * module where the names would be read whole. Modules come in the order of the tensors that
 * made them, so that entries matching early names are settled early; every module is a
 * tensor's or an ancestor of one (and numbered before it), so none is left out. */
static void tell_segments(const struct dtl_sim *sim, const struct dtl_keep_set *set,
                          struct dtl_keep_possible *p)
{
	size_t next = 1;         /* the next module to tell (0 is the root: no segment) */
	const char *leaf = NULL; /* the last leaf told: most are the one before ("weight") */
	size_t leaf_len = 0;

	for (size_t t = 0; t < sim->t.count && p->left; t++) {
		uint32_t mod = sim->t.module[t];
		for (; next <= mod && p->left; next++) {
			const struct dtl_module *md = &sim->modules[next];
			uint32_t start =
			    md->parent == 0 ? 0 : sim->modules[md->parent].path_len + 1;
			dtl_keep_possible_add(p, set, md->path + start, md->path_len - start);
		}
		size_t start = mod == 0 ? 0 : sim->modules[mod].path_len + 1;
		const char *text = sim->t.name[t] + start;
		size_t len = sim->t.name_len[t] - start;
		if (leaf && len == leaf_len && memcmp(text, leaf, len) == 0)
			continue;
		dtl_keep_possible_add(p, set, text, len);
		leaf = text;
		leaf_len = len;
	}
}

/* DT601 for the manifest's routers: every module is matched once against the set of them,
 * marking the globs it matches, until none is left unmarked (a scan of the modules per glob
 * took 15 s for 8,000 globs that match nothing). */
static int dt601_routers(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_patterns *routers = &sim->manifest->model.routers;
	size_t n = routers->count, left = n;
	struct dtl_globset set;
	int r;

	if (n == 0)
		return 0;
	bool *hit = dtl_arena_calloc(c->arena, n, sizeof(bool));
	uint32_t *matched = dtl_arena_calloc(c->arena, n, sizeof(uint32_t));
	if (!hit || !matched)
		return -ENOMEM;
	dtl_globset_init(&set, c->arena);
	for (size_t k = 0; k < n; k++)
		if (dtl_globset_add(&set, routers->items[k].text, routers->items[k].len) < 0)
			return -ENOMEM;
	struct dtl_globset_cursor *cursor = dtl_globset_cursor_new(&set, c->arena);
	if (!cursor)
		return -ENOMEM;
	for (size_t mod = 0; mod < sim->module_count && left; mod++) {
		const struct dtl_module *md = &sim->modules[mod];
		size_t count =
		    dtl_globset_cursor_matches(cursor, md->path, md->path_len, matched, n);
		for (size_t j = 0; j < count; j++)
			if (!hit[matched[j]]) {
				hit[matched[j]] = true;
				left--;
			}
	}
	for (size_t k = 0; k < n; k++)
		if (!hit[k] && (r = unused(c, &routers->items[k], "routers")) < 0)
			return r;
	return 0;
}

/* DT601 — a pattern the user wrote that matches nothing. */
static int dt601_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	/* the manifest's own lists: when given, they are the ones the simulation compiled
	 * (dtl_sim_resolve_model prefers them to the profile's) */
	const struct dtl_keep_set *sets[] = {&sim->model.keep_set, &sim->model.strict_set};
	const bool own[] = {!sim->model.keep_from_profile, !sim->model.strict_from_profile};
	const char *names[] = {"keep_in_fp32", "keep_in_fp32_strict"};
	int r;

	for (size_t l = 0; l < 2; l++) {
		uint32_t *first;
		if (!own[l] || sets[l]->entry_count == 0)
			continue;
		struct dtl_keep_possible possible;
		first = dtl_arena_calloc(c->arena, sets[l]->entry_count, sizeof(uint32_t));
		if (!first || dtl_keep_possible_init(&possible, sets[l], c->arena) < 0)
			return -ENOMEM;
		/* an entry whose key is in no segment is settled without reading the names: the
		 * scan below stops once the others have matched */
		tell_segments(sim, sets[l], &possible);
		if ((r = dtl_keep_set_any(sets[l], (const char *const *)sim->t.name,
		                          sim->t.name_len, sim->t.count, possible.possible,
		                          first)) < 0)
			return r;
		for (size_t k = 0; k < sets[l]->entry_count; k++)
			if (first[k] == DTL_NONE_INDEX &&
			    (r = unused(c, &sets[l]->entries[k], names[l])) < 0)
				return r;
	}
	if ((r = dt601_frozen(c)) < 0)
		return r;
	return dt601_routers(c);
}

/* DT603 — no profile for the named architecture. */
static int dt603_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_model_info *m = &sim->manifest->model;

	if (!m->architecture || sim->model.profile)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, m->architecture_loc,
	    "no architecture profile for '%s': routers and fp32 buffers are found by name",
	    m->architecture);
	if (!f)
		return -ENOMEM;
	f->effect = "routers are modules named gate or router beside an experts module; fp32 "
	            "buffers on purpose are inv_freq and e_score_correction_bias; keep-in-fp32 "
	            "lists and wrap classes come only from the manifest";
	f->fix = "state model.keep_in_fp32, keep_in_fp32_strict, no_split_modules and routers in "
	         "the manifest, or add a profile in rules/architectures/";
	return 0;
}

const struct dtl_rule dtl_rule_dt201 = {
    .id = "DT201",
    .name = "fp32-pin-downcast",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a tensor the model pins to float32 is stored or computed in 16-bit",
    .explanation =
        "Models keep some tensors in float32 on purpose: _keep_in_fp32_modules_strict "
        "(DeepSeek's e_score_correction_bias, Mamba's A_log), _keep_in_fp32_modules under "
        "float16 (T5's wo, whose activations overflow float16). The strategy can undo it "
        "silently: DeepSpeed zero.Init casts every floating tensor created under it to the "
        "mode dtype, explicit float32 included; DeepSpeed <= 0.19.1 runs module.bfloat16(); "
        "FSDP computes every parameter of a unit or group in param_dtype. Nothing raises: "
        "the model trains with less precision than it was designed for.",
    .example = "model: {keep_in_fp32_strict: [e_score_correction_bias]}\n"
               "training: {strategy: zero3, precision: bf16}",
    .fix = "Under FSDP, shard the pinned module on its own with a float32 policy; under "
           "ZeRO-3 there is no per-parameter escape from zero.Init (DeepSpeed #7747).",
    .facts = "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/"
             "torch/distributed/fsdp/api.py "
             "https://github.com/pytorch/pytorch/blob/8fc2039decebd92b15b38296df8bf9aa13275be0/"
             "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py "
             "https://github.com/huggingface/transformers/pull/39058; "
             "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
             "partition_parameters.py#L391-L404 https://github.com/deepspeedai/DeepSpeed/pull/8066 "
             "https://github.com/deepspeedai/DeepSpeed/issues/7747",
    .check = dt201_check,
};

const struct dtl_rule dtl_rule_dt202 = {
    .id = "DT202",
    .name = "unpinned-router",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "an MoE router kept in float32 computes its logits in 16-bit and nothing pins it",
    .explanation =
        "Routers decide which experts see each token. A router whose checkpoint (or live "
        "model) keeps it in float32 beside 16-bit weights was meant to compute in float32; "
        "when the plan casts it (from_pretrained's dtype, zero.Init, a blanket cast, FSDP "
        "param_dtype) and its forward runs the matmul in the weight's dtype (Mixtral, "
        "Qwen-MoE, OLMoE, GraniteMoE, gpt-oss, Llama 4: the softmax or sigmoid may be fp32, "
        "the logits are not), expert choice is made from 16-bit logits. Stock checkpoints "
        "that store their routers in the model dtype are not reported: their code computes "
        "the logits in it by design. Routers that upcast both operands (DeepSeek-V2/V3, "
        "GLM4-MoE) are exempt; pinned routers are DT201's. Nothing raises; load balancing "
        "and expert choice degrade.",
    .example = "model: {architecture: MixtralForCausalLM}\n"
               "training: {strategy: fsdp2, fsdp: {param_dtype: bfloat16}}",
    .fix = "Add the router to keep_in_fp32_strict and shard it in a float32 FSDP group; under "
           "ZeRO-3, zero.Init casts it anyway.",
    .facts =
        "https://github.com/huggingface/transformers/blob/f5a9ec512fa9fe69e51ea0c6388c68d50de567b3/"
        "src/transformers/models/deepseek_v3/modeling_deepseek_v3.py "
        "https://github.com/huggingface/transformers/blob/040ba146759afc625c77f49d04982bb54873995f/"
        "src/transformers/modeling_utils.py; rules/architectures/README.md",
    .check = dt202_check,
};

const struct dtl_rule dtl_rule_dt203 = {
    .id = "DT203",
    .name = "keep-in-fp32-not-applied",
    .severity = DTL_SEVERITY_INFO,
    .summary = "a _keep_in_fp32_modules entry is not applied for this dtype (or applied "
               "unexpectedly)",
    .explanation =
        "transformers applies the plain _keep_in_fp32_modules list only when loading in "
        "float16; under bfloat16 those modules load in bfloat16. The v5 development line "
        "applied it under bfloat16 too until PR #43683 (2026-02-02). The strict list applies "
        "under float16 and bfloat16 (from about 4.54). Reported only when the manifest asks "
        "dtypelint to replay loading (load_dtype auto or a dtype).",
    .example = "model: {load_dtype: bfloat16, keep_in_fp32: [wo]}",
    .fix = "Use keep_in_fp32_strict for what must stay float32 under bfloat16.",
    .facts = "https://github.com/huggingface/transformers/pull/39058 "
             "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py",
    .check = dt203_check,
};

const struct dtl_rule dtl_rule_dt301 = {
    .id = "DT301",
    .name = "fp32-buffer-leak",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a float32 buffer in a 16-bit module promotes activations to float32",
    .explanation =
        "FSDP2's MixedPrecisionPolicy casts parameters, never buffers; FSDP1 casts buffers "
        "only with buffer_dtype; DeepSpeed >= 0.19.2 keeps buffers in their loaded dtype. A "
        "float32 buffer with at least one dimension, combined with bfloat16 activations, "
        "gives float32 (torch.result_type), so the next bfloat16 Linear or norm meets "
        "float32 input: 'RuntimeError: mat1 and mat2 must have the same dtype', or silent "
        "float32 compute. Buffers whose consumer casts them (RoPE inv_freq; DeepSeek's "
        "e_score_correction_bias) are exempt (the profile's self-casting list).",
    .example = "tensors:\n"
               "  - {name: vision.proj.weight, shape: [8, 8], dtype: bfloat16}\n"
               "  - {name: vision.proj.std_bias, kind: buffer, shape: [8], dtype: float32}\n"
               "training: {strategy: fsdp2, fsdp: {param_dtype: bfloat16}}",
    .fix = "Cast the buffer to the compute dtype after loading, or set a buffer dtype (FSDP1 "
           "buffer_dtype, DeepSpeed data_types.buffer_dtype).",
    .facts = "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/"
             "torch/distributed/fsdp/api.py "
             "https://github.com/pytorch/pytorch/blob/05f814fecfca7d2a17f28cbe7e1cb2d8d4c13230/"
             "torch/distributed/fsdp/_fully_shard/_fsdp_api.py "
             "https://github.com/huggingface/transformers/blob/"
             "ef46806472a64b0013ed413781e3afed82bfa047/src/transformers/modeling_rope_utils.py "
             "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py; "
             "https://github.com/deepspeedai/DeepSpeed/pull/8066",
    .check = dt301_check,
};

const struct dtl_rule dtl_rule_dt302 = {
    .id = "DT302",
    .name = "fp32-buffer-downcast",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a buffer that must stay float32 is cast to 16-bit by the strategy",
    .explanation =
        "RoPE's inv_freq and routers' score-correction biases are float32 on purpose. "
        "FSDP1 buffer_dtype=bf16 (accelerate's FSDP1 policy sets it), DeepSpeed <= 0.19.1's "
        "module.bfloat16() and zero.Init's tensor-creation wrappers (for buffers made by "
        "torch.zeros and the like) turn them into 16-bit. Nothing raises; positions or "
        "routing lose precision.",
    .example = "tensors:\n"
               "  - {name: model.rotary_emb.inv_freq, kind: buffer, shape: [32], dtype: float32, "
               "persistent: false}\n"
               "training: {strategy: fsdp1, fsdp: {buffer_dtype: bfloat16}}",
    .fix = "Leave buffers uncast (FSDP1 buffer_dtype None or float32; DeepSpeed >= 0.19.2 "
           "without data_types.buffer_dtype).",
    .facts = "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/"
             "torch/distributed/fsdp/api.py "
             "https://github.com/huggingface/transformers/blob/"
             "ef46806472a64b0013ed413781e3afed82bfa047/src/transformers/modeling_rope_utils.py; "
             "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
             "partition_parameters.py#L391-L404 https://github.com/deepspeedai/DeepSpeed/pull/8066",
    .check = dt302_check,
};

const struct dtl_rule dtl_rule_dt601 = {
    .id = "DT601",
    .name = "pattern-unused",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a keep-in-fp32, frozen or router pattern of the manifest matches nothing",
    .explanation =
        "A pattern that matches no tensor does nothing, and a typo in a keep-in-fp32 entry "
        "silently un-pins what it was meant to pin. keep-in-fp32 entries are matched as the "
        "plan's transformers version matches them (one component up to ~4.50, a dot-bounded "
        "regex up to 4.5x, a substring in v5), frozen patterns as globs over tensor names, "
        "router patterns as globs over module paths. Profile defaults are not reported.",
    .example = "model: {keep_in_fp32_strict: [e_score_corection_bias]}",
    .fix = "Correct or remove the pattern.",
    .facts = "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py",
    .check = dt601_check,
};

const struct dtl_rule dtl_rule_dt603 = {
    .id = "DT603",
    .name = "unknown-architecture",
    .severity = DTL_SEVERITY_INFO,
    .summary = "no architecture profile: routers and buffers found by heuristics",
    .explanation =
        "dtypelint knows the keep-in-fp32 lists, wrap classes, routers and fp32 buffers of "
        "the architectures in rules/architectures/. For another model.architecture it uses "
        "only the manifest and name heuristics.",
    .example = "model: {architecture: MyCustomForCausalLM}",
    .fix = "Write the model's lists in the manifest, or contribute a profile.",
    .facts = "rules/architectures/README.md",
    .check = dt603_check,
};
