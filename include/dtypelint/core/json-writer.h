/* SPDX-License-Identifier: MIT */
/*
 * The one JSON writer: every JSON output (json, json-lines, SARIF, GitLab, kernel contracts,
 * --show-plan, --memory, --statistics, --list-rules, fix and wrap plans, baselines) streams
 * through it. The writer places the commas and line breaks; strings go through dtl_put_quoted,
 * so the output is valid UTF-8 whatever bytes the input held.
 *
 *   struct dtl_json w;
 *   dtl_json_init(&w, stdout);
 *   dtl_json_begin_object(&w);
 *   dtl_json_key_string(&w, "rule", "DT101");
 *   dtl_json_key(&w, "tensors");
 *   dtl_json_begin_array(&w);
 *   ...
 *   dtl_json_end_array(&w);
 *   dtl_json_end_object(&w);
 *   r = dtl_json_finish(&w);
 *
 * Containers are inline ({"a": 1, "b": 2}) or blocks (a member a line, indented two spaces
 * more than the line that opens the block). The formats that predate the writer place some
 * breaks by hand: dtl_json_break puts the next member, or the close, on a new line.
 */
#ifndef DTYPELINT_JSON_WRITER_H
#define DTYPELINT_JSON_WRITER_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/json-writer.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deeper than any output nests; past it the writer writes nothing more and fails */
#define DTL_JSON_DEPTH_MAX 32

struct dtl_json_frame {
	bool object;
	bool empty;
	int member_indent; /* each member on a new line at this indent; -1: after ", " */
	int close_indent;  /* the close of a non-empty container on a new line; -1: right after */
};

struct dtl_json {
	FILE *out;
	unsigned depth;
	unsigned line_indent; /* of the line being written */
	int pending_break;    /* from dtl_json_break, or -1 */
	bool after_key;
	bool misused; /* unbalanced, too deep, or a key outside an object */
	struct dtl_json_frame stack[DTL_JSON_DEPTH_MAX];
	size_t len;    /* bytes in buf, written out when a top-level value ends or buf fills */
	char buf[512]; /* separators, keys and plain strings gathered into one fwrite */
};

/* Between init and the end of each top-level value, write to out only through w */
void dtl_json_init(struct dtl_json *w, FILE *out);
/* 0, -EINVAL when the calls did not nest (an open container, a key without its value, too
 * deep), or -EIO when out failed */
int dtl_json_finish(struct dtl_json *w);

/* Inline containers: members after ", " */
void dtl_json_begin_object(struct dtl_json *w);
void dtl_json_begin_array(struct dtl_json *w);
/* Blocks: each member on its own line, two spaces in from the line that opens the block, and
 * the close on a line of its own ({} and [] when empty) */
void dtl_json_begin_object_block(struct dtl_json *w);
void dtl_json_begin_array_block(struct dtl_json *w);
/* A value at the top level (depth 0) ends with a newline: one document, or one json-lines
 * line */
void dtl_json_end_object(struct dtl_json *w);
void dtl_json_end_array(struct dtl_json *w);

/* The next member, or the close if it comes first, starts a new line indented indent spaces;
 * a negative indent changes nothing */
void dtl_json_break(struct dtl_json *w, int indent);

/* The next member's name, quoted and escaped, then ": ": the value written next is its
 * value. key is NUL-terminated and copied into the output at once. */
void dtl_json_key(struct dtl_json *w, const char *key);

/* NULL is null */
void dtl_json_put_string(struct dtl_json *w, const char *s);
void dtl_json_put_string_len(struct dtl_json *w, const char *s, size_t len);
void dtl_json_put_int(struct dtl_json *w, int64_t v);
void dtl_json_put_uint(struct dtl_json *w, uint64_t v);
/* %.17g, which reads back the same double; NaN and the infinities, which JSON lacks, are null */
void dtl_json_put_number(struct dtl_json *w, double v);
void dtl_json_put_bool(struct dtl_json *w, bool v);
void dtl_json_put_null(struct dtl_json *w);

/* A key and its value */
void dtl_json_key_string(struct dtl_json *w, const char *key, const char *s);
void dtl_json_key_int(struct dtl_json *w, const char *key, int64_t v);
void dtl_json_key_uint(struct dtl_json *w, const char *key, uint64_t v);
void dtl_json_key_bool(struct dtl_json *w, const char *key, bool v);
void dtl_json_key_null(struct dtl_json *w, const char *key);
/* A key and the start of its value, an inline object or array */
void dtl_json_key_object(struct dtl_json *w, const char *key);
void dtl_json_key_array(struct dtl_json *w, const char *key);

#endif
