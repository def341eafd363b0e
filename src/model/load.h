/* SPDX-License-Identifier: MIT */
/* The in-memory half of dtl_manifest_load() and dtl_plan_load(), for fuzzers and tests. */
#ifndef DTL_MODEL_LOAD_H
#define DTL_MODEL_LOAD_H

#include "dtypelint/manifest.h"
#include "dtypelint/source.h"

/* Parses source (JSON or YAML, by its path as dtl_doc_parse() decides) into *ret_manifest:
 * exactly what dtl_manifest_load() does once it has read the file. Everything the manifest
 * keeps lives in arena; source may be freed afterwards. */
int dtl_manifest_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                             const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                             struct dtl_error *error);
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
	size_t count;             /* elements seen (more than decls past --max-tensors) */
	int failed;               /* the first conversion error, or 0 */
	struct dtl_error error;
};
void dtl_tensor_stream_init(struct dtl_tensor_stream *ts, const char *file,
                            struct dtl_arena *arena, const struct dtl_limits *limits);
/* dtl_doc_stream's element(): one element of "tensors" */
int dtl_tensor_stream_element(void *ctx, const struct dtl_node *item);
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
