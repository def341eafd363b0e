/* SPDX-License-Identifier: MIT */
/*
 * The error record of diag.h: how every library layer reports a failure. A function fills a
 * struct dtl_error (location and message, copied into the record's own storage so it outlives
 * the input's arena) and returns the negative errno; only src/cli/ prints it, as
 * "file:line:col: error: ...".
 */
#include <stdio.h>
#include <string.h>

#include "dtypelint/core/diag.h"

int dtl_error_setv(struct dtl_error *error, struct dtl_loc loc, int code, const char *fmt,
                   va_list args)
{
	if (!error)
		return code;
	snprintf(error->file_storage, sizeof(error->file_storage), "%s", loc.file ? loc.file : "");
	error->loc = loc;
	error->loc.file = error->file_storage;
	int n = vsnprintf(error->message, sizeof(error->message), fmt, args);
	/* a message cut at the buffer's size says so, never silently (at a UTF-8 boundary) */
	if (n >= (int)sizeof(error->message)) {
		size_t end = sizeof(error->message) - 4;
		while (end > 0 && ((unsigned char)error->message[end] & 0xc0) == 0x80)
			end--;
		memcpy(error->message + end, "...", 4);
	}
	return code;
}

void dtl_error_copy(struct dtl_error *to, const struct dtl_error *from)
{
	*to = *from;
	/* loc.file points into the error's own storage: into to's now */
	if (from->loc.file == from->file_storage)
		to->loc.file = to->file_storage;
}

int dtl_error_set(struct dtl_error *error, struct dtl_loc loc, int code, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	dtl_error_setv(error, loc, code, fmt, args);
	va_end(args);
	return code;
}
