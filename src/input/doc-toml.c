/* SPDX-License-Identifier: MIT */
/*
 * TOML (1.0) into the positioned document tree that the JSON and YAML readers make, so that the
 * importers read a torchtitan job config, and a pyproject.toml or uv.lock, with the same
 * dtl_node helpers and the same file:line:col errors. Debian 12 has no C TOML library (toml++
 * is C++, tomlc99 is not packaged) and the product is C11: this is a small reader of its own
 * (HACKING.md, "TOML").
 *
 * Tables are built in a mutable tree first ([a.b] headers, dotted keys and [[arrays]] may add
 * to a table long after it was opened), then copied once into nodes of the exact size. Every
 * key is found through one hash map keyed by (table, key), so a table of n keys costs O(n),
 * and the whole file is read in one pass: linear in its size. Date-times are kept as strings
 * (their text); everything else is typed as JSON and YAML values are.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc-private.h"

enum tkind { T_SCALAR, T_TABLE, T_ARRAY };

/* the parts of one dotted key (a.b.c): kept on the stack of each nesting level, so few */
#define KEY_PARTS 16
/* arrays and inline tables in one another, at most (below --max-depth when that is lower) */
#define MAX_NESTING 256

struct tval {
	enum tkind kind;
	struct dtl_node node; /* a scalar, or the position of a container */
	uint32_t id;          /* a table's id in the key map */
	bool header;          /* a table defined by its own [header] */
	bool dotted;          /* a table defined by dotted keys */
	bool frozen;          /* an inline table or array: nothing may be added later */
	bool aot;             /* an array made by [[header]] */
	struct dtl_node *keys;
	struct tval **vals;
	size_t count, cap;
};

struct toml {
	const struct dtl_source *src;
	const char *p, *end;
	uint32_t line;
	const char *line_start, *col_at; /* col_at: where col was last counted, on this line */
	uint32_t col;
	struct dtl_arena *nodes, *text;
	const struct dtl_limits *limits;
	struct dtl_error *error;
	struct dtl_strmap keymap; /* (table id, key) -> the value's index in its table */
	uint32_t next_id;
	char *scratch;
	size_t scratch_cap;
	struct tval *root;
};

/* ---- positions and errors ---- */

static uint32_t column(struct toml *t, const char *at)
{
	if (t->col_at < t->line_start || t->col_at > at) {
		t->col_at = t->line_start;
		t->col = 1;
	}
	for (; t->col_at < at; t->col_at++)
		t->col += ((unsigned char)*t->col_at & 0xC0) != 0x80;
	return t->col;
}

static int fail_at(struct toml *t, const char *at, const char *message)
{
	struct dtl_loc loc = {t->src->path, t->line, column(t, at)};
	return dtl_error_set(t->error, loc, -EINVAL, "TOML: %s", message);
}

static void set_pos(struct toml *t, struct dtl_node *n, const char *at)
{
	n->line = t->line;
	n->column = column(t, at);
}

static void newline(struct toml *t)
{
	t->line++;
	t->line_start = t->p;
}

/* spaces and tabs; a comment up to the end of the line (a control character in it stops
 * the skip, and whatever expects the line's end then refuses it) */
static void skip_space(struct toml *t)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
	if (t->p < t->end && *t->p == '#')
		while (t->p < t->end && *t->p != '\n' &&
		       ((unsigned char)*t->p >= 0x20 || *t->p == '\t') && *t->p != 0x7F)
			t->p++;
}

/* spaces, comments and newlines (inside arrays, between lines) */
static void skip_blank(struct toml *t)
{
	for (;;) {
		skip_space(t);
		if (t->p < t->end && *t->p == '\r' && t->p + 1 < t->end && t->p[1] == '\n')
			t->p++;
		if (t->p >= t->end || *t->p != '\n')
			return;
		t->p++;
		newline(t);
	}
}

/* ---- the mutable tree ---- */

static struct tval *new_val(struct toml *t, enum tkind kind, const char *at)
{
	struct tval *v = dtl_arena_calloc(t->nodes, 1, sizeof(*v));
	if (!v)
		return NULL;
	v->kind = kind;
	v->node.type = kind == T_TABLE ? DTL_NODE_MAP : DTL_NODE_SEQ;
	if (kind == T_TABLE)
		v->id = t->next_id++;
	set_pos(t, &v->node, at);
	return v;
}

static int push(struct toml *t, struct tval *c, const struct dtl_node *key, struct tval *v)
{
	if (c->count == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4;
		struct dtl_node *keys = NULL;
		struct tval **vals = dtl_arena_calloc(t->nodes, cap, sizeof(*vals));
		if (c->kind == T_TABLE && !(keys = dtl_arena_calloc(t->nodes, cap, sizeof(*keys))))
			return -ENOMEM;
		if (!vals)
			return -ENOMEM;
		if (c->count) {
			memcpy(vals, c->vals, c->count * sizeof(*vals));
			if (keys)
				memcpy(keys, c->keys, c->count * sizeof(*keys));
		}
		c->vals = vals;
		c->keys = keys;
		c->cap = cap;
	}
	if (key)
		c->keys[c->count] = *key;
	c->vals[c->count++] = v;
	return 0;
}

/* "(id)key" in the scratch buffer (kept: a copy in the arena) */
static const char *map_key(struct toml *t, const struct tval *table, const struct dtl_node *key,
                           bool keep, size_t *ret_len)
{
	size_t len = sizeof(table->id) + key->string.len;
	if (len > t->scratch_cap) {
		char *p = realloc(t->scratch, len * 2);
		if (!p)
			return NULL;
		t->scratch = p;
		t->scratch_cap = len * 2;
	}
	memcpy(t->scratch, &table->id, sizeof(table->id));
	memcpy(t->scratch + sizeof(table->id), key->string.text, key->string.len);
	*ret_len = len;
	return keep ? dtl_arena_strndup(t->text, t->scratch, len) : t->scratch;
}

/* The value of key in table, or NULL; -ENOMEM as *ret_rc. */
static struct tval *lookup(struct toml *t, struct tval *table, const struct dtl_node *key,
                           size_t *ret_index, int *ret_rc)
{
	size_t len;
	const char *k = map_key(t, table, key, false, &len);
	*ret_rc = k ? 0 : -ENOMEM;
	int64_t i = k ? dtl_strmap_get(&t->keymap, k, len) : -1;
	if (i < 0)
		return NULL;
	*ret_index = (size_t)i;
	return table->vals[i];
}

static int insert(struct toml *t, struct tval *table, const struct dtl_node *key, struct tval *v)
{
	size_t len;
	const char *k = map_key(t, table, key, true, &len);
	if (!k || dtl_strmap_put(&t->keymap, k, len, (int64_t)table->count) < 0)
		return -ENOMEM;
	return push(t, table, key, v);
}

static int duplicate(struct toml *t, const struct dtl_node *key, size_t index,
                     const struct tval *table)
{
	const struct dtl_node *first = &table->keys[index];
	struct dtl_loc loc = {t->src->path, key->line, key->column};
	return dtl_error_set(t->error, loc, -EINVAL, "TOML: duplicate key '%s' (first at %u:%u)",
	                     key->string.text, first->line, first->column);
}

/* ---- keys ---- */

static bool bare(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static int parse_string(struct toml *t, struct dtl_node *out);

static int parse_key_part(struct toml *t, struct dtl_node *key)
{
	const char *start = t->p;
	memset(key, 0, sizeof(*key));
	if (t->p < t->end && (*t->p == '"' || *t->p == '\'')) {
		if (t->end - t->p >= 3 && t->p[1] == t->p[0] && t->p[2] == t->p[0])
			return fail_at(t, t->p, "a key may not be a multi-line string");
		return parse_string(t, key);
	}
	while (t->p < t->end && bare(*t->p))
		t->p++;
	if (t->p == start)
		return fail_at(t, start, "expected a key");
	key->type = DTL_NODE_STRING;
	set_pos(t, key, start);
	char *text = dtl_arena_strndup(t->text, start, (size_t)(t->p - start));
	if (!text)
		return -ENOMEM;
	key->string.text = key->raw = text;
	key->string.len = key->raw_len = (uint32_t)(t->p - start);
	return 0;
}

/* a.b."c" into keys (at most max parts) */
static int parse_key(struct toml *t, struct dtl_node *keys, size_t max, size_t *ret_n)
{
	size_t n = 0;
	int r;
	for (;;) {
		if (n == max)
			return fail_at(t, t->p, "a dotted key of more than 16 parts");
		if ((r = parse_key_part(t, &keys[n++])) < 0)
			return r;
		skip_space(t);
		if (t->p >= t->end || *t->p != '.')
			break;
		t->p++;
		skip_space(t);
	}
	*ret_n = n;
	return 0;
}

/* ---- strings ---- */

static int put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static int escape(struct toml *t, char *out, size_t *len)
{
	const char *at = t->p++;
	if (t->p >= t->end)
		return fail_at(t, at, "unterminated string");
	char c = *t->p++;
	const char *simple = strchr("btnfr\"\\", c);
	if (simple && c) {
		static const char values[] = "\b\t\n\f\r\"\\";
		out[(*len)++] = values[simple - "btnfr\"\\"];
		return 0;
	}
	if (c != 'u' && c != 'U')
		return fail_at(t, at, "unknown escape in a string");
	int digits = c == 'u' ? 4 : 8;
	uint32_t cp = 0;
	for (int i = 0; i < digits; i++, t->p++) {
		char h = t->p < t->end ? *t->p : 0;
		int d = h >= '0' && h <= '9'   ? h - '0'
		        : h >= 'a' && h <= 'f' ? h - 'a' + 10
		        : h >= 'A' && h <= 'F' ? h - 'A' + 10
		                               : -1;
		if (d < 0)
			return fail_at(t, at, "bad \\u escape in a string");
		cp = cp * 16 + (uint32_t)d;
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return fail_at(t, at, "a \\u escape that is no Unicode scalar value");
	*len += (size_t)put_utf8(out + *len, cp);
	return 0;
}

/* "basic", 'literal', """multi-line basic""", '''multi-line literal''' */
static int parse_string(struct toml *t, struct dtl_node *out)
{
	const char *start = t->p;
	char q = *t->p;
	uint32_t line = t->line, col = column(t, start);
	bool multi = t->end - t->p >= 3 && t->p[1] == q && t->p[2] == q;
	int r;

	t->p += multi ? 3 : 1;
	/* a newline right after the opening quotes is not part of the string */
	if (multi && t->p < t->end && *t->p == '\n') {
		t->p++;
		newline(t);
	} else if (multi && t->end - t->p >= 2 && t->p[0] == '\r' && t->p[1] == '\n') {
		t->p += 2;
		newline(t);
	}
	/* the text never grows: escapes are longer than what they stand for */
	char *buf = dtl_arena_alloc(t->text, (size_t)(t->end - t->p) + 1);
	size_t len = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (t->p >= t->end)
			return fail_at(t, start, "unterminated string");
		char c = *t->p;
		if (c == q && !multi) {
			t->p++;
			break;
		}
		if (c == q) {
			/* three quotes close it; one or two more before them are content */
			size_t k = 0;
			while (t->p + k < t->end && t->p[k] == q)
				k++;
			if (k >= 3) {
				if (k > 5)
					return fail_at(t, t->p, "too many quotes closing a string");
				for (size_t i = 3; i < k; i++)
					buf[len++] = q;
				t->p += k;
				break;
			}
		}
		if (c == '\n') {
			if (!multi)
				return fail_at(t, t->p, "a newline in a single-line string");
			buf[len++] = *t->p++;
			newline(t);
			continue;
		}
		if (c == '\\' && q == '"') {
			if (multi) {
				/* a line-ending backslash drops the newline and the spaces after */
				const char *s = t->p + 1;
				while (s < t->end && (*s == ' ' || *s == '\t' || *s == '\r'))
					s++;
				if (s < t->end && *s == '\n') {
					t->p = s;
					skip_blank(t);
					continue;
				}
			}
			if ((r = escape(t, buf, &len)) < 0)
				return r;
			continue;
		}
		if (((unsigned char)c < 0x20 || c == 0x7F) && c != '\t' &&
		    !(multi && c == '\r' && t->p + 1 < t->end && t->p[1] == '\n'))
			return fail_at(t, t->p, "a control character in a string");
		buf[len++] = *t->p++;
	}
	buf[len] = '\0';
	memset(out, 0, sizeof(*out));
	out->type = DTL_NODE_STRING;
	out->line = line;
	out->column = col;
	out->string.text = out->raw = buf;
	out->string.len = len;
	out->raw_len = (uint32_t)len;
	return 0;
}

/* ---- scalars ---- */

static bool word(const struct toml *t, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(t->end - t->p) >= n && memcmp(t->p, w, n) == 0 &&
	       (t->p + n == t->end || !bare(t->p[n]));
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* 1979-05-27, 07:32:00, 1979-05-27T07:32:00.5-07:00, "1979-05-27 07:32:00Z" */
static bool datetime_ahead(const struct toml *t)
{
	const char *p = t->p;
	size_t n = (size_t)(t->end - p);
	return (n >= 10 && digit(p[0]) && digit(p[3]) && p[4] == '-' && digit(p[5])) ||
	       (n >= 8 && digit(p[0]) && digit(p[1]) && p[2] == ':');
}

static int parse_datetime(struct toml *t, struct dtl_node *out)
{
	const char *start = t->p;
	while (t->p < t->end &&
	       (bare(*t->p) || *t->p == ':' || *t->p == '.' || *t->p == '+' ||
	        (*t->p == ' ' && t->p + 1 < t->end && digit(t->p[1]) && t->p - start == 10)))
		t->p++;
	char *text = dtl_arena_strndup(t->text, start, (size_t)(t->p - start));
	if (!text)
		return -ENOMEM;
	out->type = DTL_NODE_STRING;
	out->string.text = out->raw = text;
	out->string.len = out->raw_len = (uint32_t)(t->p - start);
	return 0;
}

/* decimal (with _ between digits), 0x 0o 0b integers, floats, inf, nan */
static int parse_number(struct toml *t, struct dtl_node *out)
{
	const char *start = t->p;
	char buf[128];
	size_t n = 0;
	int base = 10;

	while (t->p < t->end && (bare(*t->p) || *t->p == '.' || *t->p == '+'))
		t->p++;
	size_t len = (size_t)(t->p - start);
	const char *s = start;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b'))
		base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
	for (size_t i = base == 10 ? 0 : 2; i < len; i++) {
		if (s[i] == '_') {
			if (i == 0 || i + 1 == len || !bare(s[i - 1]) || s[i + 1] == '_')
				return fail_at(t, start,
				               "a '_' in a number must sit between digits");
			continue;
		}
		if (n + 1 >= sizeof(buf))
			return fail_at(t, start, "a number of more than 127 characters");
		buf[n++] = s[i];
	}
	buf[n] = '\0';
	char *raw = dtl_arena_strndup(t->text, start, len);
	if (!raw)
		return -ENOMEM;
	out->raw = raw;
	out->raw_len = (uint32_t)len;
	const char *sign = buf[0] == '+' || buf[0] == '-' ? buf + 1 : buf;
	if (strcmp(sign, "inf") == 0 || strcmp(sign, "nan") == 0) {
		out->type = DTL_NODE_FLOAT;
		out->number = sign[0] == 'i' ? (buf[0] == '-' ? -HUGE_VAL : HUGE_VAL) : NAN;
		return 0;
	}
	if (base != 10) {
		char *end;
		unsigned long long v = strtoull(buf, &end, base);
		if (!n || *end || buf[0] == '+' || buf[0] == '-' || v > INT64_MAX)
			return fail_at(t, start, "not a TOML integer");
		out->type = DTL_NODE_INT;
		out->integer = (int64_t)v;
		return 0;
	}
	/* leading zeros are not TOML ("01"); floats need digits on both sides of '.' */
	if (sign[0] == '0' && digit(sign[1]))
		return fail_at(t, start, "a number with a leading zero");
	for (const char *d = strchr(buf, '.'); d; d = NULL)
		if (d == buf || !digit(d[-1]) || !digit(d[1]))
			return fail_at(t, start, "a float needs digits on both sides of '.'");
	if (dtl_doc_set_number(out, buf, n) < 0)
		return fail_at(t, start, "not a TOML value");
	return 0;
}

static int parse_value(struct toml *t, struct tval **ret, unsigned depth);

static int parse_scalar(struct toml *t, struct tval **ret)
{
	struct tval *v = new_val(t, T_SCALAR, t->p);
	int r;

	if (!v)
		return -ENOMEM;
	struct dtl_node pos = v->node;
	char c = *t->p;
	if (c == '"' || c == '\'')
		r = parse_string(t, &v->node);
	else if (word(t, "true") || word(t, "false")) {
		v->node.type = DTL_NODE_BOOL;
		v->node.boolean = c == 't';
		v->node.raw = c == 't' ? "true" : "false";
		v->node.raw_len = c == 't' ? 4 : 5;
		t->p += v->node.raw_len;
		r = 0;
	} else if (datetime_ahead(t))
		r = parse_datetime(t, &v->node);
	else if (digit(c) || c == '+' || c == '-' || word(t, "inf") || word(t, "nan"))
		r = parse_number(t, &v->node);
	else
		return fail_at(t, t->p, "expected a value");
	v->node.line = pos.line;
	v->node.column = pos.column;
	*ret = v;
	return r;
}

/* ---- arrays, inline tables, key/value pairs ---- */

static int assign(struct toml *t, struct tval *table, const struct dtl_node *keys, size_t n,
                  struct tval *value);

static int parse_array(struct toml *t, struct tval **ret, unsigned depth)
{
	struct tval *a = new_val(t, T_ARRAY, t->p);
	int r;

	if (!a)
		return -ENOMEM;
	a->frozen = true;
	t->p++;
	for (;;) {
		skip_blank(t);
		if (t->p < t->end && *t->p == ']')
			break;
		struct tval *item;
		if ((r = parse_value(t, &item, depth + 1)) < 0 || (r = push(t, a, NULL, item)) < 0)
			return r;
		skip_blank(t);
		if (t->p < t->end && *t->p == ',') {
			t->p++;
			continue;
		}
		if (t->p < t->end && *t->p == ']')
			break;
		return fail_at(t, t->p, "expected ',' or ']' in an array");
	}
	t->p++;
	*ret = a;
	return 0;
}

static int parse_inline_table(struct toml *t, struct tval **ret, unsigned depth)
{
	struct tval *table = new_val(t, T_TABLE, t->p);
	struct dtl_node keys[KEY_PARTS];
	size_t n;
	int r;

	if (!table)
		return -ENOMEM;
	t->p++;
	skip_space(t);
	if (t->p < t->end && *t->p == '}') {
		t->p++;
		table->frozen = true;
		*ret = table;
		return 0;
	}
	for (;;) {
		struct tval *value;
		skip_space(t);
		if ((r = parse_key(t, keys, sizeof(keys) / sizeof(keys[0]), &n)) < 0)
			return r;
		if (t->p >= t->end || *t->p != '=')
			return fail_at(t, t->p, "expected '=' after a key");
		t->p++;
		skip_space(t);
		if ((r = parse_value(t, &value, depth + 1)) < 0 ||
		    (r = assign(t, table, keys, n, value)) < 0)
			return r;
		skip_space(t);
		if (t->p < t->end && *t->p == ',') {
			t->p++;
			continue;
		}
		if (t->p < t->end && *t->p == '}')
			break;
		return fail_at(t, t->p, "expected ',' or '}' in an inline table");
	}
	t->p++;
	table->frozen = true;
	*ret = table;
	return 0;
}

static int parse_value(struct toml *t, struct tval **ret, unsigned depth)
{
	/* the reader recurses: its own cap keeps the stack small whatever --max-depth says */
	if (depth > t->limits->max_depth)
		return fail_at(t, t->p, "the value nests deeper than --max-depth");
	if (depth > MAX_NESTING)
		return fail_at(t, t->p, "the value nests deeper than 256 levels");
	if (t->p >= t->end)
		return fail_at(t, t->p, "expected a value");
	if (*t->p == '[')
		return parse_array(t, ret, depth);
	if (*t->p == '{')
		return parse_inline_table(t, ret, depth);
	return parse_scalar(t, ret);
}

/* keys[0..n-1] = value in table: the keys before the last open (or make) dotted tables */
static int assign(struct toml *t, struct tval *table, const struct dtl_node *keys, size_t n,
                  struct tval *value)
{
	size_t index;
	int r;

	for (size_t i = 0; i + 1 < n; i++) {
		struct tval *next = lookup(t, table, &keys[i], &index, &r);
		if (r < 0)
			return r;
		if (!next) {
			if (!(next = new_val(t, T_TABLE, NULL)))
				return -ENOMEM;
			next->node.line = keys[i].line;
			next->node.column = keys[i].column;
			next->dotted = true;
			if ((r = insert(t, table, &keys[i], next)) < 0)
				return r;
		} else if (next->kind != T_TABLE || next->frozen || next->header) {
			return duplicate(t, &keys[i], index, table);
		}
		table = next;
	}
	if (lookup(t, table, &keys[n - 1], &index, &r))
		return duplicate(t, &keys[n - 1], index, table);
	return r < 0 ? r : insert(t, table, &keys[n - 1], value);
}

/* [a.b] or [[a.b]]: the table the following pairs go to */
static int header(struct toml *t, struct tval **current)
{
	const char *start = t->p;
	bool aot = t->end - t->p >= 2 && t->p[1] == '[';
	struct dtl_node keys[KEY_PARTS];
	size_t n, index;
	int r;

	t->p += aot ? 2 : 1;
	skip_space(t);
	if ((r = parse_key(t, keys, sizeof(keys) / sizeof(keys[0]), &n)) < 0)
		return r;
	if (t->p >= t->end || *t->p != ']' || (aot && (t->end - t->p < 2 || t->p[1] != ']')))
		return fail_at(t, t->p, aot ? "expected ']]'" : "expected ']'");
	t->p += aot ? 2 : 1;
	struct tval *table = t->root;
	for (size_t i = 0; i < n; i++) {
		bool last = i + 1 == n;
		struct tval *next = lookup(t, table, &keys[i], &index, &r);
		if (r < 0)
			return r;
		if (!next) {
			if (!(next = new_val(t, last && aot ? T_ARRAY : T_TABLE, start)))
				return -ENOMEM;
			next->aot = last && aot;
			if ((r = insert(t, table, &keys[i], next)) < 0)
				return r;
		} else if (last && !aot &&
		           (next->kind != T_TABLE || next->header || next->dotted ||
		            next->frozen)) {
			return duplicate(t, &keys[i], index, table);
		} else if (next->kind == T_SCALAR || (next->kind == T_ARRAY && !next->aot) ||
		           next->frozen || (last && aot && next->kind != T_ARRAY)) {
			/* a = 1 then [a.b] or [[a.b]]: a key that holds a value is no table */
			return duplicate(t, &keys[i], index, table);
		}
		if (next->kind == T_ARRAY && last) {
			/* [[a]]: a new table at the end of the array */
			struct tval *elem = new_val(t, T_TABLE, start);
			if (!elem || push(t, next, NULL, elem) < 0)
				return -ENOMEM;
			elem->header = true;
			next = elem;
		} else if (next->kind == T_ARRAY) {
			next = next->vals[next->count - 1];
		}
		table = next;
	}
	table->header = true;
	*current = table;
	return 0;
}

static int document(struct toml *t)
{
	struct tval *current = t->root;
	struct dtl_node keys[KEY_PARTS];
	size_t n;
	int r;

	for (;;) {
		skip_blank(t);
		if (t->p >= t->end)
			return 0;
		if (*t->p == '[') {
			if ((r = header(t, &current)) < 0)
				return r;
		} else {
			struct tval *value;
			if ((r = parse_key(t, keys, sizeof(keys) / sizeof(keys[0]), &n)) < 0)
				return r;
			if (t->p >= t->end || *t->p != '=')
				return fail_at(t, t->p, "expected '=' after a key");
			t->p++;
			skip_space(t);
			if ((r = parse_value(t, &value, 1)) < 0 ||
			    (r = assign(t, current, keys, n, value)) < 0)
				return r;
		}
		skip_space(t);
		if (t->p < t->end && *t->p == '\r' && t->p + 1 < t->end && t->p[1] == '\n')
			t->p++;
		if (t->p < t->end && *t->p != '\n')
			return fail_at(t, t->p, "expected the end of the line");
	}
}

/* ---- the tree, copied into nodes of the exact size ---- */

static int convert(struct toml *t, const struct tval *v, struct dtl_node *out)
{
	int r;

	*out = v->node;
	if (v->kind == T_SCALAR)
		return 0;
	if (v->kind == T_ARRAY) {
		out->type = DTL_NODE_SEQ;
		out->seq.count = v->count;
		out->seq.items =
		    v->count ? dtl_arena_calloc(t->nodes, v->count, sizeof(*out->seq.items)) : NULL;
		if (v->count && !out->seq.items)
			return -ENOMEM;
		for (size_t i = 0; i < v->count; i++)
			if ((r = convert(t, v->vals[i], &out->seq.items[i])) < 0)
				return r;
		return 0;
	}
	out->type = DTL_NODE_MAP;
	out->map.count = v->count;
	out->map.pairs =
	    v->count ? dtl_arena_calloc(t->nodes, v->count, sizeof(*out->map.pairs)) : NULL;
	if (v->count && !out->map.pairs)
		return -ENOMEM;
	for (size_t i = 0; i < v->count; i++) {
		out->map.pairs[i].key = v->keys[i];
		if ((r = convert(t, v->vals[i], &out->map.pairs[i].value)) < 0)
			return r;
	}
	return 0;
}

int dtl_doc_toml(const struct dtl_source *source, struct dtl_arena *nodes, struct dtl_arena *text,
                 const struct dtl_limits *limits, struct dtl_node **ret_root,
                 struct dtl_error *error)
{
	struct toml t = {.src = source,
	                 .p = source->data,
	                 .end = source->data + source->size,
	                 .line = 1,
	                 .line_start = source->data,
	                 .col_at = source->data,
	                 .col = 1,
	                 .nodes = nodes,
	                 .text = text,
	                 .limits = limits,
	                 .error = error};
	struct dtl_node *root;
	int r;

	if ((r = dtl_doc_check_text(source, error)) < 0)
		return r;
	/* a UTF-8 byte order mark is no key */
	if (source->size >= 3 && memcmp(source->data, "\xEF\xBB\xBF", 3) == 0)
		t.p += 3;
	dtl_strmap_init(&t.keymap, nodes);
	if (!(t.root = new_val(&t, T_TABLE, t.p)))
		return -ENOMEM;
	r = document(&t);
	free(t.scratch);
	if (r < 0)
		return r;
	if (!(root = dtl_arena_alloc(nodes, sizeof(*root))) || (r = convert(&t, t.root, root)) < 0)
		return r < 0 ? r : -ENOMEM;
	*ret_root = root;
	return 0;
}
