/* SPDX-License-Identifier: MIT */
/*
 * transformers' weight-conversion mapping as data (rules/conversions.yaml): an HF folder's
 * safetensors keys are the checkpoint's names, and transformers renames and merges them at load
 * (Mixtral's per-expert w1/w3 become one 3-D mlp.experts.gate_up_proj, LLaVA's
 * language_model.model.* becomes model.language_model.*). import-hf.c finds the entry of a
 * folder; dtl_manifest_at_versions() (behavior.c) applies it where the plan's transformers has
 * the entry's behaviour, so that every stage and rule sees the tensors training sees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/core/dtype.h"
#include "dtypelint/model/behavior.h"
#include "dtypelint/model/embedded.h"
#include "dtypelint/model/hf-conversion.h"
#include "dtypelint/model/schema.h"
#include "import-util.h"

#define RULES_FILE       "rules/conversions.yaml"
#define MAX_SOURCES      4 /* patterns concatenated by one merge (gate and up: 2) */
#define MAX_INDEX_DIGITS 9

/* ---- reading rules/conversions.yaml ---- */

/* a conversion holds in the versions of its behaviour, which it must name */
static int parse_behavior(const struct dtl_schema *s, const struct dtl_node *n, int *ret)
{
	int r = dtl_schema_behavior(s, n, ret);
	if (r == 0 && *ret < 0)
		return dtl_schema_fail(s, n, "a conversion needs 'behaviour'");
	return r;
}

static int parse_rename(const struct dtl_schema *s, const struct dtl_node *n,
                        struct dtl_hf_rename *ret)
{
	static const char *const keys[] = {"from", "to", "scope", "unless", "behaviour", NULL};
	const struct dtl_node *from, *to, *scope, *unless;
	int r = dtl_schema_map(s, n, "renames[]");

	if (r < 0 || (r = dtl_schema_check_keys(s, n, "renames[]", keys)) < 0)
		return r;
	if (!(from = dtl_node_get(n, "from")) || !(to = dtl_node_get(n, "to")))
		return dtl_schema_fail(s, n, "a rename needs 'from' and 'to'");
	if ((r = dtl_schema_string(s, from, "from", &ret->from)) < 0 ||
	    (r = dtl_schema_string(s, to, "to", &ret->to)) < 0)
		return r;
	ret->anchored = ret->from[0] == '^';
	ret->from += ret->anchored;
	ret->from_len = strlen(ret->from);
	ret->to_len = strlen(ret->to);
	if (!ret->from_len)
		return dtl_schema_fail(s, from, "'from' must name some text");
	if ((scope = dtl_node_get(n, "scope"))) {
		if ((r = dtl_schema_string(s, scope, "scope", &ret->scope)) < 0)
			return r;
		ret->scope_len = strlen(ret->scope);
	}
	if ((unless = dtl_node_get(n, "unless")) &&
	    (r = dtl_schema_strings(s, unless, "unless", &ret->unless, &ret->unless_count)) < 0)
		return r;
	ret->behavior = -1;
	if (dtl_node_get(n, "behaviour"))
		return parse_behavior(s, n, &ret->behavior);
	return 0;
}

static int parse_merge_source(const struct dtl_schema *s, const struct dtl_node *n,
                              struct dtl_hf_merge_source *ret)
{
	const char *text, *star;
	int r = dtl_schema_string(s, n, "merges.from[]", &text);
	if (r < 0)
		return r;
	if (!(star = strchr(text, '*')) || strchr(star + 1, '*') || !star[1])
		return dtl_schema_fail(s, n,
		                       "a merge pattern needs one '*' (the expert index), "
		                       "with text after it");
	ret->pre = text;
	ret->pre_len = (size_t)(star - text);
	ret->post = star + 1;
	ret->post_len = strlen(star + 1);
	return 0;
}

static int parse_merge(const struct dtl_schema *s, const struct dtl_node *n,
                       struct dtl_hf_merge *ret)
{
	static const char *const keys[] = {"from", "to", NULL};
	const struct dtl_node *from, *to;
	int r = dtl_schema_map(s, n, "merges[]");

	if (r < 0 || (r = dtl_schema_check_keys(s, n, "merges[]", keys)) < 0)
		return r;
	if (!(from = dtl_node_get(n, "from")) || !(to = dtl_node_get(n, "to")))
		return dtl_schema_fail(s, n, "a merge needs 'from' and 'to'");
	if (from->type != DTL_NODE_SEQ || !from->seq.count || from->seq.count > MAX_SOURCES)
		return dtl_schema_fail(s, from, "'from' must list 1 to %d patterns", MAX_SOURCES);
	if ((r = dtl_schema_string(s, to, "to", &ret->to)) < 0)
		return r;
	ret->to_len = strlen(ret->to);
	ret->source_count = from->seq.count;
	ret->sources = dtl_arena_calloc(s->arena, ret->source_count, sizeof(*ret->sources));
	if (!ret->sources)
		return -ENOMEM;
	for (size_t i = 0; i < ret->source_count; i++)
		if ((r = parse_merge_source(s, &from->seq.items[i], &ret->sources[i])) < 0)
			return r;
	return 0;
}

static int parse_conversion(const struct dtl_schema *s, const struct dtl_node *n,
                            struct dtl_hf_conversion *ret)
{
	const struct dtl_node *renames = dtl_node_get(n, "renames"),
	                      *merges = dtl_node_get(n, "merges");
	int r;

	if ((r = parse_behavior(s, n, &ret->behavior)) < 0)
		return r;
	if (renames && renames->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, renames, "renames", "a list");
	if (merges && merges->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, merges, "merges", "a list");
	ret->rename_count = renames ? renames->seq.count : 0;
	ret->merge_count = merges ? merges->seq.count : 0;
	ret->renames = dtl_arena_calloc(s->arena, ret->rename_count + 1, sizeof(*ret->renames));
	ret->merges = dtl_arena_calloc(s->arena, ret->merge_count + 1, sizeof(*ret->merges));
	if (!ret->renames || !ret->merges)
		return -ENOMEM;
	for (size_t i = 0; i < ret->rename_count; i++)
		if ((r = parse_rename(s, &renames->seq.items[i], &ret->renames[i])) < 0)
			return r;
	for (size_t i = 0; i < ret->merge_count; i++)
		if ((r = parse_merge(s, &merges->seq.items[i], &ret->merges[i])) < 0)
			return r;
	return 0;
}

/* Does the entry's list `key` name `name`? Checks every entry's keys and list form. */
static int entry_names(const struct dtl_schema *s, const struct dtl_node *n, const char *key,
                       const char *name, bool *ret)
{
	const struct dtl_node *list = dtl_node_get(n, key);
	const char **items;
	size_t count;
	int r;

	*ret = false;
	if (!list)
		return 0;
	if ((r = dtl_schema_strings(s, list, key, &items, &count)) < 0)
		return r;
	for (size_t i = 0; name && i < count; i++)
		*ret = *ret || strcmp(items[i], name) == 0;
	return 0;
}

/* The entry of seq that names `name` in its list `key`, or NULL */
static int find_entry(const struct dtl_schema *s, const struct dtl_node *seq, const char *key,
                      const char *name, const struct dtl_node **ret)
{
	static const char *const keys[] = {"architectures", "model_types", "behaviour",
	                                   "renames",       "merges",      NULL};
	for (size_t i = 0; i < seq->seq.count; i++) {
		const struct dtl_node *n = &seq->seq.items[i];
		bool hit;
		int r = dtl_schema_map(s, n, "conversions[]");
		if (r < 0 || (r = dtl_schema_check_keys(s, n, "conversions[]", keys)) < 0 ||
		    (r = entry_names(s, n, key, name, &hit)) < 0)
			return r;
		if (hit && !*ret)
			*ret = n;
	}
	return 0;
}

static int find_in(const struct dtl_schema *s, const struct dtl_node *root,
                   const char *architecture, const char *model_type,
                   const struct dtl_hf_conversion **ret)
{
	const struct dtl_node *seq = dtl_node_get(root, "conversions"), *hit = NULL;
	struct dtl_hf_conversion *c;
	int r;

	if ((r = dtl_schema_root_map(s, root, RULES_FILE)) < 0)
		return r;
	if (!seq || seq->type != DTL_NODE_SEQ)
		return dtl_schema_fail(s, root, "needs a list 'conversions'");
	/* transformers looks the class name up before the model_type */
	if ((r = find_entry(s, seq, "architectures", architecture, &hit)) < 0 ||
	    (!hit && (r = find_entry(s, seq, "model_types", model_type, &hit)) < 0))
		return r;
	if (!hit)
		return 0;
	if (!(c = dtl_arena_calloc(s->arena, 1, sizeof(*c))))
		return -ENOMEM;
	if ((r = parse_conversion(s, hit, c)) < 0)
		return r;
	*ret = c;
	return 0;
}

int dtl_hf_conversion_find(const char *architecture, const char *model_type,
                           struct dtl_arena *arena, const struct dtl_hf_conversion **ret,
                           struct dtl_error *error)
{
	const struct dtl_embedded_file *f = &dtl_embedded_conversions[0];
	struct dtl_limits limits;
	struct dtl_schema s = {
	    .file = RULES_FILE, .arena = arena, .limits = &limits, .error = error};
	struct dtl_source source;
	struct dtl_node *root;
	const struct dtl_hf_conversion *c = NULL;
	int r;

	if (!architecture && !model_type) {
		*ret = NULL;
		return 0;
	}
	dtl_limits_default(&limits);
	if ((r = dtl_source_init_mem(&source, RULES_FILE, f->data, f->size)) < 0)
		return r;
	if ((r = dtl_doc_parse_yaml(&source, arena, &limits, &root, error)) >= 0)
		r = find_in(&s, root, architecture, model_type, &c);
	dtl_source_fini(&source);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

/* ---- applying it ---- */

/* a + b + c (lengths given) as one NUL-terminated string in arena */
static char *join3(struct dtl_arena *arena, const char *a, size_t al, const char *b, size_t bl,
                   const char *c, size_t cl)
{
	char *out = dtl_arena_alloc(arena, al + bl + cl + 1);
	if (!out)
		return NULL;
	memcpy(out, a, al);
	memcpy(out + al, b, bl);
	memcpy(out + al + bl, c, cl);
	out[al + bl + cl] = '\0';
	return out;
}

/* Where rename e matches name[0..len) (after its scope), as transformers' regex search finds
 * it; -1: no match. */
static ptrdiff_t rename_match(const struct dtl_hf_rename *e, const char *name, size_t len)
{
	size_t skip = e->scope_len && len >= e->scope_len && !memcmp(name, e->scope, e->scope_len)
	                  ? e->scope_len
	                  : 0;
	const char *base = name + skip, *hit;
	size_t blen = len - skip;

	if (e->anchored)
		hit = blen >= e->from_len && !memcmp(base, e->from, e->from_len) ? base : NULL;
	else
		hit = memmem(base, blen, e->from, e->from_len);
	if (!hit)
		return -1;
	const char *after = hit + e->from_len;
	size_t rest = (size_t)(name + len - after);
	for (size_t u = 0; u < e->unless_count; u++) {
		size_t ul = strlen(e->unless[u]);
		if (rest >= ul && !memcmp(after, e->unless[u], ul))
			return -1;
	}
	return hit - name;
}

/* The versions a conversion is applied at: which of its renames are in force */
struct at {
	const struct dtl_hf_conversion *c;
	const struct dtl_behavior_table *table;
	const struct dtl_version *versions;
};

/* name after every rename of c in force, in order (name itself when none matches) */
static int rename_all(const struct at *at_v, const char *name, uint32_t len,
                      struct dtl_arena *arena, const char **ret, uint32_t *ret_len)
{
	const struct dtl_hf_conversion *c = at_v->c;
	for (size_t i = 0; i < c->rename_count; i++) {
		const struct dtl_hf_rename *e = &c->renames[i];
		if (e->behavior >= 0 &&
		    !dtl_behavior_active(at_v->table, (enum dtl_behavior)e->behavior,
		                         at_v->versions))
			continue;
		ptrdiff_t at = rename_match(e, name, len);
		if (at < 0)
			continue;
		size_t tail = len - (size_t)at - e->from_len;
		if (e->to_len + len - e->from_len > UINT32_MAX / 2)
			continue;
		const char *out =
		    join3(arena, name, (size_t)at, e->to, e->to_len, name + at + e->from_len, tail);
		if (!out)
			return -ENOMEM;
		name = out;
		len = (uint32_t)((size_t)at + e->to_len + tail);
	}
	*ret = name;
	*ret_len = len;
	return 0;
}

/* The merge group a tensor belongs to: one target name of one merge */
struct group {
	const struct dtl_hf_merge *merge;
	const char *name;
	uint32_t len;
	size_t first; /* the first member's index: the merged tensor takes its place */
	size_t count[MAX_SOURCES];
	int64_t max_index[MAX_SOURCES];
	const struct dtl_tensor_decl *shape_of[MAX_SOURCES];
	enum dtl_dtype dtype;
	bool have_dtype;
	bool bad;
};

struct conv {
	const struct dtl_hf_conversion *c;
	struct at at;
	struct dtl_arena *arena;
	struct dtl_tensor_decl *t; /* the renamed tensors */
	size_t n;
	int64_t *member;       /* per tensor: its group, or -1 */
	struct dtl_vec groups; /* struct group */
	struct dtl_strmap targets;
};

/* Does name end with src's post, the expert index (no leading zero) before it and src's pre
 * before that? *ret_prefix: the length before pre; *ret_index: the index. */
static bool source_match(const struct dtl_hf_merge_source *src, const char *name, size_t len,
                         size_t *ret_prefix, int64_t *ret_index)
{
	if (len < src->post_len + src->pre_len + 1 ||
	    memcmp(name + len - src->post_len, src->post, src->post_len) != 0)
		return false;
	size_t end = len - src->post_len, start = end;
	while (start > 0 && end - start <= MAX_INDEX_DIGITS && name[start - 1] >= '0' &&
	       name[start - 1] <= '9')
		start--;
	if (start == end || end - start > MAX_INDEX_DIGITS ||
	    (name[start] == '0' && end - start > 1))
		return false;
	if (start < src->pre_len || memcmp(name + start - src->pre_len, src->pre, src->pre_len))
		return false;
	int64_t index = 0;
	for (size_t i = start; i < end; i++)
		index = index * 10 + (name[i] - '0');
	*ret_prefix = start - src->pre_len;
	*ret_index = index;
	return true;
}

static bool same_shape(const struct dtl_tensor_decl *a, const struct dtl_tensor_decl *b,
                       bool skip_dim0)
{
	if (!a->shape || !b->shape)
		return !a->shape && !b->shape;
	if (a->rank != b->rank)
		return false;
	for (uint32_t d = skip_dim0 ? 1 : 0; d < a->rank; d++)
		if (a->shape[d] != b->shape[d])
			return false;
	return true;
}

/* Tensor t joins group g as a member of source s with its expert index */
static void join(struct group *g, const struct dtl_tensor_decl *t, size_t s, int64_t index)
{
	if (!g->have_dtype) {
		g->dtype = t->dtype;
		g->have_dtype = true;
	}
	if (t->dtype != g->dtype || t->kind != DTL_KIND_PARAM ||
	    (t->dtype != DTL_DTYPE_NONE && !dtl_dtype_is_floating(t->dtype)))
		g->bad = true;
	if (!g->shape_of[s])
		g->shape_of[s] = t;
	else if (!same_shape(g->shape_of[s], t, false))
		g->bad = true;
	g->count[s]++;
	if (index > g->max_index[s])
		g->max_index[s] = index;
}

static int group_of(struct conv *cv, const struct dtl_hf_merge *mg, const char *name, size_t prefix,
                    size_t i, struct group **ret)
{
	char *target = join3(cv->arena, name, prefix, mg->to, mg->to_len, "", 0);
	if (!target)
		return -ENOMEM;
	size_t tl = prefix + mg->to_len;
	int64_t at = dtl_strmap_get(&cv->targets, target, tl);
	if (at < 0) {
		struct group *g = dtl_vec_push(&cv->groups, cv->arena, sizeof(*g));
		if (!g)
			return -ENOMEM;
		*g = (struct group){.merge = mg, .name = target, .len = (uint32_t)tl, .first = i};
		for (size_t s = 0; s < MAX_SOURCES; s++)
			g->max_index[s] = -1;
		at = (int64_t)cv->groups.count - 1;
		if (dtl_strmap_put(&cv->targets, target, tl, at) < 0)
			return -ENOMEM;
	}
	struct group *g = &((struct group *)cv->groups.items)[at];
	if (g->merge != mg)
		g->bad = true; /* two merges name one target: leave both */
	cv->member[i] = at;
	*ret = g;
	return 0;
}

/* Each tensor's merge group: at most one merge source matches a name (transformers applies at
 * most one converter) */
static int collect(struct conv *cv)
{
	for (size_t i = 0; i < cv->n; i++) {
		const struct dtl_tensor_decl *t = &cv->t[i];
		cv->member[i] = -1;
		for (size_t m = 0; m < cv->c->merge_count && cv->member[i] < 0; m++) {
			const struct dtl_hf_merge *mg = &cv->c->merges[m];
			for (size_t s = 0; s < mg->source_count; s++) {
				size_t prefix;
				int64_t index;
				struct group *g;
				int r;
				if (!source_match(&mg->sources[s], t->name, t->name_len, &prefix,
				                  &index))
					continue;
				if ((r = group_of(cv, mg, t->name, prefix, i, &g)) < 0)
					return r;
				join(g, t, s, index);
				break;
			}
		}
	}
	return 0;
}

/* A complete, uniform group becomes one tensor: [E, sum of dim 0, rest...] */
static int merged_tensor(struct conv *cv, struct group *g, struct dtl_tensor_decl *out)
{
	const struct dtl_hf_merge *mg = g->merge;
	const struct dtl_tensor_decl *first = g->shape_of[0];
	size_t experts = g->count[0];

	for (size_t s = 0; s < mg->source_count; s++)
		if (g->count[s] != experts || g->max_index[s] + 1 != (int64_t)experts ||
		    !same_shape(first, g->shape_of[s], true))
			return 1;
	*out = cv->t[g->first];
	out->name = g->name;
	out->name_len = g->len;
	out->gate = 0;
	out->load_dtype = false;
	out->trainable = DTL_UNSET;
	if (!first->shape || !first->rank) {
		out->shape = NULL;
		out->rank = 0;
		out->numel = -1;
		return 0;
	}
	int64_t *shape = dtl_arena_calloc(cv->arena, first->rank + 1, sizeof(*shape));
	if (!shape)
		return -ENOMEM;
	int64_t dim0 = 0, numel = (int64_t)experts;
	for (size_t s = 0; s < mg->source_count; s++)
		dim0 += g->shape_of[s]->shape[0];
	shape[0] = (int64_t)experts;
	shape[1] = dim0;
	for (uint32_t d = 1; d < first->rank; d++)
		shape[d + 1] = first->shape[d];
	for (uint32_t d = 1; d <= first->rank; d++) {
		if (shape[d] < 0 || (shape[d] && numel > DTL_NUMEL_MAX / shape[d]))
			return 1;
		numel *= shape[d];
	}
	out->shape = shape;
	out->rank = first->rank + 1;
	out->numel = numel;
	return 0;
}

static int tensor_name_cmp(const void *pa, const void *pb)
{
	const struct dtl_tensor_decl *a = pa, *b = pb;
	return dtl_natural_cmp(a->name, b->name);
}

/* The converted list: merged groups in their first member's place, the other members gone */
static int emit(struct conv *cv, struct dtl_tensor_decl **ret, size_t *ret_count)
{
	struct dtl_tensor_decl *out = dtl_arena_calloc(cv->arena, cv->n + 1, sizeof(*out));
	struct group *groups = cv->groups.items;
	size_t k = 0;
	int r;

	if (!out)
		return -ENOMEM;
	for (size_t g = 0; g < cv->groups.count; g++)
		if (!groups[g].bad &&
		    (r = merged_tensor(cv, &groups[g], &out[groups[g].first])) != 0) {
			if (r < 0)
				return r;
			groups[g].bad = true;
		}
	for (size_t i = 0; i < cv->n; i++) {
		int64_t g = cv->member[i];
		if (g >= 0 && !groups[g].bad) {
			if (groups[g].first == i)
				out[k++] = out[i];
			continue;
		}
		out[k++] = cv->t[i];
	}
	*ret = out;
	*ret_count = k;
	return 0;
}

/* Do two of the n tensors share a name? The converted names must stay unique. */
static int names_unique(const struct dtl_tensor_decl *t, size_t n, struct dtl_arena *arena,
                        bool *ret)
{
	struct dtl_strmap seen;
	dtl_strmap_init(&seen, arena);
	*ret = true;
	for (size_t i = 0; i < n && *ret; i++) {
		if (dtl_strmap_get(&seen, t[i].name, t[i].name_len) >= 0)
			*ret = false;
		else if (dtl_strmap_put(&seen, t[i].name, t[i].name_len, (int64_t)i) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The tied groups under the renamed names */
static int rename_tied(const struct at *at_v, struct dtl_model_info *model, struct dtl_arena *arena)
{
	struct dtl_tied_group *tied = dtl_arena_calloc(arena, model->tied_count + 1, sizeof(*tied));
	if (!tied)
		return -ENOMEM;
	for (size_t g = 0; g < model->tied_count; g++) {
		tied[g] = model->tied[g];
		tied[g].names = dtl_arena_calloc(arena, tied[g].count + 1, sizeof(*tied[g].names));
		if (!tied[g].names)
			return -ENOMEM;
		for (size_t k = 0; k < tied[g].count; k++) {
			struct dtl_pattern *p = &tied[g].names[k];
			int r;
			*p = model->tied[g].names[k];
			if ((r = rename_all(at_v, p->text, p->len, arena, &p->text, &p->len)) < 0)
				return r;
		}
	}
	model->tied = tied;
	return 0;
}

static int renamed_tensors(struct conv *cv, const struct dtl_manifest *m, bool *ret_changed)
{
	*ret_changed = false;
	for (size_t i = 0; i < cv->n; i++) {
		struct dtl_tensor_decl *t = &cv->t[i];
		int r;
		*t = m->tensors[i];
		if ((r = rename_all(&cv->at, t->name, t->name_len, cv->arena, &t->name,
		                    &t->name_len)) < 0)
			return r;
		*ret_changed = *ret_changed || t->name != m->tensors[i].name;
	}
	return 0;
}

int dtl_hf_conversion_apply(const struct dtl_manifest *m, const struct dtl_hf_conversion *c,
                            const struct dtl_behavior_table *table,
                            const struct dtl_version versions[DTL_FW_COUNT],
                            struct dtl_arena *arena, const struct dtl_manifest **ret)
{
	struct conv cv = {.c = c,
	                  .at = {.c = c, .table = table, .versions = versions},
	                  .arena = arena,
	                  .n = m->tensor_count};
	struct dtl_manifest *out;
	struct dtl_tensor_decl *tensors;
	size_t count;
	bool changed, unique;
	int r;

	*ret = m;
	if (!c || !m->tensor_count)
		return 0;
	cv.t = dtl_arena_calloc(arena, cv.n + 1, sizeof(*cv.t));
	cv.member = dtl_arena_calloc(arena, cv.n + 1, sizeof(*cv.member));
	if (!cv.t || !cv.member)
		return -ENOMEM;
	dtl_strmap_init(&cv.targets, arena);
	if ((r = renamed_tensors(&cv, m, &changed)) < 0 || (r = collect(&cv)) < 0 ||
	    (r = emit(&cv, &tensors, &count)) < 0)
		return r;
	if (!changed && count == m->tensor_count)
		return 0;
	if ((r = names_unique(tensors, count, arena, &unique)) < 0)
		return r;
	if (!unique)
		return 0; /* a hostile folder whose names collide once converted: keep its own */
	qsort(tensors, count, sizeof(*tensors), tensor_name_cmp);
	if (!(out = dtl_arena_alloc(arena, sizeof(*out))))
		return -ENOMEM;
	*out = *m;
	out->tensors = tensors;
	out->tensor_count = count;
	out->tensor_index = (struct dtl_strmap){0};
	if (m->model.tied_count && (r = rename_tied(&cv.at, &out->model, arena)) < 0)
		return r;
	*ret = out;
	return 0;
}
