/* SPDX-License-Identifier: MIT */
/* One human line per op: where it is registered, what it is bound to, what it accepts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtypelint/core/quoted.h"
#include "kernels-private.h"

/* Names and paths come from the scanned sources and their file names: escaped as the lint's
 * text report escapes them (controls, bidi controls, invalid UTF-8 as \xNN or \u{X}), so no raw
 * ESC reaches a terminal and no line a CI log reads as a command (issue 35). */
static bool hostile_cp(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 ||
	       cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0xfeff;
}

static void put_text(FILE *out, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = dtl_utf8_sequence(s + i, n - i, &cp);
		if (len == 0) {
			fprintf(out, "\\x%02x", (unsigned char)s[i]);
			len = 1;
		} else if (hostile_cp(cp) && cp < 0x100) {
			fprintf(out, "\\x%02x", (unsigned)cp);
		} else if (hostile_cp(cp)) {
			fprintf(out, "\\u{%x}", (unsigned)cp);
		} else {
			fwrite(s + i, 1, len, out);
		}
		i += len;
	}
}

/* a path at the start of a line: "./" before a leading ':' ("::warning" is a command) */
static void put_path(FILE *out, const char *path)
{
	if (path && path[0] == ':')
		fputs("./", out);
	put_text(out, path);
}

static void put_set(FILE *out, const char *label, uint64_t set, bool *first)
{
	char buf[512];

	if (!set)
		return;
	dtl_kernels_format_dtypes(set, buf, sizeof(buf));
	fprintf(out, "%s%s [%s]", *first ? "" : "; ", label, buf);
	*first = false;
}

int dtl_kernels_write_text(FILE *out, const struct dtl_kernels *k, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};

	if (k->scanner && !k->scanner->linked)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel contracts are not linked (dtl_kernels_link)");
	for (size_t i = 0; i < k->n_contracts; i++) {
		const struct dtl_kernels_contract *c = &k->contracts[i];
		bool first = true;

		put_path(out, c->file);
		fprintf(out, ":%u: op '", c->line);
		if (c->ns) {
			put_text(out, c->ns);
			fputs("::", out);
		}
		put_text(out, c->op);
		fprintf(out, "' (%s", dtl_kernels_binding_name(c->binding));
		if (c->dispatch_key) {
			fputs(", ", out);
			put_text(out, c->dispatch_key);
		}
		fputs(") -> ", out);
		put_text(out, c->function);
		fputs(": ", out);
		put_set(out, "dispatch", c->dispatch_types, &first);
		put_set(out, "asserted", c->asserted_types, &first);
		put_set(out, "accessor", c->accessor_types, &first);
		put_set(out, "branch", c->branch_types, &first);
		put_set(out, "template", c->template_types, &first);
		if (first) {
			fprintf(out, "no dtype facts within %u calls%s\n", k->options.max_depth,
			        c->definition_file ? "" : " (function not found)");
			continue;
		}
		const struct dtl_kernels_evidence *e = c->n_evidence ? &c->evidence[0] : NULL;
		if (e) {
			fprintf(out, " (%zu fact%s, first %s at ", c->n_evidence,
			        c->n_evidence == 1 ? "" : "s", dtl_kernels_fact_kind_name(e->kind));
			put_text(out, e->file);
			fprintf(out, ":%u, depth %u)", e->line, e->call_depth);
		}
		fputc('\n', out);
	}
	if (fflush(out) != 0 || ferror(out))
		return dtl_error_set(error, nowhere, -EIO, "cannot write the kernel contracts");
	return 0;
}
