/* SPDX-License-Identifier: MIT */
/*
 * The positioned document tree: JSON (through cJSON) and YAML (through libyaml) both become
 * this, and every node knows its line and column. Nodes live in the caller's arena.
 */
#ifndef DTYPELINT_DOC_H
#define DTYPELINT_DOC_H
#ifndef DTL_SEES_INPUT
#error "dtypelint/input/doc.h is in the input layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/limits.h"
#include "dtypelint/input/source.h"

enum dtl_node_type {
	DTL_NODE_NULL,
	DTL_NODE_BOOL,
	DTL_NODE_INT,   /* fits int64 */
	DTL_NODE_FLOAT, /* any other number, incl. integers too large for int64, NaN, inf */
	DTL_NODE_STRING,
	DTL_NODE_SEQ,
	DTL_NODE_MAP,
};

struct dtl_pair;

struct dtl_node {
	enum dtl_node_type type;
	uint32_t line;   /* 1-based */
	uint32_t column; /* 1-based, code points */
	uint32_t raw_len;
	/* the literal as written, for scalars (numbers keep their spelling: "1e400"; for
	 * strings it is the text). It never points into the source, and lives as long as the
	 * nodes do: copy it to keep it. */
	const char *raw;
	union {
		bool boolean;
		int64_t integer;
		double number;
		struct {
			const char *text; /* NUL-terminated; may contain NUL bytes within len */
			size_t len;
		} string;
		struct {
			struct dtl_node *items;
			size_t count;
		} seq;
		struct {
			struct dtl_pair *pairs;
			size_t count;
		} map;
	};
};

struct dtl_pair {
	struct dtl_node key; /* a DTL_NODE_STRING for JSON; any scalar for YAML */
	struct dtl_node value;
};

/* Parses JSON (RFC 8259, strictly: cJSON, and a cursor in step with it that keeps every
 * position). Syntax errors are reported at the byte where the text stops being JSON
 * ("JSON: syntax error at 'x'", "JSON: unexpected end of file"); a file that is JSON but not
 * acceptable (a raw control character or \u0000 in a string, a number like 01 or 1., nesting
 * over limits->max_depth, a duplicate key) is reported at the first such place, but only when
 * the whole file is JSON. */
int dtl_doc_parse_json(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error);
/* Parses YAML (libyaml events): one document, aliases expanded up to limits->max_alias_nodes,
 * core-schema scalars (null, true/false, ints, floats), tags !!str !!int !!float !!bool !!null. */
int dtl_doc_parse_yaml(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error);
/* Parses TOML 1.0 (src/input/doc-toml.c): tables as mappings, arrays as sequences, date-times
 * as strings (their text); duplicate keys and redefined tables are errors at their position. */
int dtl_doc_parse_toml(const struct dtl_source *source, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_node **ret_root,
                       struct dtl_error *error);
/* By extension: .json -> JSON, .toml and uv.lock -> TOML, .yaml/.yml -> YAML, otherwise sniff the
 * first byte ('{' or
 * '[' -> JSON). */
int dtl_doc_parse(const struct dtl_source *source, struct dtl_arena *arena,
                  const struct dtl_limits *limits, struct dtl_node **ret_root,
                  struct dtl_error *error);
/*
 * dtl_doc_parse() with the tree's nodes in node_arena and its strings (string.text) in
 * text_arena. A caller that keeps strings but not nodes (the manifest and plan readers)
 * frees node_arena as soon as it has read the tree. The tree does not point into the
 * source, which may be freed once this returns.
 */
int dtl_doc_parse_split(const struct dtl_source *source, struct dtl_arena *node_arena,
                        struct dtl_arena *text_arena, const struct dtl_limits *limits,
                        struct dtl_node **ret_root, struct dtl_error *error);

/*
 * One list of the root mapping read element by element (a manifest's tensors): as
 * soon as an element of the list under key is read, element() gets it, and its nodes are
 * dropped (its strings stay in text_arena). The list's node in the tree then has no items;
 * used and count say that it was streamed and how many elements it had. element() returns 0,
 * or a negative errno (-ENOMEM) that stops the reading; it is not called once the document is
 * known to be refused. The reader sets used and count, and the byte offsets with which element()
 * can estimate how many elements are still to come: the list's first element starts at
 * first, the element handed over ends at end, and the document has size bytes.
 */
struct dtl_doc_text;
struct dtl_doc_stream {
	const char *key;
	int (*element)(void *ctx, const struct dtl_node *item);
	/* optional, JSON only: offered each element before its nodes are built (below) */
	int (*text)(void *ctx, struct dtl_doc_text *element);
	void *ctx;
	bool used;
	size_t count;
	size_t first, end, size;
};
/*
 * An element of a streamed JSON list offered to text() as text: s[0..n) is the whole
 * document, the element starts at pos, on line `line`, which starts at line_start and holds
 * only ASCII bytes before pos, and the values directly inside the element are within
 * --max-depth. text() returns 0 to leave the element to the reader (nodes, then element());
 * or it takes the element whole and returns 1, having set end (the offset just past it) and
 * end_line and end_line_start (those of end). It may take only an element that the reader
 * would read without any error or problem and in which every byte is ASCII, and must then
 * do what element() would have done with its nodes. A negative errno stops the reading.
 */
struct dtl_doc_text {
	const char *s;
	size_t n, pos;
	uint32_t line;
	size_t line_start;
	size_t end;
	uint32_t end_line;
	size_t end_line_start;
};
/* dtl_doc_parse_split() with stream (JSON and YAML alike; a YAML list that has an anchor is
 * not streamed, and from a YAML document's first anchored container on, elements are kept:
 * doc-yaml.c). */
int dtl_doc_parse_stream(const struct dtl_source *source, struct dtl_arena *node_arena,
                         struct dtl_arena *text_arena, const struct dtl_limits *limits,
                         struct dtl_doc_stream *stream, struct dtl_node **ret_root,
                         struct dtl_error *error);

/* Case-sensitive lookup of a string key in a map; the first match, or NULL. */
const struct dtl_node *dtl_node_get(const struct dtl_node *map, const char *key);
/* "a mapping", "a string", ... for error messages */
const char *dtl_node_type_name(enum dtl_node_type type);
/* A location for a node of the given source. */
struct dtl_loc dtl_node_loc(const struct dtl_node *node, const char *file);

#endif
