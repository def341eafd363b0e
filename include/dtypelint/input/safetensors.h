/* SPDX-License-Identifier: MIT */
/*
 * The safetensors header reader (issue 5). A safetensors file is an 8-byte little-endian
 * header length N, N bytes of UTF-8 JSON, then the tensor data. Only the first 8 + N bytes are
 * ever read: a shard of hundreds of GB costs as much as its header.
 *
 * Everything the header says is checked against the file size and the format's rules (see
 * src/input/safetensors.c for each rule and its source). Any lie is an error: -EINVAL, with
 * error->loc = {path, 1, column} where column is the 1-based byte offset in the file of the
 * offending header text (the 8-byte prefix included, so the header's '{' is column 9), or
 * column 1 for errors about the length prefix or the file as a whole. I/O errors return
 * -errno with line 0 (the file as a whole).
 *
 * Results live in the caller's arena. On failure the arena may hold partial results: they
 * are freed with it.
 */
#ifndef DTYPELINT_SAFETENSORS_H
#define DTYPELINT_SAFETENSORS_H
#ifndef DTL_SEES_INPUT
#error                                                                                             \
    "dtypelint/input/safetensors.h is in the input layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/core/limits.h"

/* Bytes of the little-endian length prefix. */
#define DTL_SAFETENSORS_PREFIX_LEN 8

struct dtl_safetensors_tensor {
	const char *name; /* NUL-terminated (names containing U+0000 are rejected), arena */
	size_t name_len;  /* bytes, without the NUL */
	enum dtl_dtype dtype;
	uint32_t rank;
	int64_t *shape;       /* rank dimensions, each <= 2^53; NULL when rank == 0 (a scalar) */
	int64_t numel;        /* product of shape; 1 for a scalar, 0 when a dimension is 0 */
	uint64_t begin;       /* data_offsets, relative to the start of the data section; */
	uint64_t end;         /* end - begin == numel * itemsize */
	uint32_t name_column; /* 1-based byte offset in the file of the name's opening quote */
};

struct dtl_safetensors_metadata {
	const char *key; /* NUL-terminated, arena */
	size_t key_len;
	const char *value; /* NUL-terminated, arena */
	size_t value_len;
};

struct dtl_safetensors_header {
	/* In the order of the JSON text: the order a user sees. */
	struct dtl_safetensors_tensor *tensors;
	size_t tensor_count;
	/* Indices into tensors, sorted by data offset (begin, then end): tensors[by_offset[0]]
	 * starts at offset 0 and each next one starts where the previous one ends. */
	size_t *by_offset;
	/* "__metadata__" pairs in JSON order; has_metadata is false when the key is absent or
	 * null. */
	struct dtl_safetensors_metadata *metadata;
	size_t metadata_count;
	bool has_metadata;
	uint64_t header_len; /* N: bytes of JSON including any trailing padding */
	uint64_t data_size;  /* file_size - 8 - N: bytes of the data section */
	uint64_t file_size;
};

/*
 * Reads and checks the header of the safetensors file at path: the first 8 + N bytes only.
 * limits->max_safetensors_header bounds N, max_tensors the number of tensors,
 * max_name_length each name and metadata key, max_rank each shape, max_depth the nesting of
 * values the reader skips (unknown keys in a tensor entry, which the format ignores).
 * Returns 0, -EINVAL for an invalid file, -ENOMEM, or another negative errno from the system.
 */
int dtl_safetensors_read_header(const char *path, const struct dtl_limits *limits,
                                struct dtl_arena *arena, struct dtl_safetensors_header *ret_header,
                                struct dtl_error *error);

/*
 * Checks the 8-byte length prefix of a file of file_size bytes and stores N in
 * *ret_header_len. path is only used in error locations.
 */
int dtl_safetensors_parse_prefix(const char *path,
                                 const unsigned char prefix[DTL_SAFETENSORS_PREFIX_LEN],
                                 uint64_t file_size, const struct dtl_limits *limits,
                                 uint64_t *ret_header_len, struct dtl_error *error);

/*
 * Parses and checks header_len bytes of header JSON (the bytes after the prefix) of a file
 * of file_size bytes: the in-memory half of dtl_safetensors_read_header(), for fuzzers and
 * tests. bytes need not be NUL-terminated. Columns in errors count the 8-byte prefix.
 */
int dtl_safetensors_parse_header(const char *path, const unsigned char *bytes, size_t header_len,
                                 uint64_t file_size, const struct dtl_limits *limits,
                                 struct dtl_arena *arena, struct dtl_safetensors_header *ret_header,
                                 struct dtl_error *error);

/* The safetensors spelling of a dtype ("BF16", "F8_E4M3"), or NULL for DTL_DTYPE_NONE. */
const char *dtl_safetensors_dtype_name(enum dtl_dtype dtype);

#endif
