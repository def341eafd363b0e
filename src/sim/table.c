/* SPDX-License-Identifier: MIT */
/*
 * The tensor table and the module tree, built from the manifest in torch's order (docs/design.md §3
 * "order"): modules from the dotted names, children in first-appearance order, traversal
 * pre-order with a module's own tensors before its children's — named_parameters() order.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/core/glob.h"
#include "sim-private.h"

#define fail_at(sim, loc, error, ...) dtl_error_set((error), (loc), -EINVAL, __VA_ARGS__)

static int grow_modules(struct dtl_sim *sim)
{
	size_t capacity = sim->module_capacity ? sim->module_capacity * 2 : 64;
	struct dtl_module *modules;

	if (capacity > SIZE_MAX / sizeof(*modules))
		return -ENOMEM;
	modules =
	    dtl_arena_realloc(sim->arena, sim->modules, sim->module_capacity * sizeof(*modules),
	                      capacity * sizeof(*modules));
	if (!modules)
		return -ENOMEM;
	sim->modules = modules;
	sim->module_capacity = capacity;
	return 0;
}

int64_t dtl_sim_new_module(struct dtl_sim *sim, const char *path, uint32_t len, uint32_t parent)
{
	if (sim->module_count == sim->module_capacity && grow_modules(sim) < 0)
		return -ENOMEM;
	uint32_t id = (uint32_t)sim->module_count++;
	struct dtl_module *m = &sim->modules[id];

	m->path = path;
	m->path_len = len;
	m->parent = parent;
	m->first_child = m->last_child = m->next_sibling = DTL_NONE_INDEX;
	m->first_tensor = m->last_tensor = DTL_NONE_INDEX;
	if (parent != DTL_NONE_INDEX) {
		struct dtl_module *p = &sim->modules[parent];
		if (p->last_child == DTL_NONE_INDEX)
			p->first_child = id;
		else
			sim->modules[p->last_child].next_sibling = id;
		p->last_child = id;
	}
	return id;
}

/* Module paths to indices, remembering the modules of the previous path's leading segments:
 * consecutive tensors share most of their module path ("...experts.5.gate_proj.weight",
 * "...experts.5.up_proj.weight"), so only the segments after the shared ones are looked up,
 * each with one map operation (a put that finds or adds). */
#define LOOKUP_DEPTH 32
struct module_lookup {
	const char *last; /* the previous path */
	uint32_t last_len;
	uint32_t depth;             /* its first depth segments are in end[] and id[] */
	uint32_t end[LOOKUP_DEPTH]; /* where its k-th segment ends */
	uint32_t id[LOOKUP_DEPTH];  /* the module of last[0..end[k]) */
	uint32_t shared; /* the segments the last path shares with the one before (0: none) */
};

/* The module at path, created with its missing ancestors (parents first). */
static int64_t module_for(struct dtl_sim *sim, struct module_lookup *lookup, const char *path,
                          uint32_t len)
{
	uint32_t k = 0;

	lookup->shared = 0;
	if (len == 0) {
		lookup->last = NULL; /* the path after it shares nothing with it */
		return 0;
	}
	if (lookup->last)
		k = (uint32_t)dtl_path_shared_segments(lookup->last, lookup->last_len, lookup->end,
		                                       lookup->depth, path, len);
	int64_t id = k ? lookup->id[k - 1] : 0;
	uint32_t start = k ? lookup->end[k - 1] + 1 : 0, seg = k;
	while (start <= len) {
		uint32_t end = start;
		while (end < len && path[end] != '.')
			end++;
		id = dtl_module_child_add(sim, (uint32_t)id, path, start, end);
		if (id < 0)
			return id;
		if (seg < LOOKUP_DEPTH) {
			lookup->end[seg] = end;
			lookup->id[seg] = (uint32_t)id;
		}
		seg++;
		start = end + 1;
	}
	lookup->last = path;
	lookup->last_len = len;
	lookup->depth = seg < LOOKUP_DEPTH ? seg : LOOKUP_DEPTH;
	lookup->shared = k;
	return id;
}

#define GROW(field)                                                                                \
	do {                                                                                       \
		void *bigger = dtl_arena_realloc(a, t->field, t->capacity * sizeof(*t->field),     \
		                                 m * sizeof(*t->field));                           \
		if (!bigger)                                                                       \
			return -ENOMEM;                                                            \
		t->field = bigger;                                                                 \
	} while (0)

/* (Re)allocates every column for n tensors, keeping the rows already there. */
static int grow_table(struct dtl_sim *sim, size_t n)
{
	struct dtl_table *t = &sim->t;
	struct dtl_arena *a = sim->arena;
	size_t m = n ? n : 1;

	GROW(name);
	GROW(name_len);
	GROW(module);
	GROW(next_in_module);
	GROW(kind);
	GROW(dtype);
	GROW(compute_dtype);
	GROW(numel);
	GROW(flags);
	GROW(group);
	GROW(home_group);
	GROW(last_event);
	GROW(decl);
	GROW(alias_of);
	GROW(order);
	GROW(rank);
	t->capacity = m;
	return 0;
}

static int add_tensor(struct dtl_sim *sim, struct module_lookup *paths, const char *name,
                      uint32_t len, uint32_t decl)
{
	struct dtl_table *t = &sim->t;
	uint32_t path_len = 0;

	if (t->count == t->capacity && grow_table(sim, t->capacity * 2 + 16) < 0)
		return -ENOMEM;
	uint32_t i = (uint32_t)t->count++;

	for (uint32_t k = len; k-- > 0;)
		if (name[k] == '.') {
			path_len = k;
			break;
		}
	int64_t mod = module_for(sim, paths, name, path_len);
	if (mod < 0)
		return (int)mod;
	t->name[i] = name;
	t->name_len[i] = len;
	t->module[i] = (uint32_t)mod;
	t->next_in_module[i] = DTL_NONE_INDEX;
	t->group[i] = DTL_NONE_INDEX;
	t->home_group[i] = DTL_NONE_INDEX;
	t->last_event[i] = DTL_NONE_INDEX;
	t->alias_of[i] = DTL_NONE_INDEX;
	t->decl[i] = decl;
	struct dtl_module *m = &sim->modules[mod];
	if (m->last_tensor == DTL_NONE_INDEX)
		m->first_tensor = i;
	else
		t->next_in_module[m->last_tensor] = i;
	m->last_tensor = i;
	return 0;
}

/* docs/design.md §3: names PEFT gives the tensors it creates (one pass over the name's dots) */
static bool is_adapter_name(const char *name, size_t len)
{
	static const struct {
		const char *text;
		size_t len;
	} parts[] = {
	    {".lora_A.", 8},
	    {".lora_B.", 8},
	    {".lora_magnitude_vector", 22},
	    {".lora_embedding_A.", 18},
	    {".lora_embedding_B.", 18},
	    {".modules_to_save.", 17},
	};
	const char *end = name + len;

	for (const char *dot = memchr(name, '.', len); dot;
	     dot = memchr(dot + 1, '.', (size_t)(end - dot - 1))) {
		size_t rest = (size_t)(end - dot);
		/* every part is ".lora_..." or ".modules_to_save.": most dots (".layers",
		 * ".mlp") are passed over on a word compare */
		if (rest < 8 || (dot[1] == 'l' ? memcmp(dot + 2, "ora_", 4) != 0
		                               : dot[1] != 'm' || rest < 17 ||
		                                     memcmp(dot + 2, "odules_", 7) != 0))
			continue;
		for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++)
			if (rest >= parts[k].len && memcmp(dot, parts[k].text, parts[k].len) == 0)
				return true;
	}
	return false;
}

/* The frozen globs, matched once against every declared tensor: whether the tensor is frozen,
 * and which globs matched something (sim->frozen_hit, for DT601). */
struct frozen_match {
	struct dtl_globset_cursor *cursor;
	uint32_t *matched; /* scratch: the globs matching one name */
	size_t count, unmatched;
	/* the name's segments as its module's lookup found them: the cursor need not find
	 * them again (names come in the order module_for saw their module paths) */
	struct dtl_path_known known;
};

static bool frozen_by_glob(struct dtl_sim *sim, struct frozen_match *f, const char *name,
                           size_t len)
{
	/* once every glob has matched, the first one is all there is to know */
	if (!f->unmatched)
		return dtl_globset_cursor_first_known(f->cursor, name, len, &f->known) >= 0;
	size_t n =
	    dtl_globset_cursor_matches_known(f->cursor, name, len, &f->known, f->matched, f->count);
	for (size_t k = 0; k < n && k < f->count; k++)
		if (!sim->frozen_hit[f->matched[k]]) {
			sim->frozen_hit[f->matched[k]] = true;
			f->unmatched--;
		}
	return n > 0;
}

static void init_from_decl(struct dtl_sim *sim, struct frozen_match *frozen, uint32_t i,
                           const struct dtl_tensor_decl *d)
{
	const struct dtl_manifest *m = sim->manifest;
	struct dtl_table *t = &sim->t;
	enum dtl_dtype dtype = dtl_sim_declared_dtype(m, d);
	t->kind[i] = (uint8_t)d->kind;
	if (m->quantization.method != DTL_QUANT_NONE &&
	    dtl_sim_is_quant_state_name(d->name, d->name_len)) {
		/* part of its weight's quant state (bitsandbytes' Params4bit and Int8Params,
		 * https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/bitsandbytes/nn/modules.py),
		 * neither a parameter nor a buffer of the module */
		t->kind[i] = DTL_KIND_QUANT_STATE;
		t->flags[i] |= DTL_TF_QUANT_STATE;
	}
	t->dtype[i] = (uint8_t)dtype;
	t->compute_dtype[i] = (uint8_t)dtype;
	t->numel[i] = d->numel;
	/* docs/design.md §3 "trainable": the tensor's own key wins over the frozen globs; otherwise
	 * floating parameters are trainable and buffers never are */
	bool trainable,
	    by_glob = frozen->count && frozen_by_glob(sim, frozen, d->name, d->name_len);
	if (d->trainable != DTL_UNSET)
		trainable = d->trainable == DTL_TRUE;
	else
		trainable = d->kind == DTL_KIND_PARAM && dtl_dtype_is_floating(dtype) && !by_glob;
	if (trainable && t->kind[i] == DTL_KIND_PARAM)
		t->flags[i] |= DTL_TF_TRAINABLE;
	if (d->kind == DTL_KIND_BUFFER && d->persistent)
		t->flags[i] |= DTL_TF_PERSISTENT;
	if (is_adapter_name(d->name, d->name_len))
		t->flags[i] |= DTL_TF_ADAPTER;
}

static int build_order(struct dtl_sim *sim)
{
	struct dtl_table *t = &sim->t;
	uint32_t *stack = dtl_arena_calloc(sim->arena, sim->module_count + 1, sizeof(*stack));
	size_t top = 0, k = 0;

	if (!stack)
		return -ENOMEM;
	/* iterative pre-order: own tensors, then children in first-appearance order */
	stack[top++] = 0;
	while (top > 0) {
		uint32_t mod = stack[--top];
		const struct dtl_module *m = &sim->modules[mod];
		for (uint32_t i = m->first_tensor; i != DTL_NONE_INDEX; i = t->next_in_module[i]) {
			t->rank[i] = (uint32_t)k;
			t->order[k++] = i;
		}
		/* push children in reverse so the first child is visited first */
		size_t first = top;
		for (uint32_t c = m->first_child; c != DTL_NONE_INDEX;
		     c = sim->modules[c].next_sibling)
			stack[top++] = c;
		for (size_t a = first, b = top ? top - 1 : 0; a < b; a++, b--) {
			uint32_t tmp = stack[a];
			stack[a] = stack[b];
			stack[b] = tmp;
		}
	}
	return 0;
}

/* The index of the tensor called name, or -1. */
static int64_t tensor_index(const struct dtl_sim *sim, const char *name, size_t len)
{
	int64_t i = dtl_strmap_get(sim->declared_names, name, len);

	return i >= 0 ? i : dtl_strmap_get(&sim->tensor_names, name, len);
}

static int add_tied_aliases(struct dtl_sim *sim, struct module_lookup *paths,
                            struct dtl_error *error)
{
	struct dtl_strmap *names = &sim->tensor_names;
	const struct dtl_manifest *m = sim->manifest;
	struct dtl_table *t = &sim->t;
	int r;

	for (size_t g = 0; g < m->model.tied_count; g++) {
		const struct dtl_tied_group *tg = &m->model.tied[g];
		uint32_t canonical = DTL_NONE_INDEX;
		for (size_t k = 0; k < tg->count; k++) {
			int64_t idx = tensor_index(sim, tg->names[k].text, tg->names[k].len);
			if (idx >= 0 && (canonical == DTL_NONE_INDEX || (uint32_t)idx < canonical))
				canonical = (uint32_t)idx;
		}
		if (canonical == DTL_NONE_INDEX)
			return fail_at(sim, tg->loc, error,
			               "none of the tied tensors%s%s is in 'tensors'", "", "");
		if (t->kind[canonical] != DTL_KIND_PARAM)
			return fail_at(sim, tg->loc, error, "tied tensor '%s' is a buffer",
			               t->name[canonical]);
		for (size_t k = 0; k < tg->count; k++) {
			const struct dtl_pattern *p = &tg->names[k];
			int64_t idx = tensor_index(sim, p->text, p->len);
			if (idx >= 0 && (uint32_t)idx == canonical)
				continue;
			if (idx < 0) {
				/* a tied name the checkpoint leaves out (HF saves one copy):
				 * it still names a module that uses the parameter */
				uint32_t i = (uint32_t)t->count;
				r = add_tensor(sim, paths, p->text, p->len, DTL_NONE_INDEX);
				if (r < 0)
					return r;
				if (dtl_strmap_put(names, p->text, p->len, i) < 0)
					return -ENOMEM;
				t->kind[i] = DTL_KIND_PARAM;
				t->dtype[i] = t->dtype[canonical];
				t->compute_dtype[i] = t->dtype[canonical];
				t->numel[i] = t->numel[canonical];
				idx = i;
			}
			if (t->kind[idx] != DTL_KIND_PARAM)
				return fail_at(sim, p->loc, error, "tied tensor '%s' is a buffer",
				               t->name[idx]);
			t->flags[idx] |= DTL_TF_ALIAS;
			t->flags[idx] &= ~DTL_TF_TRAINABLE;
			t->alias_of[idx] = canonical;
		}
	}
	return 0;
}

/* Are all tensors in the module's subtree bitsandbytes quant state? (The subtree, not a scan
 * of the table: a checkpoint can hold a quant state for every one of 100k weights.) */
/* The weight a quant-state entry belongs to: "<m>.weight.absmax" (and quant_map,
 * quant_state.*, nested_*) -> "<m>.weight"; "<m>.SCB", "<m>.weight_format" -> "<m>.weight". */
static uint32_t quant_state_owner(const struct dtl_sim *sim, uint32_t t)
{
	const char *name = sim->t.name[t];
	uint32_t len = sim->t.name_len[t];
	const char *hit = NULL;

	for (uint32_t i = 0; i + 8 <= len; i++)
		if (memcmp(name + i, ".weight.", 8) == 0)
			hit = name + i;
	if (hit)
		return dtl_sim_find(sim, name, (size_t)(hit - name) + 7);
	/* SCB, weight_format: a sibling of the weight, in the same module */
	const struct dtl_module *m = &sim->modules[sim->t.module[t]];
	size_t skip = sim->t.module[t] ? m->path_len + 1 : 0;
	for (uint32_t w = m->first_tensor; w != DTL_NONE_INDEX; w = sim->t.next_in_module[w])
		if (sim->t.name_len[w] == skip + 6 &&
		    memcmp(sim->t.name[w] + skip, "weight", 6) == 0)
			return w;
	return DTL_NONE_INDEX;
}

/* Weights whose quant state the checkpoint stores beside them are pre-quantized. */
static void mark_prequantized(struct dtl_sim *sim)
{
	for (uint32_t t = 0; t < sim->t.count; t++) {
		if (!(sim->t.flags[t] & DTL_TF_QUANT_STATE))
			continue;
		uint32_t w = quant_state_owner(sim, t);
		if (w != DTL_NONE_INDEX && sim->t.kind[w] == DTL_KIND_PARAM)
			sim->t.flags[w] |= DTL_TF_PREQUANTIZED;
	}
}

/* A pre-order walk of mod's subtree through the parent links: no recursion, since a module
 * tree is as deep as its longest name has segments. */
static bool only_quant_state_below(const struct dtl_sim *sim, uint32_t mod)
{
	uint32_t m = mod;

	for (;;) {
		const struct dtl_module *md = &sim->modules[m];
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t])
			if (!dtl_sim_is_quant_state_name(sim->t.name[t], sim->t.name_len[t]))
				return false;
		if (md->first_child != DTL_NONE_INDEX) {
			m = md->first_child;
			continue;
		}
		while (m != mod && sim->modules[m].next_sibling == DTL_NONE_INDEX)
			m = sim->modules[m].parent;
		if (m == mod)
			return true;
		m = sim->modules[m].next_sibling;
	}
}

/* The module whose path is tensor i's name, or -1. It can only be a child of the tensor's own
 * module (the one its name's last dot closes): those are looked at, up to CHILDREN_SCANNED
 * (most modules have a few); a module with more children is asked through the path map. */
#define CHILDREN_SCANNED 16

static int64_t submodule_named(const struct dtl_sim *sim, uint32_t i)
{
	const char *name = sim->t.name[i];
	uint32_t len = sim->t.name_len[i], mod = sim->t.module[i], scanned = 0;
	const struct dtl_module *m = &sim->modules[mod];
	size_t skip = mod ? m->path_len + 1 : 0; /* the name's last segment starts there */

	for (uint32_t c = m->first_child; c != DTL_NONE_INDEX; c = sim->modules[c].next_sibling) {
		const struct dtl_module *child = &sim->modules[c];
		if (++scanned > CHILDREN_SCANNED)
			return dtl_module_at(sim, name, len);
		if (child->path_len == len &&
		    memcmp(child->path + skip, name + skip, len - skip) == 0)
			return c;
	}
	return -1;
}

int dtl_sim_build_table(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_manifest *m = sim->manifest;
	struct module_lookup lookup = {0}, *paths = &lookup;
	struct dtl_globset frozen;
	struct frozen_match frozen_match = {.count = m->frozen.count, .unmatched = m->frozen.count};
	size_t extra = 0;
	int r;

	for (size_t g = 0; g < m->model.tied_count; g++)
		extra += m->model.tied[g].count;
	r = grow_table(sim, m->tensor_count + extra);
	if (r < 0)
		return r;
	/* every module but the root is a prefix of a name ending before a '.', so half the
	 * bytes of the names bound their number; pages the array does not use cost nothing
	 * (arena.h), so it need not grow */
	size_t bound = 1;
	for (size_t i = 0; i < m->tensor_count; i++)
		bound += m->tensors[i].name_len / 2;
	for (size_t g = 0; g < m->model.tied_count; g++)
		for (size_t k = 0; k < m->model.tied[g].count; k++)
			bound += m->model.tied[g].names[k].len / 2;
	/* (a bound that large is a strange model: start at four per tensor, and grow) */
	if (bound > 4 * (m->tensor_count + extra) + 64)
		bound = 4 * (m->tensor_count + extra) + 64;
	sim->module_capacity = bound;
	sim->modules = dtl_arena_calloc(sim->arena, sim->module_capacity, sizeof(*sim->modules));
	if (!sim->modules)
		return -ENOMEM;
	dtl_module_index_init(sim);
	dtl_strmap_init(&sim->tensor_names, sim->arena);
	dtl_strmap_init(&sim->own_declared, sim->arena);
	/* the parser's map, when it has one: the manifest's names are not hashed again */
	bool own = m->tensor_index.count != m->tensor_count;
	sim->declared_names = own ? &sim->own_declared : &m->tensor_index;
	/* about as many modules as tensors in real models: no rehash on the way */
	if (dtl_strmap_reserve(&sim->tensor_names, extra) < 0 ||
	    (own && dtl_strmap_reserve(&sim->own_declared, m->tensor_count) < 0) ||
	    dtl_module_index_reserve(sim, m->tensor_count + extra) < 0)
		return -ENOMEM;
	dtl_globset_init(&frozen, sim->arena);
	for (size_t i = 0; i < m->frozen.count; i++)
		if (dtl_globset_add(&frozen, m->frozen.items[i].text, m->frozen.items[i].len) < 0)
			return -ENOMEM;
	/* names in manifest order share most of their segments with the one before */
	frozen_match.cursor = dtl_globset_cursor_new(&frozen, sim->arena);
	frozen_match.matched = dtl_arena_calloc(sim->arena, m->frozen.count + 1, sizeof(uint32_t));
	sim->frozen_hit = dtl_arena_calloc(sim->arena, m->frozen.count + 1, sizeof(bool));
	if (!frozen_match.cursor || !frozen_match.matched || !sim->frozen_hit ||
	    dtl_sim_new_module(sim, "", 0, DTL_NONE_INDEX) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < m->tensor_count; i++) {
		const struct dtl_tensor_decl *d = &m->tensors[i];
		r = add_tensor(sim, paths, d->name, d->name_len, (uint32_t)i);
		if (r < 0)
			return r;
		/* the module path's segments are the name's first ones (none for a name with no
		 * dot: no lookup), and the leaf, which has no dot, ends the name: its end goes in
		 * the slot after them, which the lookup writes before it reads again */
		if (frozen_match.count) {
			size_t count = sim->t.module[i] ? lookup.depth : 0;
			if (count && count < LOOKUP_DEPTH)
				lookup.end[count++] = d->name_len;
			frozen_match.known = (struct dtl_path_known){
			    .shared = lookup.shared, .ends = lookup.end, .count = count};
		}
		if (own && dtl_strmap_put(&sim->own_declared, d->name, d->name_len, (int64_t)i) < 0)
			return -ENOMEM;
		init_from_decl(sim, &frozen_match, (uint32_t)i, d);
		if (d->trainable == DTL_TRUE && !dtl_dtype_is_floating(sim->t.dtype[i]))
			return fail_at(sim, d->loc, error,
			               "'%s' is %s and cannot be trainable: only floating tensors "
			               "can require gradients",
			               d->name, dtl_dtype_name(sim->t.dtype[i]));
	}
	sim->frozen_scanned = m->tensor_count;
	r = add_tied_aliases(sim, paths, error);
	if (r < 0)
		return r;
	if (m->quantization.method != DTL_QUANT_NONE)
		mark_prequantized(sim);
	/* torch refuses an attribute that is both a tensor and a submodule */
	for (size_t i = 0; i < sim->t.count; i++) {
		int64_t mod = submodule_named(sim, (uint32_t)i);
		if (mod >= 0) {
			/* bitsandbytes checkpoints store a weight's quant state below its name
			 * ("q_proj.weight.absmax"): not a module in memory */
			if (only_quant_state_below(sim, (uint32_t)mod))
				continue;
			return fail_at(sim, dtl_sim_tensor_loc(sim, (uint32_t)i), error,
			               "'%s' is both a tensor and a module holding other tensors",
			               sim->t.name[i]);
		}
	}
	return build_order(sim);
}

int dtl_sim_add_tensor(struct dtl_sim *sim, const char *name, uint32_t len,
                       enum dtl_tensor_kind kind, enum dtl_dtype dtype, int64_t numel,
                       uint32_t flags, uint32_t *ret_index)
{
	uint32_t i = (uint32_t)sim->t.count;
	int r;

	if (dtl_module_at(sim, name, len) >= 0 || tensor_index(sim, name, len) >= 0)
		return -EEXIST;
	struct module_lookup lookup = {0};
	r = add_tensor(sim, &lookup, name, len, DTL_NONE_INDEX);
	if (r < 0)
		return r;
	if (dtl_strmap_put(&sim->tensor_names, name, len, i) < 0)
		return -ENOMEM;
	sim->t.kind[i] = (uint8_t)kind;
	sim->t.dtype[i] = (uint8_t)dtype;
	sim->t.compute_dtype[i] = (uint8_t)dtype;
	sim->t.numel[i] = numel;
	sim->t.flags[i] = flags;
	*ret_index = i;
	return 0;
}

int dtl_sim_rebuild_order(struct dtl_sim *sim)
{
	return build_order(sim);
}

uint32_t dtl_sim_find(const struct dtl_sim *sim, const char *name, size_t len)
{
	int64_t i = tensor_index(sim, name, len);
	return i < 0 ? DTL_NONE_INDEX : (uint32_t)i;
}

struct dtl_loc dtl_sim_tensor_loc(const struct dtl_sim *sim, uint32_t tensor)
{
	uint32_t decl = sim->t.decl[tensor];

	if (decl == DTL_NONE_INDEX && sim->t.alias_of[tensor] != DTL_NONE_INDEX)
		decl = sim->t.decl[sim->t.alias_of[tensor]];
	if (decl == DTL_NONE_INDEX && (sim->t.flags[tensor] & DTL_TF_ADAPTER) &&
	    sim->manifest->adapter.present)
		return sim->manifest->adapter.loc; /* injected by the peft stage */
	if (decl == DTL_NONE_INDEX) {
		struct dtl_loc loc = {.file = sim->manifest->file, .line = 1, .column = 1};
		return loc;
	}
	return sim->manifest->tensors[decl].loc;
}
