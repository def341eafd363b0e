/* SPDX-License-Identifier: MIT */
/* Data files from rules/ compiled into the binary (tools/embed.c). */
#ifndef DTYPELINT_EMBEDDED_H
#define DTYPELINT_EMBEDDED_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/embedded.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stddef.h>

struct dtl_embedded_file {
	const char *name; /* base name, e.g. "llama.yaml" */
	const char *data; /* NUL-terminated */
	size_t size;
};

/* Tables end with a {NULL, NULL, 0} entry. */
extern const struct dtl_embedded_file dtl_embedded_versions[];
extern const struct dtl_embedded_file dtl_embedded_architectures[];
extern const struct dtl_embedded_file dtl_embedded_conversions[];

#endif
