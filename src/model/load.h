/* SPDX-License-Identifier: MIT */
/* The in-memory half of dtl_manifest_load() and dtl_plan_load(), for fuzzers and tests. */
#ifndef DTL_MODEL_LOAD_H
#define DTL_MODEL_LOAD_H

#include "dtypelint/model/manifest.h"
#include "dtypelint/input/source.h"

/* Parses source (JSON or YAML, by its path as dtl_doc_parse() decides) into *ret_manifest:
 * exactly what dtl_manifest_load() does once it has read the file. Everything the manifest
 * keeps lives in arena; source may be freed afterwards. */
int dtl_manifest_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                             const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                             struct dtl_error *error);
/* The same with every tensor entry read through the document's nodes, never straight from
 * the text (tensor-text.c): for the tests and fuzzers that compare the two. */
int dtl_manifest_load_source_nodes(const struct dtl_source *source, struct dtl_arena *arena,
                                   const struct dtl_limits *limits,
                                   struct dtl_manifest *ret_manifest, struct dtl_error *error);
/*
 * A manifest's tensors converted while the JSON reader reads them (dtl_doc_stream), so that
 * their document nodes never all exist at once: a 1M-tensor manifest's tree was most of the
 * peak memory. Conversion errors wait here and are reported where dtl_manifest_parse() would
 * have met them (after the root's keys before "tensors"; never before an error of the
 * document itself). Everything kept lives in arena.
 */
struct dtl_tensor_stream {
	const char *file;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_vec decls;    /* struct dtl_tensor_decl, in arena */
	struct dtl_strmap names; /* name -> first index, in arena (the manifest's tensor_index) */
	const struct dtl_doc_stream *doc; /* the reader's offsets (NULL: none) */
	size_t count;                     /* elements seen (more than decls past --max-tensors) */
	int failed;                       /* the first conversion error, or 0 */
	struct dtl_error error;
};
/* An empty stream for file's "tensors", its declarations and name map in arena (borrowed, as
 * are file and limits); cannot fail. */
void dtl_tensor_stream_init(struct dtl_tensor_stream *ts, const char *file, struct dtl_arena *arena,
                            const struct dtl_limits *limits);
/* dtl_doc_stream's element(): one element of "tensors" */
int dtl_tensor_stream_element(void *ctx, const struct dtl_node *item);
/* dtl_doc_stream's text(): one element of "tensors" read from the JSON text without nodes
 * when it is a plain entry, else left to element() (tensor-text.c) */
int dtl_tensor_stream_text(void *ctx, struct dtl_doc_text *element);
/* For dtl_tensor_stream_text(): whether the next element is to be converted at all (not
 * past --max-tensors, no conversion error yet) ... */
bool dtl_tensor_stream_open(const struct dtl_tensor_stream *ts);
/* ... and, when it was read, the tensor added as element() adds one: decl as parse_tensor()
 * makes it, except for its name (decl->name_len bytes at name, copied to the arena; hashed
 * for ts->names: dtl_strmap_hash()) and its shape (decl->rank dimensions at dims, copied;
 * dims NULL: no shape). name_loc is the name's value, end the offset just past the element.
 * 0 (a duplicate name is kept as the stream's error), or -ENOMEM. */
int dtl_tensor_stream_add(struct dtl_tensor_stream *ts, const struct dtl_tensor_decl *decl,
                          const char *name, uint64_t name_hash, const int64_t *dims,
                          struct dtl_loc name_loc, size_t end);
/* dtl_manifest_parse() for a tree whose "tensors" were streamed into ts (NULL: none). */
int dtl_manifest_parse_streamed(const struct dtl_node *root, const char *file,
                                struct dtl_arena *arena, const struct dtl_limits *limits,
                                const struct dtl_tensor_stream *ts,
                                struct dtl_manifest *ret_manifest, struct dtl_error *error);

/* The same for a --plan file. */
int dtl_plan_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                         const struct dtl_limits *limits, struct dtl_plan *plan,
                         struct dtl_error *error);

#endif
