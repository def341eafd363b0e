/* SPDX-License-Identifier: MIT */
/*
 * A double-quoted string that reads back the same as JSON and as YAML (quoted.h): input-derived
 * text (tensor names from a safetensors header, file names from a directory or the command line)
 * may hold any byte, and one invalid UTF-8 byte makes a whole JSON report or exported YAML
 * unreadable. Invalid UTF-8 becomes U+FFFD; controls and the characters either reader refuses or
 * a log mangles are \u escapes.
 */
#include <stdint.h>

#include "dtypelint/core/quoted.h"

#define INVALID 0x110000u /* no code point */

/* The code point at s (n > 0 bytes left) and its length; an invalid or overlong sequence, a
 * surrogate or a value past U+10FFFF is one INVALID byte. */
static size_t next_code_point(const unsigned char *s, size_t n, uint32_t *ret);

size_t dtl_utf8_sequence(const char *s, size_t n, uint32_t *ret_cp)
{
	uint32_t cp;
	size_t len = next_code_point((const unsigned char *)s, n, &cp);
	if (cp == INVALID)
		return 0;
	*ret_cp = cp;
	return len;
}

static size_t next_code_point(const unsigned char *s, size_t n, uint32_t *ret)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp, min;

	if (c < 0x80) {
		*ret = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, cp = c & 0x07, min = 0x10000;
	} else {
		*ret = INVALID;
		return 1;
	}
	if (n < len) {
		*ret = INVALID;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			*ret = INVALID;
			return 1;
		}
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		*ret = INVALID;
		return 1;
	}
	*ret = cp;
	return len;
}

/* C0, DEL and C1 controls, the line and paragraph separators (JavaScript and some log viewers
 * break lines there), the bidi overrides and isolates (text that reads differently from what
 * it is), and the non-characters YAML refuses */
static bool needs_escape(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff ||
	       cp == 0xfffe || cp == 0xffff;
}

void dtl_put_quoted(FILE *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len, *run = p;

	fputc('"', out);
	while (p < end) {
		uint32_t cp;
		size_t n;
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
			p++; /* the common case: plain ASCII, written with its run */
			continue;
		}
		n = next_code_point(p, (size_t)(end - p), &cp);
		if (cp != INVALID && cp >= 0x80 && !needs_escape(cp)) {
			p += n;
			continue;
		}
		fwrite(run, 1, (size_t)(p - run), out);
		switch (cp) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case INVALID:
			fputs("\\ufffd", out);
			break;
		default:
			fprintf(out, "\\u%04x", (unsigned)cp);
		}
		p += n;
		run = p;
	}
	fwrite(run, 1, (size_t)(p - run), out);
	fputc('"', out);
}
