/* SPDX-License-Identifier: MIT */
/*
 * Writing a file so that a failure leaves the old one as it was (the habit of git's lock
 * files): the new text goes to a temporary file created exclusively (O_CREAT | O_EXCL |
 * O_NOFOLLOW) in the same directory, with the mode of the file it replaces, and is fsync'ed
 * and renamed over it only when all of it was written. A path that is a symlink has its
 * target replaced (the link stays a link); a file with other hard links is refused, since a
 * rename would split it from them. A path that is no regular file (a device such as
 * /dev/stdout, a pipe) is written in place. The replaced file's owner and group are kept
 * where the writer may (root; a group it is in). While a temporary file exists, SIGINT and
 * SIGTERM remove it before the process dies of them. Library code: errors are returned, never
 * printed.
 */
#ifndef DTYPELINT_ATOMIC_FILE_H
#define DTYPELINT_ATOMIC_FILE_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/atomic-file.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdio.h>

#include "dtypelint/core/diag.h"

struct dtl_atomic_file {
	FILE *out;      /* write here */
	char *tmp_path; /* NULL when written in place */
	char *target;   /* the file renamed over (the symlink's target for a link) */
	/* dtl_atomic_expect: what the target must still be just before the rename */
	const char *expect;
	size_t expect_size;
	unsigned long long dev, ino, mtime_ns;
	long long size, mtime_s;
	int slot; /* 1 + its place among the temporary files a signal removes; 0 for none */
};

/* Opens path for writing. Returns 0, or a negative errno with *error set (-EPERM for a
 * hard-linked file). */
int dtl_atomic_open(struct dtl_atomic_file *f, const char *path, struct dtl_error *error);
/* Flushes, fsyncs and closes the file and renames it over its target. On any failure the
 * temporary file is removed, the old file is untouched, and -EIO (or the errno) is returned. */
int dtl_atomic_commit(struct dtl_atomic_file *f, struct dtl_error *error);
/* Makes the commit refuse (-EAGAIN, *error naming the file, the temporary file removed, the
 * target untouched) when, just before the rename, the target is no longer the file open saw
 * (device, inode, size, modification time) or no longer holds the size bytes of data: someone
 * saved it meanwhile. data must outlive the commit. Only for a file that existed. */
void dtl_atomic_expect(struct dtl_atomic_file *f, const char *data, size_t size);
/* Gives up: closes and removes the temporary file. */
void dtl_atomic_abort(struct dtl_atomic_file *f);

#endif
