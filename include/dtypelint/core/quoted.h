/* SPDX-License-Identifier: MIT */
/* A double-quoted string, valid JSON and valid YAML, from any bytes. */
#ifndef DTYPELINT_QUOTED_H
#define DTYPELINT_QUOTED_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/quoted.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The length (1-4) of the valid UTF-8 sequence at s (n > 0 bytes left) and its code point in
 * *ret_cp; 0 when s starts no valid sequence (overlong, surrogate, past U+10FFFF, cut short). */
size_t dtl_utf8_sequence(const char *s, size_t n, uint32_t *ret_cp);

/* Writes s[0..len) between double quotes: '"', '\\', controls (C0, DEL, C1), U+2028/U+2029,
 * bidi overrides and isolates, U+FEFF, U+FFFE and U+FFFF escaped (\n, \r, \t or \uXXXX), and
 * every invalid UTF-8 byte replaced by U+FFFD (written "\ufffd"). Other text is copied. */
void dtl_put_quoted(FILE *out, const char *s, size_t len);

#endif
