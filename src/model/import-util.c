/* SPDX-License-Identifier: MIT */
/*
 * What the importers (import-*.c) share (import-util.h): opening a file into a document tree
 * with its schema reader, paths relative to the file that names them, a default adapter, and
 * lists of class names. Everything they return lives in the caller's arena.
 */
#include <errno.h>
#include <string.h>

#include "import-util.h"

int dtl_loaded_open(struct dtl_loaded *l, const char *path, struct dtl_arena *arena,
                    const struct dtl_limits *limits, struct dtl_error *error)
{
	const char *file = dtl_arena_strndup(arena, path, strlen(path));
	int r;

	memset(l, 0, sizeof(*l));
	if (!file)
		return -ENOMEM;
	r = dtl_source_read(&l->source, path, limits, error);
	if (r < 0)
		return r;
	r = dtl_doc_parse(&l->source, arena, limits, &l->root, error);
	if (r < 0) {
		dtl_source_fini(&l->source);
		return r;
	}
	l->s.file = file;
	l->s.arena = arena;
	l->s.limits = limits;
	l->s.error = error;
	return 0;
}

void dtl_loaded_close(struct dtl_loaded *l)
{
	dtl_source_fini(&l->source);
}

int dtl_natural_cmp(const char *x, const char *y)
{
	while (*x && *y) {
		if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
			const char *xs = x, *ys = y;
			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			const char *xd = x, *yd = y;
			while (*x >= '0' && *x <= '9')
				x++;
			while (*y >= '0' && *y <= '9')
				y++;
			if (x - xd != y - yd)
				return (x - xd) < (y - yd) ? -1 : 1;
			int c = memcmp(xd, yd, (size_t)(x - xd));
			if (c)
				return c;
			if ((x - xs) != (y - ys))
				return (x - xs) < (y - ys) ? -1 : 1;
			continue;
		}
		if (*x != *y)
			return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
		x++;
		y++;
	}
	return *x ? 1 : *y ? -1 : 0;
}

const char *dtl_path_relative_to(struct dtl_arena *arena, const char *base, const char *rel)
{
	const char *slash = strrchr(base, '/');
	if (rel[0] == '/' || !slash)
		return dtl_arena_strndup(arena, rel, strlen(rel));
	return dtl_arena_sprintf(arena, "%.*s/%s", (int)(slash - base), base, rel);
}

void dtl_adapter_init(struct dtl_adapter *a, struct dtl_loc loc)
{
	memset(a, 0, sizeof(*a));
	a->present = true;
	a->type = "lora";
	a->name = "default";
	a->r = 8;
	a->autocast_adapter_dtype = DTL_UNSET;
	a->prepare_kbit_training = DTL_UNSET;
	a->use_dora = DTL_UNSET;
	a->lora_dropout = -1;
	a->loc = loc;
}

/* accelerate splits FSDP_TRANSFORMER_CLS_TO_WRAP on "," (FullyShardedDataParallelPlugin) */
int dtl_class_list(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                   struct dtl_patterns *out)
{
	if (v->type == DTL_NODE_SEQ)
		return dtl_schema_patterns(s, v, what, DTL_PATTERN_PLAIN, out);
	if (v->type != DTL_NODE_STRING)
		return dtl_schema_type_error(s, v, what, "a comma-separated string of class names");
	size_t n = 1;
	for (const char *p = v->string.text; *p; p++)
		n += *p == ',';
	out->items = dtl_arena_calloc(s->arena, n, sizeof(*out->items));
	if (!out->items)
		return -ENOMEM;
	out->count = 0;
	out->present = true;
	out->loc = dtl_schema_loc(s, v);
	const char *p = v->string.text;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		while (len && (*p == ' ')) {
			p++;
			len--;
		}
		while (len && p[len - 1] == ' ')
			len--;
		if (len) {
			struct dtl_pattern *item = &out->items[out->count++];
			item->text = dtl_arena_strndup(s->arena, p, len);
			item->len = (uint32_t)len;
			item->loc = out->loc;
			if (!item->text)
				return -ENOMEM;
		}
		p = comma ? comma + 1 : p + strlen(p);
	}
	return 0;
}
