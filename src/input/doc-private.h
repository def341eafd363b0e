/* SPDX-License-Identifier: MIT */
/* Helpers shared by the JSON, YAML and TOML readers. */
#ifndef DTL_DOC_PRIVATE_H
#define DTL_DOC_PRIVATE_H

#include "dtypelint/input/doc.h"

/* Rejects NUL bytes and invalid UTF-8, at their position. */
int dtl_doc_check_text(const struct dtl_source *source, struct dtl_error *error);
/* Sets node to DTL_NODE_INT (when the spelling is an integer that fits int64) or
 * DTL_NODE_FLOAT; -EINVAL when text is no number. Does not set raw. */
int dtl_doc_set_number(struct dtl_node *node, const char *text, size_t len);
/* A mapping's keys must be unique: "duplicate key 'x' (first at line:col)". */
int dtl_doc_check_duplicate_keys(const struct dtl_node *map, const char *file,
                                 struct dtl_arena *arena, struct dtl_error *error);
const char *dtl_doc_uint_text(struct dtl_arena *arena, unsigned long value);

/* The readers behind dtl_doc_parse_split(): nodes into nodes, strings into text. */
int dtl_doc_json(const struct dtl_source *source, struct dtl_arena *nodes, struct dtl_arena *text,
                 const struct dtl_limits *limits, struct dtl_doc_stream *stream,
                 struct dtl_node **ret_root, struct dtl_error *error);
int dtl_doc_yaml(const struct dtl_source *source, struct dtl_arena *nodes, struct dtl_arena *text,
                 const struct dtl_limits *limits, struct dtl_doc_stream *stream,
                 struct dtl_node **ret_root, struct dtl_error *error);

/* TOML (doc-toml.c): no streamed list */
int dtl_doc_toml(const struct dtl_source *source, struct dtl_arena *nodes, struct dtl_arena *text,
                 const struct dtl_limits *limits, struct dtl_node **ret_root,
                 struct dtl_error *error);

#endif
