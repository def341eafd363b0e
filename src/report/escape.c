/* SPDX-License-Identifier: MIT */
/* Input-derived text on a terminal or in a CI log: control characters escaped. */
#include <string.h>

#include "dtypelint/core/quoted.h"
#include "report-private.h"

/* The character at p: its length, and whether it is escaped: C0 (ESC, CR, LF included), DEL,
 * C1 (0xc2 0x80-0x9f in UTF-8) and any byte of invalid UTF-8 (a lone 0x9b is CSI to a
 * terminal in 8-bit mode), whose code point or 0x110000 | byte goes to *ret_cp. */
size_t dtl_report_char_at(const char *p, uint32_t *ret_cp, bool *ret_escape)
{
	unsigned char c = (unsigned char)*p;
	size_t len = 1;

	*ret_cp = c;
	if (c >= 0x80 && (len = dtl_utf8_sequence(p, strnlen(p, 4), ret_cp)) == 0) {
		*ret_cp = 0x110000u | c;
		len = 1;
	}
	*ret_escape =
	    *ret_cp < 0x20 || (*ret_cp >= 0x7f && *ret_cp <= 0x9f) || *ret_cp >= 0x110000u;
	return len;
}

void dtl_report_put_char_escape(FILE *out, uint32_t cp)
{
	if (cp >= 0x80 && cp < 0x110000u)
		fprintf(out, "\\u%04x", (unsigned)cp);
	else
		fprintf(out, "\\x%02x", (unsigned)(cp & 0xff));
}

void dtl_report_put_escaped(FILE *out, const char *s)
{
	const char *p = s, *run = p;

	while (*p) {
		uint32_t cp;
		bool escape;
		size_t n = dtl_report_char_at(p, &cp, &escape);
		if (!escape) {
			p += n;
			continue;
		}
		fwrite(run, 1, (size_t)(p - run), out); /* the plain run before it, at once */
		dtl_report_put_char_escape(out, cp);
		p += n;
		run = p;
	}
	fwrite(run, 1, (size_t)(p - run), out);
}

void dtl_report_put_path(FILE *out, const char *path)
{
	if (!path)
		path = "-";
	if (path[0] == ':')
		fputs("./", out); /* a CI log reads a line that starts with "::" as a command */
	dtl_report_put_escaped(out, path);
}
