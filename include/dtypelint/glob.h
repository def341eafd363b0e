/* SPDX-License-Identifier: MIT */
/*
 * Dotted-path globs (DESIGN §3): '*' matches within one segment (any run of characters but
 * '.'), a segment that is exactly '**' matches any number of segments (including none), all
 * else is literal.
 */
#ifndef DTYPELINT_GLOB_H
#define DTYPELINT_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* Returns NULL when pattern is a valid glob, else a static description of what is wrong. */
const char *dtl_glob_check(const char *pattern, size_t len);
bool dtl_glob_match(const char *pattern, size_t pattern_len, const char *path, size_t path_len);
/* true when pattern contains no '*' (a literal path) */
bool dtl_glob_is_literal(const char *pattern, size_t len);

#endif
