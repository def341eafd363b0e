/* SPDX-License-Identifier: MIT */
/*
 * GitHub Actions workflow commands
 * (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands):
 *   ::error file=F,line=L,col=C,title=DT101 name::F:L:C: message [DT101]%0A...
 * escaped as actions/toolkit's command.ts does. GitHub turns at most 10 errors, 10 warnings
 * and 10 notices of a step into annotations, so the most severe come first, at most 10 per
 * level are commands, the rest are plain log lines, and one notice (which the info findings
 * leave room for) says how many were not annotated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report-private.h"

#define PER_LEVEL 10

void dtl_report_github_escape(FILE *out, const char *s, bool property)
{
	for (const char *p = s ? s : ""; *p; p++) {
		uint32_t cp;
		bool escape;
		size_t n;
		switch (*p) {
		case '%':
			fputs("%25", out);
			break;
		case '\r':
			fputs("%0D", out);
			break;
		case '\n':
			fputs("%0A", out);
			break;
		case ':':
			fputs(property ? "%3A" : ":", out);
			break;
		case ',':
			fputs(property ? "%2C" : ",", out);
			break;
		default:
			/* other controls from the inputs (ESC, C1) and invalid UTF-8 must not reach
			 * the log raw */
			n = dtl_report_char_at(p, &cp, &escape);
			if (escape)
				dtl_report_put_char_escape(out, cp);
			else
				fwrite(p, 1, n, out);
			p += n - 1;
		}
	}
}

static const char *command(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR ? "error" : s == DTL_SEVERITY_WARNING ? "warning" : "notice";
}

/* The message of an annotation: the text line, then the details, LF-separated (escaped). */
static void annotation_message(FILE *out, const struct dtl_report_item *it)
{
	const struct dtl_finding *f = it->finding;
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);

	if (!mem) {
		dtl_report_github_escape(out, f->message, false);
		return;
	}
	fprintf(mem, "%s:%u:%u: %s [%s]", it->path, f->loc.line ? f->loc.line : 1,
	        f->loc.column ? f->loc.column : 1, f->message, f->rule->id);
	if (f->error_text)
		fprintf(mem, "\n%s raises %s: %s", dtl_report_raiser(f), dtl_report_when(f),
		        f->error_text);
	if (f->effect)
		fprintf(mem, "\neffect: %s", f->effect);
	for (size_t k = 0; k < f->note_count; k++) {
		const struct dtl_loc *l = &f->notes[k].loc;
		fprintf(mem, "\nnote: %s:%u:%u: %s", l->file ? l->file : "-", l->line, l->column,
		        f->notes[k].text);
	}
	if (f->fix)
		fprintf(mem, "\nfix: %s", f->fix);
	if (fclose(mem) != 0) {
		free(text);
		dtl_report_github_escape(out, f->message, false);
		return;
	}
	dtl_report_github_escape(out, text, false);
	free(text);
}

static void annotate(FILE *out, const struct dtl_report_item *it)
{
	const struct dtl_finding *f = it->finding;
	char title[256];

	snprintf(title, sizeof(title), "%s %s", f->rule->id, f->rule->name);
	fprintf(out, "::%s file=", command(f->severity));
	dtl_report_github_escape(out, it->path, true);
	fprintf(out, ",line=%u,col=%u,title=", f->loc.line ? f->loc.line : 1,
	        f->loc.column ? f->loc.column : 1);
	dtl_report_github_escape(out, title, true);
	fputs("::", out);
	annotation_message(out, it);
	fputc('\n', out);
}

static void plain(FILE *out, const struct dtl_report_item *it)
{
	const struct dtl_finding *f = it->finding;

	/* a line that is no workflow command: it must not start with "::" (a file may be named
	 * "::warning ...::x.yaml"), and no control character may start another line */
	dtl_report_put_path(out, it->path);
	fprintf(out, ":%u:%u: %s: ", f->loc.line ? f->loc.line : 1,
	        f->loc.column ? f->loc.column : 1, dtl_severity_name(f->severity));
	dtl_report_put_escaped(out, f->message);
	fprintf(out, " [%s %s]\n", f->rule->id, f->rule->name);
}

int dtl_report_github(FILE *out, const struct dtl_report_input *inputs, size_t n,
                      const struct dtl_report_options *options)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	size_t count, per[3] = {0, 0, 0}, limit[3], shown[3] = {0, 0, 0}, hidden = 0;
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items_at(&arena, inputs, n, options ? options->root : NULL, &items, &count);
	if (r < 0)
		goto done;
	for (size_t i = 0; i < count; i++)
		per[items[i].finding->severity]++;
	limit[DTL_SEVERITY_ERROR] = PER_LEVEL;
	limit[DTL_SEVERITY_WARNING] = PER_LEVEL;
	limit[DTL_SEVERITY_INFO] = PER_LEVEL;
	bool overflow = per[DTL_SEVERITY_ERROR] > PER_LEVEL ||
	                per[DTL_SEVERITY_WARNING] > PER_LEVEL || per[DTL_SEVERITY_INFO] > PER_LEVEL;
	if (overflow)
		limit[DTL_SEVERITY_INFO] = PER_LEVEL - 1; /* room for the overflow notice */
	/* most severe first, each level in report order */
	for (int s = DTL_SEVERITY_ERROR; s >= DTL_SEVERITY_INFO; s--) {
		for (size_t i = 0; i < count; i++) {
			if ((int)items[i].finding->severity != s)
				continue;
			if (shown[s] < limit[s]) {
				annotate(out, &items[i]);
				shown[s]++;
			} else {
				plain(out, &items[i]);
				hidden++;
			}
		}
	}
	if (hidden)
		fprintf(out,
		        "::notice title=dtypelint::%zu more finding%s (%zu error%s, %zu warning%s, "
		        "%zu info) not annotated: GitHub annotates at most %d per level and step. "
		        "They are listed in this log.\n",
		        hidden, hidden == 1 ? "" : "s",
		        per[DTL_SEVERITY_ERROR] - shown[DTL_SEVERITY_ERROR],
		        per[DTL_SEVERITY_ERROR] - shown[DTL_SEVERITY_ERROR] == 1 ? "" : "s",
		        per[DTL_SEVERITY_WARNING] - shown[DTL_SEVERITY_WARNING],
		        per[DTL_SEVERITY_WARNING] - shown[DTL_SEVERITY_WARNING] == 1 ? "" : "s",
		        per[DTL_SEVERITY_INFO] - shown[DTL_SEVERITY_INFO], PER_LEVEL);
	r = ferror(out) ? -EIO : 0;
done:
	dtl_arena_fini(&arena);
	return r;
}
