/* SPDX-License-Identifier: MIT */
/* gcc-style text: "file:line:col: severity: message [ID name]", then indented details and one
 * note per tensor saying where its dtype came from. Every editor's problem matcher reads it.
 * Colours (when asked for) follow gcc's: bold locations, red errors, magenta warnings, cyan
 * notes and info. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The notes of f: all with verbose; else the first about a tensor (where the offending dtype
 * came from), with a count of the others. The folded groups are named in the message. */
static void notes(FILE *out, const struct dtl_finding *f, bool color, bool verbose)
{
	size_t shown = 0, hidden = 0;
	const struct dtl_note *last = NULL;

	for (size_t j = 0; j < f->note_count; j++) {
		const struct dtl_note *note = &f->notes[j];
		if (!verbose && (shown || note->same_way)) {
			hidden++;
			continue;
		}
		if (last)
			line(out, "", last->text);
		location(out, &note->loc, color);
		severity(out, "note", "36", color);
		last = note;
		shown++;
	}
	if (!last)
		return;
	dtl_report_put_escaped(out, last->text);
	if (hidden)
		fprintf(out, " (%zu more note%s: --verbose)", hidden, hidden == 1 ? "" : "s");
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

const char *dtl_report_group_kind(enum dtl_group_kind kind)
{
	switch (kind) {
	case DTL_GROUP_FSDP1_UNIT:
		return "FSDP1 unit";
	case DTL_GROUP_FSDP2_GROUP:
		return "FSDP2 group";
	case DTL_GROUP_ZERO3_PERSISTENT:
		return "ZeRO-3 persistent set";
	case DTL_GROUP_ZERO3_TRAINABLE:
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

/* The columns a byte takes on a terminal: none for a UTF-8 continuation byte (the lines are
 * escaped: no control character but the colours' ESC sequences, skipped by the caller). */
static unsigned byte_columns(unsigned char b)
{
	return (b & 0xC0) == 0x80 ? 0 : 1;
}

/* The length of the ESC [ ... m sequence at p (0: none). */
static size_t csi_length(const char *p, const char *end)
{
	const char *q = p + 2;

	if (end - p < 2 || p[0] != '\033' || p[1] != '[')
		return 0;
	while (q < end && !(*q >= 0x40 && *q <= 0x7E))
		q++;
	return q < end ? (size_t)(q + 1 - p) : (size_t)(end - p);
}

/* Where a line that starts at column col must break to fit width: after the last space that
 * fits (the space itself is dropped) when at_space, else at the width; end when it all fits. */
static const char *break_point(const char *p, const char *end, unsigned col, unsigned width,
                               bool at_space, const char **ret_resume)
{
	const char *space = NULL;

	for (const char *q = p; q < end;) {
		size_t csi = csi_length(q, end);
		if (csi) {
			q += csi;
			continue;
		}
		unsigned w = byte_columns((unsigned char)*q);
		if (w && col + w > width) {
			*ret_resume = space ? space + 1 : q;
			return space ? space : q;
		}
		if (at_space && *q == ' ' && q > p)
			space = q;
		col += w;
		q++;
	}
	*ret_resume = end;
	return end;
}

/* One line to a terminal: wrapped at spaces to width, the rest indented by four columns under
 * it (cut: the first row only, ended by an ellipsis). */
static void fit_line(FILE *out, const char *p, const char *end, unsigned width, bool cut)
{
	unsigned col = 0;
	bool styled = memchr(p, '\033', (size_t)(end - p)) != NULL;

	while (p < end) {
		const char *resume;
		const char *stop = break_point(p, end, col, cut ? width - 1 : width, !cut, &resume);
		/* no progress (a word wider than the line): take one byte so that it ends */
		if (stop == p && resume == p)
			stop = resume = p + 1;
		fwrite(p, 1, (size_t)(stop - p), out);
		if (resume == end)
			break;
		if (cut) {
			fputs(styled ? "\u2026" RESET : "\u2026", out);
			break;
		}
		fputs("\n    ", out);
		col = 4;
		p = resume;
	}
	putc('\n', out);
}

/* text as written, each line fitted to width */
static int fit_lines(FILE *out, const char *text, size_t size, unsigned width, bool cut)
{
	const char *end = text + size;

	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		fit_line(out, p, stop, width, cut);
		p = nl ? nl + 1 : end;
	}
	return ferror(out) ? -EIO : 0;
}

/* Writes the report through write, straight to out when no width is set, else into memory
 * and then fitted line by line (wrapped for text, cut for concise). */
static int fitted(FILE *out, const struct dtl_report_input *inputs, size_t n,
                  const struct dtl_report_options *options, bool cut,
                  int (*write)(FILE *, const struct dtl_report_input *, size_t,
                               const struct dtl_report_options *))
{
	unsigned width = options ? options->width : 0;
	char *text = NULL;
	size_t size = 0;

	/* fewer than 20 columns: wrapping would make a column of words, not lines */
	if (width < 20)
		return write(out, inputs, n, options);
	FILE *mem = open_memstream(&text, &size);
	if (!mem)
		return -ENOMEM;
	int r = write(mem, inputs, n, options);
	if (fclose(mem) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0)
		r = fit_lines(out, text, size, width, cut);
	free(text);
	return r;
}

/* the header of a finding: "file:line:col: severity: message [ID name]" */
static void header(FILE *out, const struct dtl_finding *f, bool color)
{
	location(out, &f->loc, color);
	severity(out, dtl_severity_name(f->severity), severity_colour(f->severity), color);
	dtl_report_put_escaped(out, f->message);
	fputs(" [", out);
	fputs(f->rule->id, out);
	putc(' ', out);
	fputs(f->rule->name, out);
	fputs("]\n", out);
}

static int write_concise(FILE *out, const struct dtl_report_input *inputs, size_t n,
                         const struct dtl_report_options *options)
{
	bool color = options && options->color;

	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *findings = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++)
			header(out, &findings[k], color);
	}
	return ferror(out) ? -EIO : 0;
}

int dtl_report_concise(FILE *out, const struct dtl_report_input *inputs, size_t n,
                       const struct dtl_report_options *options)
{
	return fitted(out, inputs, n, options, true, write_concise);
}

/* "a, b, c" as "a, b or c" */
static void put_list(FILE *out, const char *list)
{
	const char *comma = strrchr(list, ',');
	char head[256];

	if (!comma) {
		dtl_report_put_escaped(out, list);
		return;
	}
	snprintf(head, sizeof(head), "%.*s", (int)(comma - list), list);
	dtl_report_put_escaped(out, head);
	fputs(" or", out);
	dtl_report_put_escaped(out, comma + 1);
}

/* ", not with hf-trainer or trl-sft: no input names the trainer; `trainer: hf-trainer` in the
 * plan avoids it" */
static void assumption(FILE *out, const struct dtl_finding_range *r)
{
	fputs(", not with ", out);
	put_list(out, r->not_with);
	fputs(": no input names the ", out);
	dtl_report_put_escaped(out, r->name);
	if (r->avoided_by) {
		fputs("; `", out);
		dtl_report_put_escaped(out, r->avoided_by);
		fputs("` in the plan avoids it", out);
	}
	fputc('\n', out);
}

/* "fails with deepspeed 0.18–0.19.2, which requirements.txt:2:1 allows (>=0.18);
 * `deepspeed>=0.19.3` avoids it": where the finding fires among the versions allowed */
static void ranges(FILE *out, const struct dtl_finding *f)
{
	for (size_t i = 0; i < f->range_count; i++) {
		const struct dtl_finding_range *r = &f->ranges[i];
		fputs(f->error_text ? "  fails with " : "  fires with ", out);
		dtl_report_put_escaped(out, r->name);
		fputc(' ', out);
		if (r->not_with) {
			put_list(out, r->fires);
			assumption(out, r);
			continue;
		}
		dtl_report_put_escaped(out, r->fires);
		fputs(", which ", out);
		dtl_report_put_escaped(out, r->allowed_at);
		fputs(" allows (", out);
		dtl_report_put_escaped(out, r->allowed);
		fputc(')', out);
		if (r->avoided_by) {
			fputs("; `", out);
			dtl_report_put_escaped(out, r->avoided_by);
			fputs("` avoids it", out);
		}
		fputc('\n', out);
	}
}

static int write_text(FILE *out, const struct dtl_report_input *inputs, size_t n,
                      const struct dtl_report_options *options)
{
	bool color = options && options->color;

	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *findings = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			const struct dtl_finding *f = &findings[k];
			header(out, f, color);
			if (f->error_text) {
				fprintf(out, "  %s raises %s: ", dtl_report_raiser(f),
				        dtl_report_when(f));
				line(out, "", f->error_text);
			}
			bool verbose = options && options->verbose;
			/* an info finding predicts nothing by itself (issue 36): its effect and
			 * where it fires are context for the error it explains, shown with
			 * --verbose; JSON and SARIF always carry them */
			bool context = verbose || f->severity != DTL_SEVERITY_INFO;
			if (context && f->effect && f->error_versions) {
				fprintf(out, "  effect (%s): ", f->error_versions);
				line(out, "", f->effect);
			} else if (context && f->effect)
				line(out, "  effect: ", f->effect);
			if (context)
				ranges(out, f);
			notes(out, f, color, verbose);
			if (f->fix)
				line(out, "  fix: ", f->fix);
		}
	}
	return ferror(out) ? -EIO : 0;
}

int dtl_report_text_styled(FILE *out, const struct dtl_report_input *inputs, size_t n,
                           const struct dtl_report_options *options)
{
	return fitted(out, inputs, n, options, false, write_text);
}

int dtl_report_text(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_text_styled(out, inputs, n, NULL);
}
