/* SPDX-License-Identifier: MIT */
/* gcc-style text: "file:line:col: severity: message [ID name]", then indented details and one
 * note per tensor saying where its dtype came from. Every editor's problem matcher reads it.
 * Colours (when asked for) follow gcc's: bold locations, red errors, magenta warnings, cyan
 * notes and info. */
#include <errno.h>

#include "dtypelint/report.h"

#define BOLD  "\033[1m"
#define RESET "\033[0m"

static void location(FILE *out, const struct dtl_loc *loc, bool color)
{
	fprintf(out, "%s%s:%u:%u:%s ", color ? BOLD : "", loc->file ? loc->file : "-",
	        loc->line ? loc->line : 1, loc->column ? loc->column : 1, color ? RESET : "");
}

static void severity(FILE *out, const char *word, const char *colour, bool color)
{
	if (color)
		fprintf(out, "\033[1;%sm%s:" RESET " ", colour, word);
	else
		fprintf(out, "%s: ", word);
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
			fprintf(out, "%s [%s %s]\n", f->message, f->rule->id, f->rule->name);
			if (f->error_text)
				fprintf(out, "  %s raises %s: %s\n", f->error_versions,
				        f->error_when, f->error_text);
			if (f->effect && f->error_versions)
				fprintf(out, "  effect (%s): %s\n", f->error_versions, f->effect);
			else if (f->effect)
				fprintf(out, "  effect: %s\n", f->effect);
			for (size_t j = 0; j < f->note_count; j++) {
				location(out, &f->notes[j].loc, color);
				severity(out, "note", "36", color);
				fprintf(out, "%s\n", f->notes[j].text);
			}
			if (f->fix)
				fprintf(out, "  fix: %s\n", f->fix);
		}
	}
	return ferror(out) ? -EIO : 0;
}

int dtl_report_text(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_text_styled(out, inputs, n, NULL);
}
