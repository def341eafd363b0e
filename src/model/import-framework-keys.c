/* SPDX-License-Identifier: MIT */
/*
 * --show-plan's keys read and not read for a framework config (--framework-config, a launch
 * line): every key an importer reads goes through dtl_fw_get, which records it here; after
 * the import, the keys read are listed with their value and place, and the keys the user's
 * file or overrides set that no importer read are listed as not read, so that a partly read
 * config never looks fully checked. Only the user's keys are listed, never the framework's
 * defaults. Linear in the file: one walk, each leaf's path hashed once at most.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import-framework.h"

/* a key path longer than this is listed cut, with "..." (a hostile nesting of n levels would
 * otherwise list n paths of up to n segments) */
#define PATH_SHOWN_MAX 1024
/* a list's value shown up to this many bytes */
#define VALUE_SHOWN_MAX 160

void dtl_fw_keys_record(const struct dtl_fw_config *c, const char *dotted, struct dtl_fw_value v)
{
	struct dtl_fw_keys *k = c->keys;
	size_t len = strlen(dotted);

	if (!k || k->oom || dtl_strmap_get(&k->seen, dotted, len) >= 0)
		return;
	struct dtl_fw_read *rd = dtl_vec_push(&k->read, c->arena, sizeof(*rd));
	const char *key = dtl_arena_strndup(c->arena, dotted, len);
	if (!rd || !key || dtl_strmap_put(&k->seen, key, len, (int64_t)k->read.count - 1) < 0) {
		k->oom = true;
		return;
	}
	rd->key = key;
	rd->v = v;
}

/* a scalar's text as written */
static const char *scalar_text(const struct dtl_node *n)
{
	if (n->type == DTL_NODE_NULL)
		return "null";
	if (n->type == DTL_NODE_STRING)
		return n->string.text;
	return n->raw ? n->raw : "";
}

/* "[a, b, c]", cut with "...]" past VALUE_SHOWN_MAX bytes */
static const char *list_text(struct dtl_arena *arena, const struct dtl_node *n)
{
	char buf[VALUE_SHOWN_MAX + 8];
	size_t at = 1;
	bool cut = false;

	buf[0] = '[';
	for (size_t i = 0; i < n->seq.count && !cut; i++) {
		const struct dtl_node *it = &n->seq.items[i];
		const char *t = it->type == DTL_NODE_SEQ   ? "[...]"
		                : it->type == DTL_NODE_MAP ? "{...}"
		                                           : scalar_text(it);
		int w = snprintf(buf + at, VALUE_SHOWN_MAX - at, "%s%s", i ? ", " : "", t);
		/* cut: snprintf wrote VALUE_SHOWN_MAX - at - 1 bytes and its NUL */
		cut = w < 0 || (size_t)w >= VALUE_SHOWN_MAX - at;
		at = cut ? VALUE_SHOWN_MAX - 1 : at + (size_t)w;
	}
	memcpy(buf + at, cut ? "...]" : "]", cut ? 5 : 2);
	return dtl_arena_strndup(arena, buf, strlen(buf));
}

static const char *value_text(struct dtl_arena *arena, const struct dtl_node *n)
{
	if (n->type == DTL_NODE_SEQ)
		return list_text(arena, n);
	if (n->type == DTL_NODE_MAP) /* an empty one: a section set is listed by its keys */
		return "{}";
	const char *t = scalar_text(n);
	return dtl_arena_strndup(arena, t, strlen(t));
}

/* every section above a key read ("a" and "a.b" for "a.b.c"): read only to place a default
 * or to see whether anything is set under it, it is listed by its keys, not itself */
static int sections_of_reads(struct dtl_fw_config *c, struct dtl_strmap *ret)
{
	const struct dtl_fw_read *reads = c->keys->read.items;

	dtl_strmap_init(ret, c->arena);
	for (size_t i = 0; i < c->keys->read.count; i++)
		for (const char *dot = strchr(reads[i].key, '.'); dot; dot = strchr(dot + 1, '.'))
			if (dtl_strmap_put(ret, reads[i].key, (size_t)(dot - reads[i].key), 0) < 0)
				return -ENOMEM;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct dtl_key_read *)a)->key, ((const struct dtl_key_read *)b)->key);
}

/* the reads, with their values and places, into the recipe, by key */
static int list_read(struct dtl_fw_config *c, bool *ret_any_present)
{
	const struct dtl_fw_read *reads = c->keys->read.items;
	size_t n = c->keys->read.count;
	struct dtl_key_read *out = n ? dtl_arena_calloc(c->arena, n, sizeof(*out)) : NULL;

	if (n && !out)
		return -ENOMEM;
	size_t kept = 0;
	struct dtl_strmap sections;
	int r;

	if ((r = sections_of_reads(c, &sections)) < 0)
		return r;
	*ret_any_present = false;
	for (size_t i = 0; i < n; i++) {
		const struct dtl_node *node = reads[i].v.node;
		/* a section looked at for its place or presence: its keys are listed, not it */
		if ((node && node->type == DTL_NODE_MAP && node->map.count) ||
		    (!node && dtl_strmap_get(&sections, reads[i].key, strlen(reads[i].key)) >= 0))
			continue;
		struct dtl_key_read *k = &out[kept++];
		k->key = reads[i].key;
		if (!node)
			continue;
		*ret_any_present = true;
		k->loc = dtl_fw_loc(c, reads[i].v);
		if (!(k->value = value_text(c->arena, node)))
			return -ENOMEM;
	}
	if (kept > 1)
		qsort(out, kept, sizeof(*out), by_key);
	c->m->recipe.fw_keys_read = out;
	c->m->recipe.fw_keys_read_count = kept;
	return 0;
}

/* the keys not read so far, each once, and the longest key read (a longer path is not read) */
struct not_read {
	struct dtl_fw_config *c;
	struct dtl_strmap listed;
	struct dtl_vec keys; /* const char * */
	size_t longest_read;
	size_t present; /* keys the file and the overrides set */
};

static bool was_read(const struct not_read *nr, const char *key, size_t len)
{
	return len <= nr->longest_read && dtl_strmap_get(&nr->c->keys->seen, key, len) >= 0;
}

/* key (len bytes) is set by the user: listed unless read or listed already */
static int user_key(struct not_read *nr, const char *key, size_t len)
{
	nr->present++;
	if (was_read(nr, key, len))
		return 0;
	bool cut = len > PATH_SHOWN_MAX;
	const char *shown = cut ? dtl_arena_sprintf(nr->c->arena, "%.*s...", PATH_SHOWN_MAX, key)
	                        : dtl_arena_strndup(nr->c->arena, key, len);
	if (!shown)
		return -ENOMEM;
	size_t slen = strlen(shown);
	int64_t at = dtl_strmap_put(&nr->listed, shown, slen, (int64_t)nr->keys.count);
	if (at < 0)
		return -ENOMEM;
	if ((size_t)at != nr->keys.count)
		return 0; /* listed already (an override of a file key) */
	const char **slot = dtl_vec_push(&nr->keys, nr->c->arena, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = shown;
	return 0;
}

/* the dotted path being walked: one buffer, a segment appended and dropped */
struct path {
	char *text;
	size_t len, cap;
};

static int path_push(struct dtl_arena *arena, struct path *p, const char *seg, size_t slen)
{
	size_t need = p->len + (p->len ? 1 : 0) + slen + 1;
	if (need > p->cap) {
		size_t cap = p->cap ? p->cap : 256;
		while (cap < need)
			cap *= 2;
		char *text = dtl_arena_alloc(arena, cap);
		if (!text)
			return -ENOMEM;
		if (p->len)
			memcpy(text, p->text, p->len);
		p->text = text;
		p->cap = cap;
	}
	if (p->len)
		p->text[p->len++] = '.';
	memcpy(p->text + p->len, seg, slen);
	p->len += slen;
	p->text[p->len] = '\0';
	return 0;
}

/* a mapping being walked and where its parent's path ended */
struct frame {
	const struct dtl_node *map;
	size_t next;
	size_t path_len;
};

/* one step of the walk: the next pair of the top frame, a leaf listed or a mapping entered */
static int walk_step(struct not_read *nr, struct dtl_vec *stack, struct path *p)
{
	struct frame *f = (struct frame *)stack->items + stack->count - 1;
	if (f->next == f->map->map.count) {
		stack->count--;
		return 0;
	}
	const struct dtl_pair *pair = &f->map->map.pairs[f->next++];
	const char *seg = scalar_text(&pair->key);
	size_t slen = pair->key.type == DTL_NODE_STRING ? pair->key.string.len : strlen(seg);
	int r;

	p->len = f->path_len;
	if ((r = path_push(nr->c->arena, p, seg, slen)) < 0)
		return r;
	if (pair->value.type != DTL_NODE_MAP || pair->value.map.count == 0)
		return user_key(nr, p->text, p->len);
	struct frame *in = dtl_vec_push(stack, nr->c->arena, sizeof(*in));
	if (!in)
		return -ENOMEM;
	*in = (struct frame){&pair->value, 0, p->len};
	return 0;
}

/* every leaf of the file (a scalar, a list, an empty mapping), in the file's order */
static int walk_file(struct not_read *nr, const struct dtl_node *root)
{
	struct dtl_vec stack = {0};
	struct path p = {0};
	int r = 0;

	if (!root || root->type != DTL_NODE_MAP)
		return 0;
	struct frame *f = dtl_vec_push(&stack, nr->c->arena, sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = (struct frame){root, 0, 0};
	while (stack.count && r >= 0)
		r = walk_step(nr, &stack, &p);
	return r;
}

/* whether a removal "~key" removed a key that was read */
static bool removal_read(const struct dtl_fw_keys *k, const char *key)
{
	const struct dtl_fw_read *reads = k->read.items;
	size_t n = strlen(key);

	for (size_t i = 0; i < k->read.count; i++)
		if (strncmp(reads[i].key, key, n) == 0 &&
		    (reads[i].key[n] == '\0' || reads[i].key[n] == '.'))
			return true;
	return false;
}

static int walk_overrides(struct not_read *nr)
{
	const struct dtl_fw_config *c = nr->c;
	int r;

	for (size_t i = 0; i < c->override_count; i++) {
		const struct dtl_fw_override *o = &c->overrides[i];
		if (o->removed && removal_read(c->keys, o->key)) {
			nr->present++;
			continue;
		}
		if ((r = user_key(nr, o->key, strlen(o->key))) < 0)
			return r;
	}
	return 0;
}

int dtl_fw_keys_finish(struct dtl_fw_config *c)
{
	struct not_read nr = {.c = c};
	bool any_present;
	int r;

	if (c->keys->oom)
		return -ENOMEM;
	if ((r = list_read(c, &any_present)) < 0)
		return r;
	dtl_strmap_init(&nr.listed, c->arena);
	for (size_t i = 0; i < c->keys->read.count; i++) {
		size_t len = strlen(((const struct dtl_fw_read *)c->keys->read.items)[i].key);
		nr.longest_read = len > nr.longest_read ? len : nr.longest_read;
	}
	if ((c->path && (r = walk_file(&nr, c->l->root)) < 0) || (r = walk_overrides(&nr)) < 0)
		return r;
	c->m->recipe.framework_keys = true;
	c->m->recipe.fw_keys_not_read = nr.keys.items;
	c->m->recipe.fw_keys_not_read_count = nr.keys.count;
	/* nothing the user set was read: the plan is the framework's defaults alone, said */
	if (nr.present && !any_present)
		dtl_fw_warn(c, dtl_schema_loc(&c->l->s, c->l->root),
		            dtl_arena_sprintf(c->arena,
		                              "dtypelint read none of the %zu key%s this %s sets: "
		                              "the plan is %s's defaults (--show-plan lists the "
		                              "keys read and not read)",
		                              nr.present, nr.present == 1 ? "" : "s",
		                              c->importer->kind,
		                              c->importer->id ? c->importer->id : "the framework"));
	return 0;
}
