/* SPDX-License-Identifier: MIT */
/* Framework version numbers: "2.7.1", "0.19.2", "4.57.0.dev0", "2.1.0+cu121". */
#ifndef DTYPELINT_VERSION_H
#define DTYPELINT_VERSION_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/version.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>

struct dtl_version {
	int part[4]; /* major, minor, patch, fourth; missing parts are 0 */
	int pre;     /* 0 for a release; <0 for .devN/aN/bN/rcN (sorts before the release) */
	bool set;
};

/* dtypelint's own version as built: `git describe --always --dirty` from a git checkout,
 * else the release version. */
const char *dtl_build_version(void);
/* Returns 0, or -EINVAL when text is not a version. Local labels (+cu121) are ignored. */
int dtl_version_parse(const char *text, size_t len, struct dtl_version *ret_version);
/* <0, 0, >0 like strcmp */
int dtl_version_compare(const struct dtl_version *a, const struct dtl_version *b);
/* Formats into buf ("2.7.1"); returns buf. */
char *dtl_version_format(const struct dtl_version *version, char *buf, size_t size);

#endif
