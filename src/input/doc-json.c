/* SPDX-License-Identifier: MIT */
/*
 * JSON into the positioned document tree. cJSON parses and decodes; it keeps no positions, so a
 * cursor walks the same bytes in cJSON's document order and gives every node its line and
 * column (and keeps each number's spelling, which cJSON reduces to a double).
 */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "doc-private.h"

struct cursor {
	const struct dtl_source *source;
	const char *s;
	size_t n;
	size_t pos;
	uint32_t line;
	uint32_t column;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_error *error;
};

static void advance(struct cursor *c)
{
	unsigned char ch = (unsigned char)c->s[c->pos++];

	if (ch == '\n') {
		c->line++;
		c->column = 1;
	} else if ((ch & 0xC0) != 0x80) {
		c->column++;
	}
}

static void skip_ws(struct cursor *c)
{
	while (c->pos < c->n) {
		char ch = c->s[c->pos];
		if (ch == ' ' || ch == '\t' || ch == '\n')
			advance(c);
		else if (ch == '\r') {
			/* CR LF counts as one line break; a lone CR as one too */
			c->pos++;
			if (c->pos < c->n && c->s[c->pos] == '\n')
				continue;
			c->line++;
			c->column = 1;
		} else
			break;
	}
}

static int fail_here(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail_here(struct cursor *c, const char *fmt, ...)
{
	struct dtl_loc loc = {.file = c->source->path, .line = c->line, .column = c->column};
	va_list args;

	va_start(args, fmt);
	dtl_error_setv(c->error, loc, -EINVAL, fmt, args);
	va_end(args);
	return -EINVAL;
}

/* Skips a string literal, validating what cJSON does not: raw control characters and an
 * escaped NUL, which cJSON would silently cut the string at. */
static int skip_string(struct cursor *c)
{
	if (c->pos >= c->n || c->s[c->pos] != '"')
		return fail_here(c, "JSON: expected a string");
	advance(c);
	while (c->pos < c->n) {
		unsigned char ch = (unsigned char)c->s[c->pos];
		if (ch == '"') {
			advance(c);
			return 0;
		}
		if (ch < 0x20)
			return fail_here(c, "JSON: raw control character in a string");
		if (ch == '\\') {
			if (c->pos + 5 < c->n && memcmp(c->s + c->pos, "\\u0000", 6) == 0)
				return fail_here(c, "JSON: NUL character (\\u0000) in a string");
			advance(c);
			if (c->pos >= c->n)
				break;
		}
		advance(c);
	}
	return fail_here(c, "JSON: unterminated string");
}

/* RFC 8259 number grammar; records the spelling. */
static int skip_number(struct cursor *c)
{
	size_t p = c->pos;
	const char *s = c->s;

	if (p < c->n && s[p] == '-')
		p++;
	if (p < c->n && s[p] == '0') {
		p++;
		if (p < c->n && s[p] >= '0' && s[p] <= '9')
			return fail_here(c, "JSON: invalid number (leading zero)");
	} else if (p < c->n && s[p] >= '1' && s[p] <= '9')
		while (p < c->n && s[p] >= '0' && s[p] <= '9')
			p++;
	else
		return fail_here(c, "JSON: invalid number");
	if (p < c->n && s[p] == '.') {
		p++;
		if (p >= c->n || s[p] < '0' || s[p] > '9')
			return fail_here(c, "JSON: invalid number");
		while (p < c->n && s[p] >= '0' && s[p] <= '9')
			p++;
	}
	if (p < c->n && (s[p] == 'e' || s[p] == 'E')) {
		p++;
		if (p < c->n && (s[p] == '+' || s[p] == '-'))
			p++;
		if (p >= c->n || s[p] < '0' || s[p] > '9')
			return fail_here(c, "JSON: invalid number");
		while (p < c->n && s[p] >= '0' && s[p] <= '9')
			p++;
	}
	c->column += (uint32_t)(p - c->pos);
	c->pos = p;
	return 0;
}

static int convert(struct cursor *c, const cJSON *item, struct dtl_node *out, unsigned depth)
{
	int r;

	skip_ws(c);
	if (depth > c->limits->max_depth)
		return fail_here(c, "JSON: nesting deeper than %u levels (--max-depth)",
		                 c->limits->max_depth);
	out->line = c->line;
	out->column = c->column;
	size_t start = c->pos;

	if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
		bool is_map = cJSON_IsObject(item);
		size_t count = 0;
		for (const cJSON *child = item->child; child; child = child->next)
			count++;
		if (c->pos >= c->n || c->s[c->pos] != (is_map ? '{' : '['))
			return fail_here(c, "JSON: internal position mismatch");
		advance(c);
		if (is_map) {
			out->type = DTL_NODE_MAP;
			out->map.count = count;
			out->map.pairs =
			    dtl_arena_calloc(c->arena, count ? count : 1, sizeof(struct dtl_pair));
			if (!out->map.pairs)
				return -ENOMEM;
		} else {
			out->type = DTL_NODE_SEQ;
			out->seq.count = count;
			out->seq.items =
			    dtl_arena_calloc(c->arena, count ? count : 1, sizeof(struct dtl_node));
			if (!out->seq.items)
				return -ENOMEM;
		}
		size_t i = 0;
		for (const cJSON *child = item->child; child; child = child->next, i++) {
			skip_ws(c);
			if (c->pos < c->n && (c->s[c->pos] == ',') && i > 0) {
				advance(c);
				skip_ws(c);
			}
			struct dtl_node *value;
			if (is_map) {
				struct dtl_pair *pair = &out->map.pairs[i];
				pair->key.type = DTL_NODE_STRING;
				pair->key.line = c->line;
				pair->key.column = c->column;
				size_t key_start = c->pos;
				r = skip_string(c);
				if (r < 0)
					return r;
				pair->key.raw = c->s + key_start;
				pair->key.raw_len = (uint32_t)(c->pos - key_start);
				pair->key.string.len = strlen(child->string);
				pair->key.string.text = dtl_arena_strndup(c->arena, child->string,
				                                          pair->key.string.len);
				if (!pair->key.string.text)
					return -ENOMEM;
				skip_ws(c);
				if (c->pos >= c->n || c->s[c->pos] != ':')
					return fail_here(c, "JSON: internal position mismatch");
				advance(c);
				value = &pair->value;
			} else {
				value = &out->seq.items[i];
			}
			r = convert(c, child, value, depth + 1);
			if (r < 0)
				return r;
		}
		skip_ws(c);
		if (c->pos >= c->n || c->s[c->pos] != (is_map ? '}' : ']'))
			return fail_here(c, "JSON: internal position mismatch");
		advance(c);
		if (is_map)
			return dtl_doc_check_duplicate_keys(out, c->source->path, c->arena,
			                                    c->error);
		return 0;
	}

	if (cJSON_IsString(item)) {
		r = skip_string(c);
		if (r < 0)
			return r;
		out->type = DTL_NODE_STRING;
		out->string.len = strlen(item->valuestring);
		out->string.text = dtl_arena_strndup(c->arena, item->valuestring, out->string.len);
		if (!out->string.text)
			return -ENOMEM;
	} else if (cJSON_IsNumber(item)) {
		r = skip_number(c);
		if (r < 0)
			return r;
		r = dtl_doc_set_number(out, c->s + start, c->pos - start);
		if (r < 0)
			return r;
	} else if (cJSON_IsBool(item)) {
		size_t len = cJSON_IsTrue(item) ? 4 : 5;
		out->type = DTL_NODE_BOOL;
		out->boolean = cJSON_IsTrue(item);
		c->pos += len;
		c->column += (uint32_t)len;
	} else if (cJSON_IsNull(item)) {
		out->type = DTL_NODE_NULL;
		c->pos += 4;
		c->column += 4;
	} else {
		return fail_here(c, "JSON: unsupported value");
	}
	out->raw = c->s + start;
	out->raw_len = (uint32_t)(c->pos - start);
	return 0;
}

int dtl_doc_parse_json(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error)
{
	struct cursor c = {.source = source,
	                   .s = source->data,
	                   .n = source->size,
	                   .line = 1,
	                   .column = 1,
	                   .arena = arena,
	                   .limits = limits,
	                   .error = error};
	const char *end = NULL;
	struct dtl_node *root;
	cJSON *tree;
	int r;

	r = dtl_doc_check_text(source, error);
	if (r < 0)
		return r;
	if (c.n >= 3 && memcmp(c.s, "\xEF\xBB\xBF", 3) == 0)
		c.pos = 3; /* RFC 8259 §8.1: a parser may ignore a byte order mark */
	skip_ws(&c);
	if (c.pos >= c.n) {
		struct dtl_loc loc = {.file = source->path, .line = c.line, .column = c.column};
		return dtl_error_set(error, loc, -EINVAL, "JSON: the file is empty");
	}
	/* length + 1 takes in the NUL terminator, which cJSON's require_null_terminated wants */
	tree = cJSON_ParseWithLengthOpts(source->data + c.pos, source->size - c.pos + 1, &end, 1);
	if (!tree) {
		size_t offset = end ? (size_t)(end - source->data) : c.pos;
		struct dtl_loc loc = dtl_source_loc_at(source, offset);
		if (offset >= source->size)
			return dtl_error_set(error, loc, -EINVAL, "JSON: unexpected end of file");
		{
			unsigned char ch = (unsigned char)source->data[offset];
			if (ch > 0x20 && ch < 0x7f)
				return dtl_error_set(error, loc, -EINVAL,
				                     "JSON: syntax error at '%c'", ch);
			return dtl_error_set(error, loc, -EINVAL,
			                     "JSON: syntax error (byte 0x%02x)", ch);
		}
	}
	root = dtl_arena_alloc(arena, sizeof(*root));
	r = root ? convert(&c, tree, root, 1) : -ENOMEM;
	cJSON_Delete(tree);
	if (r < 0)
		return r;
	*ret_root = root;
	return 0;
}
