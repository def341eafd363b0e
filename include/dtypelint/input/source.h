/* SPDX-License-Identifier: MIT */
/* An input file read once into memory. */
#ifndef DTYPELINT_SOURCE_H
#define DTYPELINT_SOURCE_H
#ifndef DTL_SEES_INPUT
#error "dtypelint/input/source.h is in the input layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "dtypelint/core/diag.h"
#include "dtypelint/core/limits.h"

struct dtl_source {
	char *path; /* as given; owned */
	char *data; /* owned; NUL-terminated (the NUL is not counted in size) */
	size_t size;
};

/* Reads path (refusing directories, non-regular files and files over limits->max_file_size).
 * On failure returns a negative errno and fills *error with path:0:0 (line 0: the file). */
int dtl_source_read(struct dtl_source *source, const char *path, const struct dtl_limits *limits,
                    struct dtl_error *error);
/* Copies size bytes of data. */
int dtl_source_init_mem(struct dtl_source *source, const char *path, const char *data, size_t size);
void dtl_source_fini(struct dtl_source *source);

/* Refuses (-EACCES, error at `at`, or at from/path when at.file is NULL) a path that resolves,
 * through links, outside the folders dtypelint reads from: the folder of `from` (the file or
 * folder that names path; NULL when the user typed path, and then only a link is checked), the
 * working directory, the git repositories holding either, and an HF cache entry whose snapshots/
 * hold `from`. When `from` is set, "-" and what is not a regular file or a folder (a device, a
 * FIFO, /dev/stdin) are refused too (-EINVAL). Quotes no byte of the file. Returns 0 when path
 * is allowed or missing. */
int dtl_confine_check(const char *path, const char *from, struct dtl_loc at,
                      struct dtl_error *error);

/* The files this run read (dtl_source_read, safetensors headers, kernel sources), by device
 * and inode, so that no output replaces one (read-log.c). has() is true for every file once
 * noting failed for want of memory. */
void dtl_read_log_note(dev_t dev, ino_t ino);
bool dtl_read_log_has(dev_t dev, ino_t ino);
/* Frees the log and forgets every file (the cli, at exit: valgrind counts what is left). */
void dtl_read_log_clear(void);

/* Refuses (-EACCES) to edit a path that does not resolve, after every link, under the working
 * directory or its git repository: --fix-plan --write never edits a file outside the tree. */
int dtl_confine_tree(const char *path, struct dtl_loc at, struct dtl_error *error);

/* The 1-based line and column (in code points, tab = 1) of a byte offset; O(offset). */
struct dtl_loc dtl_source_loc_at(const struct dtl_source *source, size_t offset);
/* Returns the offset of the first invalid UTF-8 sequence, or (size_t)-1 when all is valid. */
size_t dtl_source_find_invalid_utf8(const struct dtl_source *source);

#endif
