/* SPDX-License-Identifier: MIT */
/*
 * Markdown for a GitHub job summary ($GITHUB_STEP_SUMMARY) or a pull-request comment: a
 * headline verdict, one section per finding (framework error, the tensors in a table, the
 * fix) and the versions assumed. GitHub renders the HTML inside Markdown, so every string
 * from an input is escaped for both: HTML's specials as entities, Markdown's punctuation with
 * a backslash, controls written out as \xNN. GitHub takes at most 1 MiB per step summary: the
 * findings that would not fit are counted, not shown.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dtl-config.h"
#include "report-private.h"

/* GitHub's limit of one step's summary (docs.github.com, "Adding a job summary") */
#define SUMMARY_LIMIT ((size_t)1 << 20)
/* the room kept for the truncation note and the closing line */
#define TAIL_RESERVE ((size_t)2048)
/* tensors and notes listed per finding; the rest are counted */
#define TABLE_ROWS 20
#define NOTE_ROWS  20

/* Writes s so that Markdown and the HTML inside it show its characters as they are: no tag,
 * entity, link, emphasis, table cell, math or code span can start from an input ('[' is
 * escaped, so '(' needs not be). The layout never starts a line with input text, so block
 * markers (#, -, 1.) need no escape. Nothing in it may link or notify either: GFM's autolink
 * extension links e-mail addresses after entities are decoded, and GitHub finds @-mentions and
 * #-references in the rendered text outside <code>, so '@' and '#' go in a code span of their
 * own; "://" and "www." lose the raw ':' and '.' that start a URL autolink. */
static void md_put(FILE *out, const char *s)
{
	const char *start = s ? s : "";
	for (const char *p = start; *p;) {
		uint32_t cp;
		bool escape;
		size_t n = dtl_report_char_at(p, &cp, &escape);
		if (escape) {
			putc('\\', out); /* "\\x0a": Markdown shows one backslash */
			dtl_report_put_char_escape(out, cp);
		} else if (*p == '&') {
			fputs("&amp;", out);
		} else if (*p == '<') {
			fputs("&lt;", out);
		} else if (*p == '>') {
			fputs("&gt;", out);
		} else if (*p == '"') {
			fputs("&quot;", out);
		} else if (*p == '\'') {
			fputs("&#39;", out);
		} else if (*p == '@' || *p == '#') {
			fprintf(out, "`%c`", *p);
		} else if (*p == ':' && strncmp(p + 1, "//", 2) == 0) {
			fputs("&#58;", out);
		} else if (*p == '.' && p - start >= 3 && strncasecmp(p - 3, "www", 3) == 0) {
			fputs("&#46;", out);
		} else if (strchr("\\`*_[]|~$", *p)) {
			putc('\\', out);
			putc(*p, out);
		} else {
			fwrite(p, 1, n, out);
		}
		p += n;
	}
}

/* The longest run of backticks in s: a code span's fence must be longer. */
static size_t backtick_run(const char *s)
{
	size_t longest = 0, run = 0;
	for (; *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	return longest;
}

/* Writes s as a Markdown code span: inside one, nothing is a link, a mention, a reference,
 * emphasis or HTML, and a renderer shows the bytes as they are. Only controls (as \xNN) and,
 * in a table cell, '|' (GFM splits cells before it parses spans) are escaped. A span that
 * starts or ends with a backtick or a space is padded, as one space each side is stripped. */
static void md_code_in(FILE *out, const char *s, bool in_table)
{
	s = s ? s : "";
	if (!*s) {
		fputs("<code></code>", out);
		return;
	}
	size_t fence = backtick_run(s) + 1, len = strlen(s);
	bool pad = s[0] == '`' || s[0] == ' ' || s[len - 1] == '`' || s[len - 1] == ' ';
	for (size_t k = 0; k < fence; k++)
		putc('`', out);
	if (pad)
		putc(' ', out);
	for (const char *p = s; *p;) {
		uint32_t cp;
		bool escape;
		size_t n = dtl_report_char_at(p, &cp, &escape);
		if (escape)
			dtl_report_put_char_escape(out, cp);
		else if (*p == '|' && in_table)
			fputs("\\|", out);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
	if (pad)
		putc(' ', out);
	for (size_t k = 0; k < fence; k++)
		putc('`', out);
}

static void md_code(FILE *out, const char *s)
{
	md_code_in(out, s, false);
}

static void md_cell(FILE *out, const char *s)
{
	md_code_in(out, s, true);
}

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static const char *severity_mark(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR     ? "\u274c"
	       : s == DTL_SEVERITY_WARNING ? "\u26a0\ufe0f"
	                                   : "\u2139\ufe0f";
}

static void tensor_row(FILE *out, const struct dtl_finding_tensor *t)
{
	fputs("| ", out);
	md_cell(out, t->name);
	fprintf(out, " | %s | %s | ", dtl_dtype_name(t->dtype),
	        t->kind == DTL_KIND_BUFFER        ? "buffer"
	        : t->kind == DTL_KIND_QUANT_STATE ? "quantization state"
	        : (t->flags & DTL_TF_TRAINABLE)   ? "yes"
	                                          : "no");
	dtl_report_put_shape(out, t->shape, t->rank, t->numel, "?");
	fputs(" | ", out);
	for (size_t e = 0; e < t->step_count; e++) {
		if (e)
			fputs(" \u2192 ", out);
		fprintf(out, "%s: ", t->steps[e].name);
		md_put(out, t->steps[e].reason);
	}
	fputs(" |\n", out);
}

static void finding(FILE *out, const struct dtl_report_item *it)
{
	const struct dtl_finding *f = it->finding;
	const struct dtl_finding_group *g = f->view.group;

	fprintf(out, "### %s %s %s (%s)\n\n", severity_mark(f->severity), f->rule->id,
	        f->rule->name, dtl_severity_name(f->severity));
	fputs("**", out);
	md_put(out, f->message);
	fputs("**\n\n", out);
	md_code(out, it->path);
	fprintf(out, ":%u:%u", f->loc.line ? f->loc.line : 1, f->loc.column ? f->loc.column : 1);
	if (g) {
		fprintf(out, " \u00b7 %s ", dtl_report_group_kind(g->kind));
		if (g->module != DTL_NONE_INDEX) { /* a ZeRO-3 set's name is its kind */
			md_code(out, g->name);
			fputc(' ', out);
		}
		fprintf(out, "(%zu tensor%s)", g->size, plural(g->size));
	}
	fputs("\n\n", out);
	if (f->error_text) {
		fputs("**Framework error**: ", out);
		md_put(out, dtl_report_raiser(f));
		fputs(" raises ", out);
		md_put(out, dtl_report_when(f));
		fputs(":\n\n> ", out);
		md_code(out, f->error_text);
		fputs("\n\n", out);
	}
	if (f->effect) {
		fputs("**Effect**", out);
		if (f->error_versions) {
			fputs(" (", out);
			md_put(out, f->error_versions);
			fputc(')', out);
		}
		fputs(": ", out);
		md_put(out, f->effect);
		fputs("\n\n", out);
	}
	if (f->view.tensors && f->tensor_count) {
		fputs("| tensor | dtype | trainable | shape | how it got its dtype |\n"
		      "| --- | --- | --- | --- | --- |\n",
		      out);
		for (size_t k = 0; k < f->tensor_count && k < TABLE_ROWS; k++)
			tensor_row(out, &f->view.tensors[k]);
		if (f->tensor_count > TABLE_ROWS)
			fprintf(out, "| \u2026 and %zu more | | | | |\n",
			        f->tensor_count - TABLE_ROWS);
		fputc('\n', out);
	}
	size_t notes = 0;
	for (size_t k = 0; k < f->note_count; k++) {
		if (f->notes[k].tensor != DTL_NONE_INDEX)
			continue; /* the tensor's row says it */
		if (++notes > NOTE_ROWS)
			continue;
		fputs("- note: ", out);
		md_put(out, f->notes[k].text);
		fputc('\n', out);
	}
	if (notes > NOTE_ROWS)
		fprintf(out, "- \u2026 and %zu more note%s\n", notes - NOTE_ROWS,
		        plural(notes - NOTE_ROWS));
	if (notes)
		fputc('\n', out);
	if (f->fix) {
		fputs("**Fix**: ", out);
		md_put(out, f->fix);
		fputs("\n\n", out);
	}
}

/* the frameworks the table has a column for: those any input reports */
static void shown_columns(const struct dtl_report_input *inputs, size_t n, bool shown[DTL_FW_COUNT])
{
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		shown[fw] = false;
		for (size_t i = 0; i < n && !shown[fw]; i++)
			shown[fw] = inputs[i].view && dtl_report_version_shown(inputs[i].view, fw);
	}
}

static void versions(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	bool any = false, assumed = false, shown[DTL_FW_COUNT];

	shown_columns(inputs, n, shown);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_view *view = inputs[i].view;
		if (!view)
			continue;
		if (!any) {
			fputs("### Versions assumed\n\n| input |", out);
			for (int fw = 0; fw < DTL_FW_COUNT; fw++)
				if (shown[fw])
					fprintf(out, " %s |", dtl_framework_name(fw));
			fputs("\n| --- |", out);
			for (int fw = 0; fw < DTL_FW_COUNT; fw++)
				if (shown[fw])
					fputs(" --- |", out);
			fputc('\n', out);
			any = true;
		}
		fputs("| ", out);
		md_cell(out, view->manifest->file ? view->manifest->file : "-");
		fputs(" |", out);
		for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
			char v[32];
			if (!shown[fw])
				continue;
			fputc(' ', out);
			md_put(out, dtl_version_format(&view->rp.plan->versions[fw], v, sizeof(v)));
			if (view->rp.version_assumed[fw]) {
				fputs("\\*", out);
				assumed = true;
			}
			fputs(" |", out);
		}
		fputc('\n', out);
	}
	if (assumed)
		fputs(
		    "\n\\* not given by the plan or `--with`: the newest version dtypelint knows\n",
		    out);
	if (any)
		fputc('\n', out);
}

/* The text a callback writes, in memory (NULL when memory runs out). */
struct buffer {
	char *data;
	size_t size;
	FILE *mem;
};

static FILE *buffer_open(struct buffer *b)
{
	*b = (struct buffer){0};
	b->mem = open_memstream(&b->data, &b->size);
	return b->mem;
}

static int buffer_close(struct buffer *b)
{
	int r = fclose(b->mem) == 0 ? 0 : -ENOMEM;
	b->mem = NULL;
	return r;
}

int dtl_report_markdown(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	struct dtl_report_counts c;
	struct buffer tail = {0}, section = {0};
	size_t count, used = 0, shown = 0, left[3] = {0, 0, 0};
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items(&arena, inputs, n, &items, &count);
	if (r < 0)
		goto done;
	dtl_report_count(inputs, n, &c);
	if (c.errors)
		used +=
		    (size_t)fprintf(out, "## \u274c dtypelint: %zu error%s would stop this run\n\n",
		                    c.errors, plural(c.errors));
	else
		used +=
		    (size_t)fprintf(out, "## \u2705 dtypelint: no error would stop this run\n\n");
	used += (size_t)fprintf(
	    out, "%zu error%s, %zu warning%s, %zu info in %zu file%s (dtypelint %s)\n\n", c.errors,
	    plural(c.errors), c.warnings, plural(c.warnings), c.infos, n, plural(n), DTL_VERSION);

	r = -ENOMEM;
	if (!buffer_open(&tail))
		goto done;
	versions(tail.mem, inputs, n);
	if (buffer_close(&tail) < 0)
		goto done;
	/* many inputs: their versions give way to the findings past half the limit */
	size_t tail_size = tail.size < SUMMARY_LIMIT / 2 ? tail.size : 0;
	/* most severe first, each level in report order */
	for (int s = DTL_SEVERITY_ERROR; s >= DTL_SEVERITY_INFO; s--) {
		for (size_t i = 0; i < count; i++) {
			if ((int)items[i].finding->severity != s)
				continue;
			if (used + tail_size + TAIL_RESERVE < SUMMARY_LIMIT) {
				if (!buffer_open(&section))
					goto done;
				finding(section.mem, &items[i]);
				if (buffer_close(&section) < 0)
					goto done;
				if (used + section.size + tail_size + TAIL_RESERVE <=
				    SUMMARY_LIMIT) {
					fwrite(section.data, 1, section.size, out);
					used += section.size;
					shown++;
					free(section.data);
					section.data = NULL;
					continue;
				}
				free(section.data);
				section.data = NULL;
			}
			left[s]++;
		}
	}
	if (shown < count)
		fprintf(out,
		        "**%zu more finding%s not shown** (%zu error%s, %zu warning%s, %zu info): "
		        "GitHub takes at most 1 MiB per step summary. `-f text` or `-f json` "
		        "lists them all.\n\n",
		        count - shown, plural(count - shown), left[DTL_SEVERITY_ERROR],
		        plural(left[DTL_SEVERITY_ERROR]), left[DTL_SEVERITY_WARNING],
		        plural(left[DTL_SEVERITY_WARNING]), left[DTL_SEVERITY_INFO]);
	if (tail_size)
		fwrite(tail.data, 1, tail.size, out);
	else if (tail.size)
		fprintf(out,
		        "Versions of %zu input%s not shown: GitHub takes at most 1 MiB per step "
		        "summary.\n",
		        n, plural(n));
	r = ferror(out) ? -EIO : 0;
done:
	if (section.mem)
		fclose(section.mem);
	free(section.data);
	if (tail.mem)
		fclose(tail.mem);
	free(tail.data);
	dtl_arena_fini(&arena);
	return r;
}
