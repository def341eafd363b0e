/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "dtypelint/diag.h"

int dtl_error_setv(struct dtl_error *error, struct dtl_loc loc, int code, const char *fmt,
                   va_list args)
{
	if (!error)
		return code;
	snprintf(error->file_storage, sizeof(error->file_storage), "%s", loc.file ? loc.file : "");
	error->loc = loc;
	error->loc.file = error->file_storage;
	vsnprintf(error->message, sizeof(error->message), fmt, args);
	return code;
}

int dtl_error_set(struct dtl_error *error, struct dtl_loc loc, int code, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	dtl_error_setv(error, loc, code, fmt, args);
	va_end(args);
	return code;
}
