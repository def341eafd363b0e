/* SPDX-License-Identifier: MIT */
/* Input-derived text on a terminal or in a CI log: control characters escaped. */
#include "report-private.h"

void dtl_report_put_escaped(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p); /* C0 (ESC included) and DEL */
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			fprintf(out, "\\u%04x", *++p); /* C1, as UTF-8 */
		else
			fputc(*p, out);
	}
}
