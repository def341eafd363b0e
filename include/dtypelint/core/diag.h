/* SPDX-License-Identifier: MIT */
/*
 * Errors and source locations. Library code never prints: a fallible function fills a
 * struct dtl_error and returns a negative errno; only src/cli/ prints it.
 */
#ifndef DTYPELINT_DIAG_H
#define DTYPELINT_DIAG_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/diag.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdarg.h>
#include <stdint.h>

/* A position in an input file. Lines and columns are 1-based; columns count Unicode code
 * points and a tab counts as one column. line == 0 means "the file as a whole". */
struct dtl_loc {
	const char *file; /* borrowed: owned by the struct dtl_source it points into */
	uint32_t line;
	uint32_t column;
};

#define DTL_ERROR_MESSAGE_MAX 1024

struct dtl_error {
	struct dtl_loc loc;
	char file_storage[4096]; /* loc.file points here once set: errors outlive sources; PATH_MAX,
	                          * so a path that open() takes is never cut */
	char message[DTL_ERROR_MESSAGE_MAX];
};

/* *to = *from, with to->loc.file pointing at to's own storage (a struct copy would leave it
 * pointing into from). */
void dtl_error_copy(struct dtl_error *to, const struct dtl_error *from);
/* Fills *error (when not NULL) and returns code (a negative errno, e.g. -EINVAL). */
int dtl_error_set(struct dtl_error *error, struct dtl_loc loc, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int dtl_error_setv(struct dtl_error *error, struct dtl_loc loc, int code, const char *fmt,
                   va_list args) __attribute__((format(printf, 4, 0)));

#endif
