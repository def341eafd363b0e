/* SPDX-License-Identifier: MIT */
/*
 * The JSON writer (json-writer.h): a stack of open containers, each knowing whether it has a
 * member yet and where its members go, so that no caller counts commas. It builds no tree:
 * a SARIF report of 100k tensors streams out as it is written. A call that breaks the nesting
 * stops the writer (nothing more is written) and dtl_json_finish says so, rather than
 * writing a document no reader accepts.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "dtypelint/json-writer.h"
#include "dtypelint/quoted.h"

void dtl_json_init(struct dtl_json *w, FILE *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->pending_break = -1;
}

int dtl_json_finish(struct dtl_json *w)
{
	if (w->misused || w->depth || w->after_key)
		return -EINVAL;
	return ferror(w->out) ? -EIO : 0;
}

static void newline(struct dtl_json *w, int indent)
{
	static const char spaces[] = "                                ";

	fputc('\n', w->out);
	w->line_indent = (unsigned)indent;
	while (indent > 0) {
		int n = indent < (int)sizeof(spaces) - 1 ? indent : (int)sizeof(spaces) - 1;
		fwrite(spaces, 1, (size_t)n, w->out);
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
		fputc(',', w->out);
	if (w->pending_break >= 0)
		newline(w, w->pending_break);
	else if (f->member_indent >= 0)
		newline(w, f->member_indent);
	else if (!f->empty)
		fputc(' ', w->out);
	w->pending_break = -1;
	f->empty = false;
	return true;
}

/* At the top level, a value ends its line */
static void end_value(struct dtl_json *w)
{
	if (w->depth == 0)
		fputc('\n', w->out);
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
	fputc(object ? '{' : '[', w->out);
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
	fputc(object ? '}' : ']', w->out);
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

void dtl_json_key(struct dtl_json *w, const char *key)
{
	if (!begin_item(w, true))
		return;
	dtl_put_quoted(w->out, key, strlen(key));
	fputs(": ", w->out);
	w->after_key = true;
}

void dtl_json_put_string_len(struct dtl_json *w, const char *s, size_t len)
{
	if (!begin_item(w, false))
		return;
	dtl_put_quoted(w->out, s, len);
	end_value(w);
}

void dtl_json_put_string(struct dtl_json *w, const char *s)
{
	if (s)
		dtl_json_put_string_len(w, s, strlen(s));
	else
		dtl_json_put_null(w);
}

void dtl_json_put_int(struct dtl_json *w, int64_t v)
{
	if (!begin_item(w, false))
		return;
	fprintf(w->out, "%" PRId64, v);
	end_value(w);
}

void dtl_json_put_uint(struct dtl_json *w, uint64_t v)
{
	if (!begin_item(w, false))
		return;
	fprintf(w->out, "%" PRIu64, v);
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
	fprintf(w->out, "%.17g", v);
	end_value(w);
}

static void put_literal(struct dtl_json *w, const char *text)
{
	if (!begin_item(w, false))
		return;
	fputs(text, w->out);
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
