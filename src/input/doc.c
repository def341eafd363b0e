/* SPDX-License-Identifier: MIT */
/*
 * The document tree's common half (doc.h), the input layer's entry point for structured files:
 * it picks the JSON, YAML or TOML reader by extension (else by the first byte), and holds what
 * the readers share: the text checks (no NUL, valid UTF-8), numbers, duplicate keys, and the
 * lookups and locations the model layer reads the tree with. The tree and its text live in
 * the caller's arenas.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc-private.h"

int dtl_doc_check_text(const struct dtl_source *source, struct dtl_error *error)
{
	const char *nul = memchr(source->data, '\0', source->size);
	size_t bad = dtl_source_find_invalid_utf8(source);

	if (nul && (bad == (size_t)-1 || (size_t)(nul - source->data) < bad))
		return dtl_error_set(error, dtl_source_loc_at(source, (size_t)(nul - source->data)),
		                     -EINVAL, "NUL byte in a text file");
	if (bad != (size_t)-1)
		return dtl_error_set(error, dtl_source_loc_at(source, bad), -EINVAL,
		                     "invalid UTF-8 (byte 0x%02x)",
		                     (unsigned char)source->data[bad]);
	return 0;
}

int dtl_doc_set_number(struct dtl_node *node, const char *text, size_t len)
{
	char buf[128];
	size_t i = 0;
	bool negative = false, integer = true;

	if (len == 0 || len >= sizeof(buf)) {
		/* a number spelled with more than 127 characters is no int64: keep it as a
		 * float whose value only matters for "too large" errors */
		if (len == 0)
			return -EINVAL;
		node->type = DTL_NODE_FLOAT;
		node->number = (text[0] == '-') ? -HUGE_VAL : HUGE_VAL;
		return 0;
	}
	if (text[0] == '-' || text[0] == '+') {
		negative = text[0] == '-';
		i = 1;
	}
	if (i == len)
		return -EINVAL;
	for (size_t k = i; k < len; k++)
		if (text[k] < '0' || text[k] > '9')
			integer = false;
	if (integer) {
		uint64_t value = 0;
		bool overflow = false;
		for (size_t k = i; k < len; k++) {
			unsigned d = (unsigned)(text[k] - '0');
			if (value > (UINT64_MAX - d) / 10) {
				overflow = true;
				break;
			}
			value = value * 10 + d;
		}
		if (!overflow &&
		    (negative ? value <= (uint64_t)INT64_MAX + 1 : value <= INT64_MAX)) {
			node->type = DTL_NODE_INT;
			node->integer = negative ? (int64_t)(0 - value) : (int64_t)value;
			return 0;
		}
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	char *end;
	double d = strtod(buf, &end);
	if (end != buf + len)
		return -EINVAL;
	node->type = DTL_NODE_FLOAT;
	node->number = d;
	return 0;
}

static bool key_equal(const struct dtl_node *a, const struct dtl_node *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == DTL_NODE_STRING)
		return a->string.len == b->string.len &&
		       memcmp(a->string.text, b->string.text, a->string.len) == 0;
	return a->raw_len == b->raw_len && memcmp(a->raw, b->raw, a->raw_len) == 0;
}

static int duplicate(const struct dtl_pair *first, const struct dtl_pair *again, const char *file,
                     struct dtl_error *error)
{
	struct dtl_loc loc = {.file = file, .line = again->key.line, .column = again->key.column};
	const struct dtl_node *k = &again->key;
	int len = k->type == DTL_NODE_STRING ? (int)k->string.len : (int)k->raw_len;
	const char *text = k->type == DTL_NODE_STRING ? k->string.text : k->raw;

	return dtl_error_set(error, loc, -EINVAL,
	                     "duplicate key '%.*s' (first at line %u, column %u)",
	                     len > 200 ? 200 : len, text, first->key.line, first->key.column);
}

int dtl_doc_check_duplicate_keys(const struct dtl_node *map, const char *file,
                                 struct dtl_arena *arena, struct dtl_error *error)
{
	size_t n = map->map.count;

	if (n <= 16) {
		for (size_t i = 1; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (key_equal(&map->map.pairs[j].key, &map->map.pairs[i].key))
					return duplicate(&map->map.pairs[j], &map->map.pairs[i],
					                 file, error);
		return 0;
	}
	struct dtl_strmap seen;
	dtl_strmap_init(&seen, arena);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_node *k = &map->map.pairs[i].key;
		const char *text = k->type == DTL_NODE_STRING ? k->string.text : k->raw;
		size_t len = k->type == DTL_NODE_STRING ? k->string.len : k->raw_len;
		if (len >= DTL_STRMAP_KEY_MAX) {
			/* too long for a map key: compared with the other keys that long (a
			 * file holds few) */
			for (size_t j = 0; j < i; j++) {
				const struct dtl_node *o = &map->map.pairs[j].key;
				size_t olen =
				    o->type == DTL_NODE_STRING ? o->string.len : o->raw_len;
				if (olen == len && key_equal(o, k))
					return duplicate(&map->map.pairs[j], &map->map.pairs[i],
					                 file, error);
			}
			continue;
		}
		int64_t prev = dtl_strmap_put(&seen, text, len, (int64_t)i);
		if (prev < 0)
			return -ENOMEM;
		if ((size_t)prev != i)
			return duplicate(&map->map.pairs[prev], &map->map.pairs[i], file, error);
	}
	return 0;
}

const char *dtl_doc_uint_text(struct dtl_arena *arena, unsigned long value)
{
	const char *text = dtl_arena_sprintf(arena, "%lu", value);
	return text ? text : "?";
}

static bool has_suffix(const char *path, const char *suffix)
{
	size_t n = strlen(path), m = strlen(suffix);
	return n >= m && strcmp(path + n - m, suffix) == 0;
}

int dtl_doc_parse_stream(const struct dtl_source *source, struct dtl_arena *node_arena,
                         struct dtl_arena *text_arena, const struct dtl_limits *limits,
                         struct dtl_doc_stream *stream, struct dtl_node **ret_root,
                         struct dtl_error *error)
{
	if (has_suffix(source->path, ".json"))
		return dtl_doc_json(source, node_arena, text_arena, limits, stream, ret_root,
		                    error);
	if (has_suffix(source->path, ".toml") || has_suffix(source->path, "uv.lock"))
		/* no list is streamed (stream->used stays false): the tree holds it */
		return dtl_doc_toml(source, node_arena, text_arena, limits, ret_root, error);
	if (has_suffix(source->path, ".yaml") || has_suffix(source->path, ".yml"))
		return dtl_doc_yaml(source, node_arena, text_arena, limits, stream, ret_root,
		                    error);
	for (size_t i = 0; i < source->size; i++) {
		char c = source->data[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		if (c == '{' || c == '[')
			return dtl_doc_json(source, node_arena, text_arena, limits, stream,
			                    ret_root, error);
		break;
	}
	return dtl_doc_yaml(source, node_arena, text_arena, limits, stream, ret_root, error);
}

int dtl_doc_parse_split(const struct dtl_source *source, struct dtl_arena *node_arena,
                        struct dtl_arena *text_arena, const struct dtl_limits *limits,
                        struct dtl_node **ret_root, struct dtl_error *error)
{
	return dtl_doc_parse_stream(source, node_arena, text_arena, limits, NULL, ret_root, error);
}

int dtl_doc_parse(const struct dtl_source *source, struct dtl_arena *arena,
                  const struct dtl_limits *limits, struct dtl_node **ret_root,
                  struct dtl_error *error)
{
	return dtl_doc_parse_split(source, arena, arena, limits, ret_root, error);
}

int dtl_doc_parse_json(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error)
{
	return dtl_doc_json(source, arena, arena, limits, NULL, ret_root, error);
}

int dtl_doc_parse_toml(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error)
{
	return dtl_doc_toml(source, arena, arena, limits, ret_root, error);
}

int dtl_doc_parse_yaml(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error)
{
	return dtl_doc_yaml(source, arena, arena, limits, NULL, ret_root, error);
}

const struct dtl_node *dtl_node_get(const struct dtl_node *map, const char *key)
{
	size_t len = strlen(key);

	if (!map || map->type != DTL_NODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *k = &map->map.pairs[i].key;
		if (k->type == DTL_NODE_STRING && k->string.len == len &&
		    memcmp(k->string.text, key, len) == 0)
			return &map->map.pairs[i].value;
	}
	return NULL;
}

const char *dtl_node_type_name(enum dtl_node_type type)
{
	switch (type) {
	case DTL_NODE_NULL:
		return "null";
	case DTL_NODE_BOOL:
		return "a boolean";
	case DTL_NODE_INT:
		return "an integer";
	case DTL_NODE_FLOAT:
		return "a number";
	case DTL_NODE_STRING:
		return "a string";
	case DTL_NODE_SEQ:
		return "a list";
	case DTL_NODE_MAP:
		return "a mapping";
	}
	return "a value";
}

struct dtl_loc dtl_node_loc(const struct dtl_node *node, const char *file)
{
	struct dtl_loc loc = {
	    .file = file, .line = node ? node->line : 0, .column = node ? node->column : 0};
	return loc;
}
