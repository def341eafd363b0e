/* SPDX-License-Identifier: MIT */
/*
 * A manifest's tensor entry read straight from the JSON text, without document nodes
 * (dtl_doc_text): the plain entries that make nearly all of every manifest, such as
 *
 *     {"name": "model.layers.0.mlp.gate.weight", "shape": [256, 7168], "dtype": "float32"}
 *
 * An entry is taken only when it is plain: the keys of a tensor (name, shape, dtype, kind,
 * trainable, persistent), each once; strings of ASCII bytes that are no control characters,
 * without escapes; shapes of plain non-negative integers; blanks that are spaces, tabs and
 * line feeds; and nothing that parse_tensor() would refuse. Then the tensor is exactly the one
 * the reader's nodes and parse_tensor() would have made, with the same positions. Anything
 * else (an escape, a carriage return, an unknown or repeated key, a float, a dtype that does
 * not parse, ...) makes it give the entry back untouched, and the reader and parse_tensor()
 * read it, with their errors and their precedence (tests/unit/test-tensor-text.c compares
 * both on every kind of entry and on mutated manifests; the pipeline fuzz target on whatever
 * it finds: tests/manifest-twins.h).
 *
 * Why: building the nodes of 100k entries, then looking their keys up, was a third of a
 * 100k-tensor run (tests/bench/README.md, sixth round).
 */
#include <stdint.h>
#include <string.h>

#include "bytes.h"
#include "dtypelint/input/doc.h"
#include "load.h"

/* shapes of more dimensions are left to parse_shape() */
#define DIMS_MAX 16

enum key {
	KEY_NAME,
	KEY_SHAPE,
	KEY_DTYPE,
	KEY_KIND,
	KEY_TRAINABLE,
	KEY_PERSISTENT,
	KEY_OTHER,
};

struct cursor {
	const char *s;
	size_t n, pos;
	uint32_t line;
	size_t line_start;
	const char *file;
};

/* Skips spaces, tabs and line feeds; false at a carriage return or a control byte (the
 * reader's to judge) or at the end of the text. */
static bool skip_blanks(struct cursor *c)
{
	const char *s = c->s;
	size_t i = c->pos, n = c->n;

	for (; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch > ' ') {
			c->pos = i;
			return true;
		}
		if (ch == '\n') {
			c->line++;
			c->line_start = i + 1;
		} else if (ch != ' ' && ch != '\t') {
			break;
		}
	}
	c->pos = i;
	return false;
}

/* skip_blanks(), with the common case (no blank at all) without a call */
static inline bool blanks(struct cursor *c)
{
	if (c->pos < c->n && (unsigned char)c->s[c->pos] > ' ')
		return true;
	return skip_blanks(c);
}

/* The position of c->pos as the reader gives it on a line of ASCII bytes */
static struct dtl_loc here(const struct cursor *c)
{
	size_t column = c->pos - c->line_start + 1;
	struct dtl_loc loc = {.file = c->file,
	                      .line = c->line,
	                      .column = column > UINT32_MAX ? UINT32_MAX : (uint32_t)column};
	return loc;
}

/* A string of ASCII bytes other than control characters, without escapes, at c->pos: its
 * bytes. Eight at a time (dtl_bytes_string_special(), as the reader's scan_string()). */
static bool plain_string(struct cursor *c, const char **ret_text, size_t *ret_len)
{
	const char *s = c->s;
	size_t i = c->pos + 1, n = c->n;

	if (c->pos >= n || s[c->pos] != '"')
		return false;
	for (;;) {
		if (n - i >= 8) {
			uint64_t x;
			memcpy(&x, s + i, 8);
			uint64_t special = dtl_bytes_string_special(x);
			if (!special) {
				i += 8;
				continue;
			}
			i += (size_t)__builtin_ctzll(special) / 8;
		} else if (i >= n) {
			return false;
		}
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"')
			break;
		if (ch < 0x20 || ch >= 0x80 || ch == '\\')
			return false;
		i++;
	}
	*ret_text = s + c->pos + 1;
	*ret_len = i - c->pos - 1;
	c->pos = i + 1;
	return true;
}

static bool is(const char *text, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(text, word, len) == 0;
}

/* The key at c->pos, quotes included, when it is one of a tensor's: their first letters
 * differ, so one compare of the whole quoted key decides (no scan); anything else is
 * KEY_OTHER, left to the nodes. */
static enum key read_key(struct cursor *c)
{
	static const struct {
		const char *text;
		size_t len;
	} quoted[] = {[KEY_NAME] = {"\"name\"", 6},
	              [KEY_SHAPE] = {"\"shape\"", 7},
	              [KEY_DTYPE] = {"\"dtype\"", 7},
	              [KEY_KIND] = {"\"kind\"", 6},
	              [KEY_TRAINABLE] = {"\"trainable\"", 11},
	              [KEY_PERSISTENT] = {"\"persistent\"", 12}};
	const char *s = c->s + c->pos;
	size_t room = c->n - c->pos;

	if (room < 2 || s[0] != '"')
		return KEY_OTHER;
	for (enum key k = KEY_NAME; k < KEY_OTHER; k++) {
		if (quoted[k].text[1] != s[1])
			continue;
		if (room < quoted[k].len)
			return KEY_OTHER;
		/* twelve bytes at most: compared in place, no call */
		for (size_t i = 2; i < quoted[k].len; i++)
			if (s[i] != quoted[k].text[i])
				return KEY_OTHER;
		c->pos += quoted[k].len;
		return k;
	}
	return KEY_OTHER;
}

/* true, false or (when null_too) null at c->pos: -1, 0 or 1 for null, false, true; -2: none */
static int literal(struct cursor *c, bool null_too)
{
	const char *at = c->s + c->pos;
	size_t room = c->n - c->pos;

	if (room >= 4 && memcmp(at, "true", 4) == 0) {
		c->pos += 4;
		return 1;
	}
	if (room >= 5 && memcmp(at, "false", 5) == 0) {
		c->pos += 5;
		return 0;
	}
	if (null_too && room >= 4 && memcmp(at, "null", 4) == 0) {
		c->pos += 4;
		return -1;
	}
	return -2;
}

/* A name check_tensor_name() accepts: not empty, within the limit, no empty path segment
 * (a leading, trailing or double '.'), no '*'. */
static bool clean_name(const char *name, size_t len, const struct dtl_limits *limits)
{
	if (len == 0 || len > limits->max_name_length || name[0] == '.' || name[len - 1] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '*' || (name[i] == '.' && name[i - 1] == '.'))
			return false;
	return true;
}

/* A dimension the reader reads as DTL_NODE_INT without a problem and parse_shape() takes:
 * digits without a leading zero, at most 18 of them, not the start of a fraction or an
 * exponent. */
static bool dimension(struct cursor *c, int64_t *ret)
{
	const char *s = c->s;
	size_t i = c->pos, start = i;
	int64_t v = 0;

	while (i < c->n && i - start < 18 && s[i] >= '0' && s[i] <= '9')
		v = v * 10 + (s[i++] - '0');
	size_t digits = i - start;
	if (digits == 0 || (digits > 1 && s[start] == '0'))
		return false;
	if (i < c->n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
		return false;
	c->pos = i;
	*ret = v;
	return true;
}

/* A shape parse_shape() takes, into dims and t's rank and numel (its overflow check). */
static bool shape(struct cursor *c, struct dtl_tensor_decl *t, int64_t *dims,
                  const struct dtl_limits *limits)
{
	uint32_t rank = 0;
	int64_t numel = 1;

	if (c->s[c->pos] != '[')
		return false;
	c->pos++;
	if (!blanks(c))
		return false;
	if (c->s[c->pos] != ']') {
		for (;;) {
			int64_t dim;
			if (rank == DIMS_MAX || rank >= limits->max_rank || !dimension(c, &dim))
				return false;
			/* parse_shape()'s range check (dim > DTL_NUMEL_MAX / numel), without
			 * a division: both are non-negative */
			if (__builtin_mul_overflow(numel, dim, &numel) || numel > DTL_NUMEL_MAX)
				return false;
			dims[rank++] = dim;
			if (!blanks(c))
				return false;
			if (c->s[c->pos] == ']')
				break;
			if (c->s[c->pos] != ',')
				return false;
			c->pos++;
			if (!blanks(c))
				return false;
		}
	}
	c->pos++;
	t->rank = rank;
	t->numel = numel;
	return true;
}

/* The value of key k at c->pos into t; false when it is not plain or parse_tensor() would
 * refuse it. */
static bool value(struct cursor *c, enum key k, struct dtl_tensor_decl *t, int64_t *dims,
                  struct dtl_loc *name_loc, const char **name, uint64_t *name_hash,
                  const struct dtl_tensor_stream *ts)
{
	const char *text;
	size_t len;
	int lit;

	switch (k) {
	case KEY_NAME:
		*name_loc = here(c);
		if (!plain_string(c, &text, &len) || !clean_name(text, len, ts->limits))
			return false;
		*name = text;
		t->name_len = (uint32_t)len;
		/* hashed once; the name's slot loads while the rest of the entry is read */
		*name_hash = dtl_strmap_hash(&ts->names, text, len);
		if (dtl_strmap_is_large(&ts->names))
			dtl_strmap_prefetch_hash(&ts->names, *name_hash);
		return true;
	case KEY_SHAPE:
		return shape(c, t, dims, ts->limits);
	case KEY_DTYPE:
		t->dtype_loc = here(c);
		if (!plain_string(c, &text, &len))
			return false;
		t->dtype = dtl_dtype_parse(text, len);
		return t->dtype != DTL_DTYPE_NONE;
	case KEY_KIND:
		if (!plain_string(c, &text, &len))
			return false;
		if (is(text, len, "param"))
			t->kind = DTL_KIND_PARAM;
		else if (is(text, len, "buffer"))
			t->kind = DTL_KIND_BUFFER;
		else
			return false;
		return true;
	case KEY_TRAINABLE:
		lit = literal(c, true);
		t->trainable = lit == 1 ? DTL_TRUE : lit == 0 ? DTL_FALSE : DTL_UNSET;
		return lit != -2;
	case KEY_PERSISTENT:
		lit = literal(c, false);
		t->persistent = lit == 1;
		return lit >= 0;
	case KEY_OTHER:
		break;
	}
	return false;
}

int dtl_tensor_stream_text(void *ctx, struct dtl_doc_text *element)
{
	struct dtl_tensor_stream *ts = ctx;
	struct cursor c = {.s = element->s,
	                   .n = element->n,
	                   .pos = element->pos,
	                   .line = element->line,
	                   .line_start = element->line_start,
	                   .file = ts->file};
	/* parse_tensor()'s defaults */
	struct dtl_tensor_decl t = {.numel = -1, .trainable = DTL_UNSET, .persistent = true};
	int64_t dims[DIMS_MAX];
	struct dtl_loc name_loc = {0};
	const char *name = NULL;
	uint64_t name_hash = 0;
	unsigned seen = 0;

	if (!dtl_tensor_stream_open(ts) || c.pos >= c.n || c.s[c.pos] != '{')
		return 0;
	t.loc = t.dtype_loc = here(&c);
	c.pos++;
	for (;;) {
		if (!blanks(&c))
			return 0;
		enum key k = read_key(&c);
		if (k == KEY_OTHER || (seen & (1u << k)))
			return 0;
		seen |= 1u << k;
		if (!blanks(&c) || c.s[c.pos] != ':')
			return 0;
		c.pos++;
		if (!blanks(&c) || !value(&c, k, &t, dims, &name_loc, &name, &name_hash, ts))
			return 0;
		if (!blanks(&c))
			return 0;
		if (c.s[c.pos] == '}')
			break;
		if (c.s[c.pos] != ',')
			return 0;
		c.pos++;
	}
	c.pos++;
	/* parse_tensor()'s checks of the whole entry */
	if (!(seen & (1u << KEY_NAME)) || (t.kind == DTL_KIND_BUFFER && t.trainable == DTL_TRUE) ||
	    (t.kind == DTL_KIND_PARAM && (seen & (1u << KEY_PERSISTENT))))
		return 0;
	element->end = c.pos;
	element->end_line = c.line;
	element->end_line_start = c.line_start;
	int r = dtl_tensor_stream_add(ts, &t, name, name_hash,
	                              (seen & (1u << KEY_SHAPE)) ? dims : NULL, name_loc, c.pos);
	return r < 0 ? r : 1;
}
