/* SPDX-License-Identifier: MIT */
/*
 * The JSON writer (json-writer.h): a stack of open containers, each knowing whether it has a
 * member yet and where its members go, so that no caller counts commas. It builds no tree:
 * a SARIF report of 100k tensors streams out as it is written. A call that breaks the nesting
 * stops the writer (nothing more is written) and dtl_json_finish says so, rather than
 * writing a document no reader accepts.
 *
 * Speed: a SARIF report writes a few million tokens, and one stdio call per comma, quote and
 * key cost 1.8 x the instructions of the hand-written fputs strings. Separators, keys, numbers
 * and strings that need no escape are gathered in buf and written with one fwrite; a string
 * that needs escaping goes through dtl_put_quoted, the one escaper.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "dtypelint/core/json-writer.h"
#include "dtypelint/core/quoted.h"

void dtl_json_init(struct dtl_json *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pending_break = -1;
}

static void flush(struct dtl_json *w)
{
	if (w->len)
		fwrite(w->buf, 1, w->len, w->out);
	w->len = 0;
}

static void put(struct dtl_json *w, const char *s, size_t n)
{
	if (n > sizeof(w->buf) - w->len) {
		flush(w);
		if (n > sizeof(w->buf)) {
			fwrite(s, 1, n, w->out);
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void put_char(struct dtl_json *w, char c)
{
	if (w->len == sizeof(w->buf))
		flush(w);
	w->buf[w->len++] = c;
}

int dtl_json_finish(struct dtl_json *w)
{
	flush(w);
	if (w->misused || w->depth || w->after_key)
		return -EINVAL;
	return ferror(w->out) ? -EIO : 0;
}

static void newline(struct dtl_json *w, int indent)
{
	static const char spaces[] = "                                ";

	put_char(w, '\n');
	w->line_indent = (unsigned)indent;
	while (indent > 0) {
		int n = indent < (int)sizeof(spaces) - 1 ? indent : (int)sizeof(spaces) - 1;
		put(w, spaces, (size_t)n);
		indent -= n;
	}
}

/* Before a value or a key: the comma and the break or space that separate it from the
 * member before. False when the writer stopped or the item does not belong here. */
static bool begin_item(struct dtl_json *w, bool key)
{
	struct dtl_json_frame *f;

	if (w->misused)
		return false;
	if (w->after_key) { /* the key's value: its ": " is written */
		if (key)
			w->misused = true;
		w->after_key = false;
		return !w->misused;
	}
	if (w->depth == 0) {
		if (key)
			w->misused = true;
		return !w->misused;
	}
	f = &w->stack[w->depth - 1];
	if (f->object != key) { /* an object takes keys, an array values */
		w->misused = true;
		return false;
	}
	if (!f->empty)
		put_char(w, ',');
	if (w->pending_break >= 0)
		newline(w, w->pending_break);
	else if (f->member_indent >= 0)
		newline(w, f->member_indent);
	else if (!f->empty)
		put_char(w, ' ');
	w->pending_break = -1;
	f->empty = false;
	return true;
}

/* At the top level, a value ends its line, and leaves the writer */
static void end_value(struct dtl_json *w)
{
	if (w->depth == 0) {
		put_char(w, '\n');
		flush(w);
	}
}

static void begin(struct dtl_json *w, bool object, bool block)
{
	struct dtl_json_frame *f;

	if (!begin_item(w, false))
		return;
	if (w->depth == DTL_JSON_DEPTH_MAX) {
		w->misused = true;
		return;
	}
	f = &w->stack[w->depth++];
	f->object = object;
	f->empty = true;
	f->member_indent = block ? (int)w->line_indent + 2 : -1;
	f->close_indent = block ? (int)w->line_indent : -1;
	put_char(w, object ? '{' : '[');
}

static void end(struct dtl_json *w, bool object)
{
	struct dtl_json_frame *f;

	if (w->misused)
		return;
	if (w->depth == 0 || w->after_key || w->stack[w->depth - 1].object != object) {
		w->misused = true;
		return;
	}
	f = &w->stack[--w->depth];
	if (w->pending_break >= 0)
		newline(w, w->pending_break);
	else if (!f->empty && f->close_indent >= 0)
		newline(w, f->close_indent);
	w->pending_break = -1;
	put_char(w, object ? '}' : ']');
	end_value(w);
}

void dtl_json_begin_object(struct dtl_json *w)
{
	begin(w, true, false);
}

void dtl_json_begin_array(struct dtl_json *w)
{
	begin(w, false, false);
}

void dtl_json_begin_object_block(struct dtl_json *w)
{
	begin(w, true, true);
}

void dtl_json_begin_array_block(struct dtl_json *w)
{
	begin(w, false, true);
}

void dtl_json_end_object(struct dtl_json *w)
{
	end(w, true);
}

void dtl_json_end_array(struct dtl_json *w)
{
	end(w, false);
}

void dtl_json_break(struct dtl_json *w, int indent)
{
	if (indent >= 0)
		w->pending_break = indent;
}

/* s between quotes: gathered in buf when dtl_put_quoted would copy it unchanged (printable
 * ASCII but '"' and '\\'), else written by dtl_put_quoted */
static void put_quoted(struct dtl_json *w, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
			flush(w);
			dtl_put_quoted(w->out, s, len);
			return;
		}
	}
	put_char(w, '"');
	put(w, s, len);
	put_char(w, '"');
}

void dtl_json_key(struct dtl_json *w, const char *key)
{
	if (!begin_item(w, true))
		return;
	put_quoted(w, key, strlen(key));
	put(w, ": ", 2);
	w->after_key = true;
}

void dtl_json_put_string_len(struct dtl_json *w, const char *s, size_t len)
{
	if (!begin_item(w, false))
		return;
	put_quoted(w, s, len);
	end_value(w);
}

void dtl_json_put_string(struct dtl_json *w, const char *s)
{
	if (s)
		dtl_json_put_string_len(w, s, strlen(s));
	else
		dtl_json_put_null(w);
}

/* v in decimal, written backwards from end (20 bytes at most); returns its first digit.
 * snprintf costs more than the rest of a SARIF region object together. */
static char *digits(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

void dtl_json_put_int(struct dtl_json *w, int64_t v)
{
	if (!begin_item(w, false))
		return;
	char text[24], *p = text + sizeof(text);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	p = digits(p, u);
	if (v < 0)
		*--p = '-';
	put(w, p, (size_t)(text + sizeof(text) - p));
	end_value(w);
}

void dtl_json_put_uint(struct dtl_json *w, uint64_t v)
{
	if (!begin_item(w, false))
		return;
	char text[24], *p = digits(text + sizeof(text), v);
	put(w, p, (size_t)(text + sizeof(text) - p));
	end_value(w);
}

void dtl_json_put_number(struct dtl_json *w, double v)
{
	if (!isfinite(v)) {
		dtl_json_put_null(w);
		return;
	}
	if (!begin_item(w, false))
		return;
	char text[32];
	put(w, text, (size_t)snprintf(text, sizeof(text), "%.17g", v));
	end_value(w);
}

static void put_literal(struct dtl_json *w, const char *text)
{
	if (!begin_item(w, false))
		return;
	put(w, text, strlen(text));
	end_value(w);
}

void dtl_json_put_bool(struct dtl_json *w, bool v)
{
	put_literal(w, v ? "true" : "false");
}

void dtl_json_put_null(struct dtl_json *w)
{
	put_literal(w, "null");
}

void dtl_json_key_string(struct dtl_json *w, const char *key, const char *s)
{
	dtl_json_key(w, key);
	dtl_json_put_string(w, s);
}

void dtl_json_key_int(struct dtl_json *w, const char *key, int64_t v)
{
	dtl_json_key(w, key);
	dtl_json_put_int(w, v);
}

void dtl_json_key_uint(struct dtl_json *w, const char *key, uint64_t v)
{
	dtl_json_key(w, key);
	dtl_json_put_uint(w, v);
}

void dtl_json_key_bool(struct dtl_json *w, const char *key, bool v)
{
	dtl_json_key(w, key);
	dtl_json_put_bool(w, v);
}

void dtl_json_key_null(struct dtl_json *w, const char *key)
{
	dtl_json_key(w, key);
	dtl_json_put_null(w);
}

void dtl_json_key_object(struct dtl_json *w, const char *key)
{
	dtl_json_key(w, key);
	dtl_json_begin_object(w);
}

void dtl_json_key_array(struct dtl_json *w, const char *key)
{
	dtl_json_key(w, key);
	dtl_json_begin_array(w);
}
