/* SPDX-License-Identifier: MIT */
/* Input-derived text on a terminal or in a CI log: control characters escaped. */
#include "dtypelint/report.h"

/* C0 (ESC, CR, LF included) and DEL; a C1 control is 0xc2 0x80-0x9f in UTF-8 */
static bool control_at(const unsigned char *p)
{
	return *p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
}

void dtl_report_put_escaped(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;

	for (; *p; p++) {
		if (!control_at(p))
			continue;
		fwrite(run, 1, (size_t)(p - run), out); /* the plain run before it, at once */
		if (*p == 0xc2)
			fprintf(out, "\\u%04x", *++p);
		else
			fprintf(out, "\\x%02x", *p);
		run = p + 1;
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
