/* SPDX-License-Identifier: MIT */
/*
 * JSON into the positioned document tree. A cursor walks the text once and gives every node
 * its line and column; cJSON decodes every string and key that has an escape (it keeps no
 * positions), one string at a time as the cursor meets it; a string without one is its bytes.
 * The cursor reads the rest as cJSON does: the structure, literals, numbers (the prefix
 * strtod() reads, as cJSON's parse_number) and cJSON's nesting limit, so that it accepts no
 * text cJSON refuses and decodes every string as cJSON does (the json fuzz target checks both
 * against cJSON_Parse on the whole text), keeps each number's spelling (cJSON reduces it to a
 * double), and checks what cJSON lets through.
 *
 * The elements of a streamed list (a manifest's tensors) are offered as text first
 * (dtl_doc_text): one that the stream takes is skipped here, nodes and checks alike, and the
 * stream answers for it having been JSON without a problem.
 *
 * Errors come in two kinds, and their precedence is part of the contract (the golden tests in
 * tests/malformed check it byte for byte):
 *  - syntax errors: cJSON refused the text. The cursor finds the byte where the text stops
 *    being JSON, following cJSON's conventions: a value, ':' or ',' that is missing is
 *    reported at the byte found instead; a bad escape at its backslash; anything cut off at
 *    the end of the file ("unexpected end of file"), except a string, which is reported where
 *    it began ("unterminated string"). An escape cJSON accepts but mangles (\uZZZZ, which it
 *    cuts the string at) is a syntax error too.
 *  - problems in text that cJSON accepts (a raw control character or \u0000 in a string, a
 *    control byte between tokens, a number JSON does not allow such as 01 or 1., nesting
 *    deeper than limits->max_depth, a duplicate key) are reported at the first one in
 *    document order (a map's duplicate keys after its values), but only once the whole text
 *    has been read without a syntax error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "doc-private.h"
#include "bytes.h"

/* cJSON's nesting limit, the reader's whatever --max-depth says */
#define CONTAINER_LIMIT 1000

/*
 * History, measured on a 100k-tensor manifest (tests/bench/README.md): cJSON first parsed the
 * whole text, in lockstep with the cursor (its tree was most of the peak memory, 600 bytes a
 * tensor); then each tensor on its own; then the strings only; now the strings with escapes
 * only. Its object, array and number parsing (strtod() and localeconv() for every number)
 * gave nothing the cursor did not already know, and cost a fifth of the run; decoding a
 * string without escapes (a cJSON item, a malloc and a free for each tensor name) a tenth.
 */

struct parser {
	const struct dtl_source *source;
	const char *s;
	size_t n;
	size_t pos;
	/* the line of pos; columns count code points: on a line of ASCII bytes a column is an
	 * offset from the line's start, else it is counted from a checkpoint on the line */
	uint32_t line;
	size_t line_start;
	bool line_ascii;
	size_t ck_pos;
	uint32_t ck_col;
	struct dtl_arena *nodes, *text;
	const struct dtl_limits *limits;
	struct dtl_error *error;
	bool problem; /* *error holds the first problem (the second kind above) */
	/* children of the open containers, innermost last */
	struct dtl_node *items;
	size_t item_count, item_capacity;
	struct dtl_pair *pairs;
	size_t pair_count, pair_capacity;
	/* the root's list read element by element (NULL: none); stream_next: the array about
	 * to be read is it; element: the nodes of the one element being read */
	struct dtl_doc_stream *stream;
	bool stream_next;
	struct dtl_arena element;
	/* short strings (keys, dtypes, kinds) stored once: text -> index in interned_text */
	struct dtl_arena intern_arena;
	struct dtl_strmap interned;
	struct dtl_vec interned_text; /* const char * */
};

#define INTERN_MAX_LEN   16
#define INTERN_MAX_COUNT 4096

/* The text of a decoded string in the text arena: a short one that came before is shared
 * (a manifest's keys and dtypes repeat for every tensor). */
static const char *store_text(struct parser *p, const char *value, size_t len)
{
	if (len > INTERN_MAX_LEN || p->interned.count >= INTERN_MAX_COUNT)
		return dtl_arena_strndup(p->text, value, len);
	int64_t k = dtl_strmap_get(&p->interned, value, len);
	if (k >= 0)
		return ((const char *const *)p->interned_text.items)[k];
	char *text = dtl_arena_strndup(p->text, value, len);
	const char **slot = dtl_vec_push(&p->interned_text, &p->intern_arena, sizeof(*slot));
	if (!text || !slot)
		return NULL;
	*slot = text;
	if (dtl_strmap_put(&p->interned, text, len, (int64_t)(p->interned_text.count - 1)) < 0)
		return NULL;
	return text;
}

static uint32_t column_at(struct parser *p, size_t pos)
{
	const unsigned char *s = (const unsigned char *)p->s;

	if (p->line_ascii) {
		size_t col = pos - p->line_start + 1;
		return col > UINT32_MAX ? UINT32_MAX : (uint32_t)col;
	}
	uint32_t col = p->ck_col;
	for (size_t i = p->ck_pos; i < pos; i++)
		col += (s[i] & 0xC0) != 0x80;
	p->ck_pos = pos;
	p->ck_col = col;
	return col;
}

static void newline_at(struct parser *p, size_t next_line_start)
{
	p->line++;
	p->line_start = next_line_start;
	p->line_ascii = true;
	p->ck_pos = next_line_start;
	p->ck_col = 1;
}

static void problem(struct parser *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void skip_blanks(struct parser *p)
{
	const char *s = p->s;
	size_t i = p->pos, n = p->n;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (c > ' ')
			break;
		if (c == ' ' || c == '\t') {
			i++;
		} else if (c == '\n') {
			newline_at(p, ++i);
		} else if (c == '\r') {
			/* CR LF is one line break, and so is a lone CR */
			if (++i < n && s[i] == '\n')
				continue;
			newline_at(p, i);
		} else if (c < 0x20) {
			/* cJSON skipped any control byte as blank: the syntax around it is judged
			 * as before, and the byte itself is a problem */
			p->pos = i;
			problem(p, i, "JSON: syntax error (a control character)");
			i++;
		} else {
			break;
		}
	}
	p->pos = i;
}

/* Skips blanks; most calls are already at a token, and cost one compare. */
static inline void skip_ws(struct parser *p)
{
	if (p->pos < p->n && (unsigned char)p->s[p->pos] > ' ')
		return;
	skip_blanks(p);
}

/* A syntax error at offset pos: the reader stops. */
static int syntax(struct parser *p, size_t pos)
{
	const struct dtl_source *source = p->source;

	if (pos > source->size)
		pos = source->size;
	struct dtl_loc loc = dtl_source_loc_at(source, pos);
	p->problem = true; /* a syntax error replaces any problem found before it */
	if (pos >= source->size)
		return dtl_error_set(p->error, loc, -EINVAL, "JSON: unexpected end of file");
	/* where reading stopped, never the byte there: the file may be a secret named as JSON
	 * (issue 35) */
	return dtl_error_set(p->error, loc, -EINVAL, "JSON: syntax error");
}

/* A problem in text that is JSON: kept if it is the first, and reading goes on. */
static void problem(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list args;

	if (p->problem)
		return;
	struct dtl_loc loc = {
	    .file = p->source->path, .line = p->line, .column = column_at(p, pos)};
	va_start(args, fmt);
	dtl_error_setv(p->error, loc, -EINVAL, fmt, args);
	va_end(args);
	p->problem = true;
}

static int push_item(struct parser *p, const struct dtl_node *node)
{
	if (p->item_count == p->item_capacity) {
		size_t capacity = p->item_capacity ? p->item_capacity * 2 : 64;
		struct dtl_node *bigger = realloc(p->items, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		p->items = bigger;
		p->item_capacity = capacity;
	}
	p->items[p->item_count++] = *node;
	return 0;
}

static int push_pair(struct parser *p, const struct dtl_pair *pair)
{
	if (p->pair_count == p->pair_capacity) {
		size_t capacity = p->pair_capacity ? p->pair_capacity * 2 : 64;
		struct dtl_pair *bigger = realloc(p->pairs, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		p->pairs = bigger;
		p->pair_capacity = capacity;
	}
	p->pairs[p->pair_count++] = *pair;
	return 0;
}

static int hex4(const char *s, unsigned *ret)
{
	unsigned v = 0;

	for (int k = 0; k < 4; k++) {
		char c = s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*ret = v;
	return 0;
}

/* Checks the escapes of body[0..len) as RFC 8259 has them (cJSON decodes them, but reads a
 * bad \u escape as U+0000 and cuts the string there); returns 0, or -1 with *ret_bad set to
 * the offset of the first bad escape's backslash. */
static int check_escapes(const char *body, size_t len, size_t *ret_bad)
{
	for (size_t k = 0; k < len;) {
		if (body[k] != '\\') {
			k++;
			continue;
		}
		if (k + 1 < len && strchr("\"\\/bfnrt", body[k + 1]) && body[k + 1] != '\0') {
			k += 2;
			continue;
		}
		unsigned cp, low;
		if (k + 1 >= len || body[k + 1] != 'u' || len - k < 6 ||
		    hex4(body + k + 2, &cp) < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) {
			*ret_bad = k;
			return -1;
		}
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			/* a UTF-16 surrogate pair: \uD83D\uDE00 */
			if (len - k < 12 || body[k + 6] != '\\' || body[k + 7] != 'u' ||
			    hex4(body + k + 8, &low) < 0 || low < 0xDC00 || low > 0xDFFF) {
				*ret_bad = k;
				return -1;
			}
			k += 12;
		} else {
			k += 6;
		}
	}
	return 0;
}

/* The string at p->pos (a '"'): where its closing quote is (*ret_end) and whether it has an
 * escape; reports the problems in it (raw control characters, \u0000) and checks its escapes. */
static int scan_string(struct parser *p, size_t *ret_end, bool *ret_escaped)
{
	const char *s = p->s;
	size_t start = p->pos, i = start + 1, n = p->n;
	bool escaped = false;

	for (; i < n; i++) {
		/* eight plain bytes at a time: no '"', '\\', control or non-ASCII byte */
		while (n - i >= 8) {
			uint64_t x;
			memcpy(&x, s + i, 8);
			if (dtl_bytes_string_special(x))
				break;
			i += 8;
		}
		if (i >= n)
			break;
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80)
			p->line_ascii = false;
		if (c == '"')
			break;
		if (c == '\\') {
			escaped = true;
			/* the escaped character is skipped: check_escapes() judges it */
			if (++i < n && s[i] == 'u' && n - i >= 5 &&
			    memcmp(s + i + 1, "0000", 4) == 0)
				problem(p, i - 1, "JSON: NUL character (\\u0000) in a string");
		} else if (c < 0x20) {
			problem(p, i, "JSON: raw control character in a string");
		}
	}
	if (i >= n) {
		/* the file ends inside the string: say where it began */
		struct dtl_loc loc = dtl_source_loc_at(p->source, start);
		p->problem = true;
		return dtl_error_set(p->error, loc, -EINVAL, "JSON: unterminated string");
	}
	size_t bad = 0;
	if (escaped && check_escapes(s + start + 1, i - start - 1, &bad) < 0)
		return syntax(p, start + 1 + bad);
	*ret_end = i;
	*ret_escaped = escaped;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * A number: the longest prefix strtod() reads from the characters cJSON collected (-, digits,
 * '.', an exponent with digits), so that what follows it is judged by the caller exactly as
 * before; then RFC 8259's stricter grammar, whose violations are problems.
 */
static int parse_number(struct parser *p, struct dtl_node *out)
{
	const char *s = p->s;
	size_t start = p->pos, i = start, n = p->n, int_digits = 0, frac_digits = 0;
	bool has_dot = false;

	if (i < n && s[i] == '-')
		i++;
	size_t int_start = i;
	while (i < n && is_digit(s[i]))
		i++, int_digits++;
	if (i < n && s[i] == '.') {
		size_t j = i + 1;
		while (j < n && is_digit(s[j]))
			j++, frac_digits++;
		if (int_digits + frac_digits > 0) {
			has_dot = true;
			i = j;
		}
	}
	if (int_digits + frac_digits == 0)
		return syntax(p, start);
	bool has_exp = false;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		if (j < n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < n && is_digit(s[j])) {
			while (j < n && is_digit(s[j]))
				j++;
			i = j;
			has_exp = true;
		}
	}
	if (int_digits > 1 && s[int_start] == '0')
		problem(p, start, "JSON: invalid number (leading zero)");
	else if (int_digits == 0 || (has_dot && frac_digits == 0))
		problem(p, start, "JSON: invalid number");
	p->pos = i;
	if (!has_dot && !has_exp && int_digits <= 18) {
		/* the common case, a shape's dimension: what dtl_doc_set_number() makes of it,
		 * without reading it again (18 digits cannot overflow) */
		int64_t v = 0;
		for (size_t k = int_start; k < int_start + int_digits; k++)
			v = v * 10 + (s[k] - '0');
		out->type = DTL_NODE_INT;
		out->integer = s[start] == '-' ? -v : v;
	} else if (dtl_doc_set_number(out, s + start, i - start) < 0) {
		problem(p, start, "JSON: invalid number");
	}
	out->raw = dtl_arena_strndup(p->nodes, s + start, i - start);
	if (!out->raw)
		return -ENOMEM;
	out->raw_len = (uint32_t)(i - start > UINT32_MAX ? UINT32_MAX : i - start);
	return 0;
}

/*
 * A string value or key into out as a DTL_NODE_STRING whose text is cJSON's decoding of it,
 * after the cursor's checks (whose errors come first: cJSON's position stands only when the
 * cursor found nothing). Without an escape the decoding is the bytes themselves (NUL bytes
 * are refused before reading: dtl_doc_check_text), so only strings with escapes go to cJSON;
 * a short string that came before (a key, a dtype) is stored once.
 */
static int parse_string(struct parser *p, struct dtl_node *out)
{
	size_t start = p->pos, end = start;
	bool escaped = false;
	int r = scan_string(p, &end, &escaped);

	if (r < 0)
		return r;
	size_t len = end - start - 1;
	const char *text;
	if (escaped) {
		/* cJSON decodes the escapes (\uXXXX pairs included) */
		const char *stop = NULL;
		cJSON *decoded =
		    cJSON_ParseWithLengthOpts(p->s + start, p->n - start + 1, &stop, 0);
		if (!decoded)
			return syntax(p, stop ? (size_t)(stop - p->s) : start);
		len = strlen(decoded->valuestring);
		text = store_text(p, decoded->valuestring, len);
		cJSON_Delete(decoded);
	} else {
		/* without an escape a string is its bytes, which scan_string has checked (what
		 * cJSON would copy as they are, one malloc and free per string: a tenth of a
		 * run, as many as there are tensor names) */
		text = store_text(p, p->s + start + 1, len);
	}
	if (!text)
		return -ENOMEM;
	p->pos = end + 1;
	out->type = DTL_NODE_STRING;
	out->string.text = text;
	out->string.len = len;
	out->raw = text;
	out->raw_len = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
	return 0;
}

static int parse_value(struct parser *p, struct dtl_node *out, unsigned depth);

/* A finished container's children, from the top of the stack into the node arena. */
static int close_seq(struct parser *p, struct dtl_node *out, size_t base)
{
	size_t count = p->item_count - base;

	out->type = DTL_NODE_SEQ;
	out->seq.count = count;
	out->seq.items = dtl_arena_calloc(p->nodes, count ? count : 1, sizeof(struct dtl_node));
	if (!out->seq.items)
		return -ENOMEM;
	if (count)
		memcpy(out->seq.items, p->items + base, count * sizeof(struct dtl_node));
	p->item_count = base;
	return 0;
}

static int close_map(struct parser *p, struct dtl_node *out, size_t base)
{
	size_t count = p->pair_count - base;

	out->type = DTL_NODE_MAP;
	out->map.count = count;
	out->map.pairs = dtl_arena_calloc(p->nodes, count ? count : 1, sizeof(struct dtl_pair));
	if (!out->map.pairs)
		return -ENOMEM;
	if (count)
		memcpy(out->map.pairs, p->pairs + base, count * sizeof(struct dtl_pair));
	p->pair_count = base;
	if (p->problem)
		return 0;
	/* a failed check is a problem: it waits for the rest of the text */
	int r = dtl_doc_check_duplicate_keys(out, p->source->path, p->nodes, p->error);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		p->problem = true;
	return 0;
}

/* An element of the streamed list: read into the element arena, handed to the stream, and
 * dropped. */
static int stream_element(struct parser *p, unsigned depth)
{
	struct dtl_node node = {0};
	struct dtl_arena *nodes = p->nodes;
	int r;

	/* offered as text first (dtl_doc_text): the element's values are at depth + 1, a
	 * shape's numbers at depth + 2 */
	if (p->stream->text && !p->problem && p->line_ascii && depth + 2 <= p->limits->max_depth) {
		struct dtl_doc_text text = {.s = p->s,
		                            .n = p->n,
		                            .pos = p->pos,
		                            .line = p->line,
		                            .line_start = p->line_start};
		r = p->stream->text(p->stream->ctx, &text);
		if (r < 0)
			return r;
		if (r > 0) {
			/* the element was ASCII: its last line is too, up to the end */
			p->pos = text.end;
			if (text.end_line != p->line) {
				p->line = text.end_line;
				p->line_start = p->ck_pos = text.end_line_start;
				p->line_ascii = true;
				p->ck_col = 1;
			}
			p->stream->end = p->pos;
			p->stream->count++;
			return 0;
		}
	}
	p->nodes = &p->element;
	r = parse_value(p, &node, depth);
	p->nodes = nodes;
	p->stream->end = p->pos;
	if (r >= 0 && !p->problem)
		r = p->stream->element(p->stream->ctx, &node);
	p->stream->count++;
	dtl_arena_reset(&p->element);
	return r;
}

static int parse_array(struct parser *p, struct dtl_node *out, unsigned depth)
{
	size_t base = p->item_count;
	bool streamed = p->stream_next;
	int r;

	p->stream_next = false;
	p->pos++;
	skip_ws(p);
	if (streamed) {
		p->stream->used = true;
		p->stream->first = p->pos;
		p->stream->size = p->n;
	}
	if (p->pos < p->n && p->s[p->pos] == ']') {
		p->pos++;
		return close_seq(p, out, base);
	}
	for (;;) {
		struct dtl_node node = {0};
		if (streamed) {
			r = stream_element(p, depth + 1);
		} else {
			r = parse_value(p, &node, depth + 1);
			if (r >= 0)
				r = push_item(p, &node);
		}
		if (r < 0)
			return r;
		skip_ws(p);
		if (p->pos < p->n && p->s[p->pos] == ',') {
			p->pos++;
			skip_ws(p);
			continue;
		}
		if (p->pos < p->n && p->s[p->pos] == ']') {
			p->pos++;
			return close_seq(p, out, base);
		}
		return syntax(p, p->pos);
	}
}

static int parse_object(struct parser *p, struct dtl_node *out, unsigned depth)
{
	size_t base = p->pair_count;
	int r;

	p->pos++;
	skip_ws(p);
	if (p->pos < p->n && p->s[p->pos] == '}') {
		p->pos++;
		return close_map(p, out, base);
	}
	for (;;) {
		struct dtl_pair pair = {0};
		if (p->pos >= p->n || p->s[p->pos] != '"')
			return syntax(p, p->pos);
		if (!p->problem) {
			pair.key.line = p->line;
			pair.key.column = column_at(p, p->pos);
		}
		r = parse_string(p, &pair.key);
		if (r < 0)
			return r;
		/* the root's list to stream: its first occurrence */
		p->stream_next = depth == 1 && p->stream && !p->stream->used &&
		                 strcmp(pair.key.string.text, p->stream->key) == 0;
		skip_ws(p);
		if (p->pos >= p->n || p->s[p->pos] != ':')
			return syntax(p, p->pos);
		p->pos++;
		skip_ws(p);
		r = parse_value(p, &pair.value, depth + 1);
		p->stream_next = false; /* the value was the list, or not a list */
		if (r < 0)
			return r;
		if ((r = push_pair(p, &pair)) < 0)
			return r;
		skip_ws(p);
		if (p->pos < p->n && p->s[p->pos] == ',') {
			p->pos++;
			skip_ws(p);
			continue;
		}
		if (p->pos < p->n && p->s[p->pos] == '}') {
			p->pos++;
			return close_map(p, out, base);
		}
		return syntax(p, p->pos);
	}
}

static int literal(struct parser *p, struct dtl_node *out, const char *word, size_t len)
{
	if (p->n - p->pos < len || memcmp(p->s + p->pos, word, len) != 0)
		return syntax(p, p->pos);
	out->raw = word;
	out->raw_len = (uint32_t)len;
	p->pos += len;
	return 0;
}

/* The value at p->pos (whitespace skipped), at depth (the root is 1). */
static int parse_value(struct parser *p, struct dtl_node *out, unsigned depth)
{
	size_t start = p->pos;

	if (!p->problem) {
		out->line = p->line;
		out->column = column_at(p, start);
	}
	if (depth > p->limits->max_depth)
		problem(p, start, "JSON: nested deeper than %u levels (--max-depth)",
		        p->limits->max_depth);
	if (start >= p->n)
		return syntax(p, start);
	switch (p->s[start]) {
	case '{':
	case '[':
		/* deeper than any manifest: stop with the depth problem (--max-depth is
		 * lower), or say that this is the reader's limit (cJSON's: it was a bare
		 * syntax error) */
		if (depth > CONTAINER_LIMIT) {
			if (!p->problem)
				problem(p, start,
				        "JSON: nested deeper than %u levels (the reader's limit)",
				        CONTAINER_LIMIT);
			return -EINVAL;
		}
		if (p->s[start] == '{')
			return parse_object(p, out, depth);
		return parse_array(p, out, depth);
	case '"':
		return parse_string(p, out);
	case 't':
		out->type = DTL_NODE_BOOL;
		out->boolean = true;
		return literal(p, out, "true", 4);
	case 'f':
		out->type = DTL_NODE_BOOL;
		out->boolean = false;
		return literal(p, out, "false", 5);
	case 'n':
		out->type = DTL_NODE_NULL;
		return literal(p, out, "null", 4);
	default:
		if (p->s[start] == '-' || is_digit(p->s[start]))
			return parse_number(p, out);
		return syntax(p, start);
	}
}

int dtl_doc_json(const struct dtl_source *source, struct dtl_arena *nodes, struct dtl_arena *text,
                 const struct dtl_limits *limits, struct dtl_doc_stream *stream,
                 struct dtl_node **ret_root, struct dtl_error *error)
{
	struct parser p = {.source = source,
	                   .s = source->data,
	                   .n = source->size,
	                   .line = 1,
	                   .line_ascii = true,
	                   .ck_col = 1,
	                   .nodes = nodes,
	                   .text = text,
	                   .limits = limits,
	                   .error = error,
	                   .stream = stream};
	struct dtl_node *root;
	int r;

	r = dtl_doc_check_text(source, error);
	if (r < 0)
		return r;
	if (p.n >= 3 && memcmp(p.s, "\xEF\xBB\xBF", 3) == 0)
		/* RFC 8259 §8.1: a parser may ignore a byte order mark; it is no column */
		p.pos = p.line_start = p.ck_pos = 3;
	skip_ws(&p);
	if (p.pos >= p.n && p.problem) /* nothing but blanks and control bytes */
		return syntax(&p, p.pos);
	if (p.pos >= p.n) {
		struct dtl_loc loc = {
		    .file = source->path, .line = p.line, .column = column_at(&p, p.pos)};
		return dtl_error_set(error, loc, -EINVAL, "JSON: the file is empty");
	}
	root = dtl_arena_alloc(nodes, sizeof(*root));
	dtl_arena_init(&p.element);
	dtl_arena_init(&p.intern_arena);
	dtl_strmap_init(&p.interned, &p.intern_arena);
	r = root ? parse_value(&p, root, 1) : -ENOMEM;
	dtl_arena_fini(&p.element);
	dtl_arena_fini(&p.intern_arena);
	if (r >= 0) {
		skip_ws(&p);
		if (p.pos < p.n)
			r = syntax(&p, p.pos);
	}
	free(p.items);
	free(p.pairs);
	if (r < 0)
		return r;
	if (p.problem)
		return -EINVAL;
	*ret_root = root;
	return 0;
}
