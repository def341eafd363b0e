/* SPDX-License-Identifier: MIT */
/* gcc-style text: "file:line:col: severity: message [ID name]", then indented details and one
 * note per tensor saying where its dtype came from. Every editor's problem matcher reads it.
 * Colours (when asked for) follow gcc's: bold locations, red errors, magenta warnings, cyan
 * notes and info. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "report-private.h"

#define BOLD  "\033[1m"
#define RESET "\033[0m"

/* Findings come by the thousand (a pattern list gone stale): the lines are put piece by
 * piece, with no format string to parse. */
static void put_uint(FILE *out, unsigned v)
{
	char digits[12];
	size_t n = sizeof(digits);

	do
		digits[--n] = (char)('0' + v % 10);
	while (v /= 10);
	fwrite(digits + n, 1, sizeof(digits) - n, out);
}

static void location(FILE *out, const struct dtl_loc *loc, bool color)
{
	if (color)
		fputs(BOLD, out);
	dtl_report_put_path(out, loc->file);
	putc(':', out);
	put_uint(out, loc->line ? loc->line : 1);
	putc(':', out);
	put_uint(out, loc->column ? loc->column : 1);
	putc(':', out);
	if (color)
		fputs(RESET, out);
	putc(' ', out);
}

static void severity(FILE *out, const char *word, const char *colour, bool color)
{
	if (color) {
		fputs("\033[1;", out);
		fputs(colour, out);
		putc('m', out);
	}
	fputs(word, out);
	putc(':', out);
	if (color)
		fputs(RESET, out);
	putc(' ', out);
}

/* "<lead><text>\n", text escaped (names, paths and values in it come from the inputs) */
static void line(FILE *out, const char *lead, const char *text)
{
	fputs(lead, out);
	dtl_report_put_escaped(out, text);
	putc('\n', out);
}

static const char *severity_colour(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR ? "31" : s == DTL_SEVERITY_WARNING ? "35" : "36";
}

void dtl_report_count(const struct dtl_report_input *inputs, size_t n, struct dtl_report_counts *c)
{
	*c = (struct dtl_report_counts){0};
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			c->findings++;
			if (f[k].severity == DTL_SEVERITY_ERROR)
				c->errors++;
			else if (f[k].severity == DTL_SEVERITY_WARNING)
				c->warnings++;
			else
				c->infos++;
		}
	}
}

const char *dtl_report_group_kind(enum dtl_view_group_kind kind)
{
	switch (kind) {
	case DTL_VIEW_FSDP1_UNIT:
		return "FSDP1 unit";
	case DTL_VIEW_FSDP2_GROUP:
		return "FSDP2 group";
	case DTL_VIEW_ZERO3_PERSISTENT:
		return "ZeRO-3 persistent set";
	case DTL_VIEW_ZERO3_TRAINABLE:
		return "ZeRO-3 trainable set";
	}
	return "group";
}

void dtl_report_put_shape(FILE *out, const int64_t *shape, uint32_t rank, int64_t numel,
                          const char *unknown)
{
	if (shape) {
		fputc('[', out);
		for (uint32_t k = 0; k < rank; k++)
			fprintf(out, "%s%" PRId64, k ? ", " : "", shape[k]);
		fputc(']', out);
	} else if (numel >= 0) {
		fprintf(out, "numel %" PRId64, numel);
	} else {
		fputs(unknown, out);
	}
}

int dtl_report_text_styled(FILE *out, const struct dtl_report_input *inputs, size_t n,
                           const struct dtl_report_options *options)
{
	bool color = options && options->color;

	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *findings = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			const struct dtl_finding *f = &findings[k];
			location(out, &f->loc, color);
			severity(out, dtl_severity_name(f->severity), severity_colour(f->severity),
			         color);
			dtl_report_put_escaped(out, f->message);
			fputs(" [", out);
			fputs(f->rule->id, out);
			putc(' ', out);
			fputs(f->rule->name, out);
			fputs("]\n", out);
			if (f->error_text) {
				fprintf(out, "  %s raises %s: ", dtl_report_raiser(f),
				        dtl_report_when(f));
				line(out, "", f->error_text);
			}
			if (f->effect && f->error_versions) {
				fprintf(out, "  effect (%s): ", f->error_versions);
				line(out, "", f->effect);
			} else if (f->effect)
				line(out, "  effect: ", f->effect);
			for (size_t j = 0; j < f->note_count; j++) {
				location(out, &f->notes[j].loc, color);
				severity(out, "note", "36", color);
				line(out, "", f->notes[j].text);
			}
			if (f->fix)
				line(out, "  fix: ", f->fix);
		}
	}
	return ferror(out) ? -EIO : 0;
}

int dtl_report_text(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_text_styled(out, inputs, n, NULL);
}
