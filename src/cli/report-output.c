/* SPDX-License-Identifier: MIT */
/*
 * What a run prints besides errors: the report in its format (to standard output or -o FILE,
 * written whole or not at all), the --memory table, --trace, the baseline --write-baseline
 * writes, and the summary line on standard error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli-run.h"
#include "dtypelint/core/atomic-file.h"

/* Line ends of the files findings point into, for SARIF regions. */
struct line_ends {
	struct dtl_arena *arena;
	struct dtl_vec files; /* struct line_file */
};

struct line_file {
	const char *path;
	uint32_t *ends; /* ends[l - 1]: the column past line l's last character */
	size_t count;
};

static int index_lines(struct line_ends *le, const char *path, struct line_file *lf)
{
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_vec ends = {0};
	uint32_t column = 1;

	lf->path = path;
	dtl_limits_default(&limits);
	if (dtl_source_read(&source, path, &limits, NULL) < 0)
		return 0; /* no ends: the reporter marks one character */
	for (size_t i = 0; i <= source.size; i++) {
		char ch = i < source.size ? source.data[i] : '\n';
		if (ch == '\n') {
			uint32_t *slot = dtl_vec_push(&ends, le->arena, sizeof(*slot));
			if (!slot) {
				dtl_source_fini(&source);
				return -ENOMEM;
			}
			*slot = column;
			column = 1;
		} else if (ch != '\r' && ((unsigned char)ch & 0xc0) != 0x80) {
			column++;
		}
	}
	dtl_source_fini(&source);
	lf->ends = ends.items;
	lf->count = ends.count;
	return 0;
}

static uint32_t line_end(void *data, const char *file, uint32_t line)
{
	struct line_ends *le = data;
	struct line_file *files = le->files.items, *lf = NULL;

	for (size_t i = 0; i < le->files.count && !lf; i++)
		if (strcmp(files[i].path, file) == 0)
			lf = &files[i];
	if (!lf) {
		lf = dtl_vec_push(&le->files, le->arena, sizeof(*lf));
		if (!lf || index_lines(le, file, lf) < 0)
			return 0;
	}
	return line >= 1 && line <= lf->count ? lf->ends[line - 1] : 0;
}

static bool env_set(const char *name)
{
	const char *value = getenv(name);
	return value && *value;
}

/* --color wins over the environment; then https://no-color.org (a non-empty NO_COLOR: off)
 * wins over the variables that force colour for CI logs that render ANSI: FORCE_COLOR
 * (https://force-color.org: non-empty, whatever its value) and CLICOLOR_FORCE (non-empty and
 * not "0", https://bixense.com/clicolors); a forced colour ignores TERM=dumb. */
static bool use_color(const struct dtl_options *o, FILE *out)
{
	const char *term = getenv("TERM"), *clicolor_force = getenv("CLICOLOR_FORCE");

	if ((o->format != DTL_FORMAT_TEXT && o->format != DTL_FORMAT_CONCISE) || o->statistics ||
	    o->color == DTL_COLOR_NEVER)
		return false;
	if (o->color == DTL_COLOR_ALWAYS)
		return true;
	if (env_set("NO_COLOR"))
		return false;
	if (env_set("FORCE_COLOR") || (env_set("CLICOLOR_FORCE") && strcmp(clicolor_force, "0")))
		return true;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return isatty(fileno(out));
}

/* The columns of the terminal that out is, or 0 (a file, a pipe: lines stay whole, so that
 * grep and editors see each finding on its line). */
static unsigned terminal_width(FILE *out)
{
	struct winsize ws;

	if (!isatty(fileno(out)))
		return 0;
	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *columns = getenv("COLUMNS");
	long v = columns ? strtol(columns, NULL, 10) : 0;
	return v > 0 && v < 100000 ? (unsigned)v : 80;
}

/* The nearest folder from the working directory up that holds .git (a folder, or a file for
 * a worktree or submodule), into buf; NULL when none does. */
static const char *git_root(char *buf, size_t size)
{
	struct stat st;

	if (!getcwd(buf, size))
		return NULL;
	for (;;) {
		size_t len = strlen(buf);
		if (len + sizeof("/.git") > size)
			return NULL;
		memcpy(buf + len, "/.git", sizeof("/.git"));
		bool found = stat(buf, &st) == 0;
		buf[len] = '\0';
		if (found)
			return buf;
		char *slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return NULL;
		*slash = '\0';
	}
}

/* What the paths of a CI format are relative to, whichever subfolder dtypelint runs from: the
 * folder the CI system names (GitHub Actions' GITHUB_WORKSPACE for SARIF and annotations,
 * GitLab's CI_PROJECT_DIR for Code Quality and SARIF), else the repository root, else the
 * working directory (NULL). */
static const char *report_root(const struct dtl_options *o, char *buf, size_t size)
{
	const char *github = getenv("GITHUB_WORKSPACE"), *gitlab = getenv("CI_PROJECT_DIR");

	if (o->format != DTL_FORMAT_SARIF && o->format != DTL_FORMAT_GITHUB &&
	    o->format != DTL_FORMAT_GITLAB)
		return NULL;
	if (o->format != DTL_FORMAT_GITLAB && github && *github)
		return github;
	if (o->format != DTL_FORMAT_GITHUB && gitlab && *gitlab)
		return gitlab;
	return git_root(buf, size);
}

static int write_report(FILE *out, const struct dtl_options *o,
                        const struct dtl_report_input *inputs, struct dtl_arena *arena)
{
	struct line_ends le = {.arena = arena};
	char root[4096];
	struct dtl_report_options options = {.color = use_color(o, out),
	                                     .root = report_root(o, root, sizeof(root)),
	                                     .verbose = o->verbose,
	                                     .width = terminal_width(out),
	                                     .line_end = line_end,
	                                     .line_end_data = &le};
	size_t n = o->input_count;
	int r;

	/* the formats that show a finding per alert, annotation or section show each input
	 * warning as one too (json has its own field; text and concise have standard error) */
	if (!o->show_plan && !o->statistics && o->format != DTL_FORMAT_TEXT &&
	    o->format != DTL_FORMAT_CONCISE && o->format != DTL_FORMAT_JSON &&
	    o->format != DTL_FORMAT_JSON_LINES &&
	    (r = dtl_report_with_warnings(arena, inputs, n, &inputs)) < 0)
		return r;
	if (o->show_plan)
		return dtl_report_plan(out, inputs, n, o->format == DTL_FORMAT_JSON);
	if (o->statistics)
		return dtl_report_statistics(out, inputs, n, o->format == DTL_FORMAT_JSON);
	switch (o->format) {
	case DTL_FORMAT_TEXT:
		return dtl_report_text_styled(out, inputs, n, &options);
	case DTL_FORMAT_JSON:
		return dtl_report_json(out, inputs, n);
	case DTL_FORMAT_JSON_LINES:
		return dtl_report_json_lines(out, inputs, n);
	case DTL_FORMAT_SARIF:
		return dtl_report_sarif(out, inputs, n, &options);
	case DTL_FORMAT_GITHUB:
		return dtl_report_github(out, inputs, n, &options);
	case DTL_FORMAT_GITLAB:
		return dtl_report_gitlab(out, inputs, n, &options);
	case DTL_FORMAT_MARKDOWN:
		return dtl_report_markdown(out, inputs, n);
	case DTL_FORMAT_HTML:
		return dtl_report_html(out, inputs, n);
	case DTL_FORMAT_CONCISE:
		return dtl_report_concise(out, inputs, n, &options);
	}
	return -EINVAL;
}

void dtl_cli_print_summary(const struct dtl_options *o, const struct dtl_report_counts *counts,
                           const struct dtl_cli_run *run, size_t baselined)
{
	size_t suppressed = run->suppressed, warned = run->input_warnings;

	if (counts->findings)
		fprintf(stderr,
		        "Found %zu problem%s (%zu error%s, %zu warning%s, %zu info) in %zu file%s",
		        counts->findings, counts->findings == 1 ? "" : "s", counts->errors,
		        counts->errors == 1 ? "" : "s", counts->warnings,
		        counts->warnings == 1 ? "" : "s", counts->infos, o->input_count,
		        o->input_count == 1 ? "" : "s");
	else
		fprintf(stderr, "No problems found");
	if (suppressed && baselined)
		fprintf(stderr, "; %zu suppressed, %zu in the baseline", suppressed, baselined);
	else if (suppressed)
		fprintf(stderr, "; %zu suppressed", suppressed);
	else if (baselined)
		fprintf(stderr, "; %zu in the baseline", baselined);
	if (warned)
		fprintf(stderr, "; %zu input warning%s above", warned, warned == 1 ? "" : "s");
	fputs(".\n", stderr);
}

/* --write-baseline: every finding as a baseline entry, instead of a report. */
int dtl_cli_write_baseline(struct dtl_cli_run *run)
{
	const struct dtl_options *o = run->o;
	struct dtl_report_counts counts;
	struct dtl_error error = {0};
	size_t entries = 0;
	int r;

	dtl_report_count(run->inputs, o->input_count, &counts);
	r = dtl_baseline_write(o->write_baseline, run->inputs, o->input_count, run->arena, &entries,
	                       &error);
	if (r < 0) {
		/* exit 3 for a write that failed; 2 for a refusal (a hard-linked file) */
		dtl_cli_fail(run, &error, r);
		return dtl_cli_note(run, r == -EPERM ? DTL_EXIT_INPUT : DTL_EXIT_INTERNAL, r);
	}
	if (!o->quiet)
		fprintf(stderr, "dtypelint: wrote %zu baseline entr%s for %zu finding%s to %s\n",
		        entries, entries == 1 ? "y" : "ies", counts.findings,
		        counts.findings == 1 ? "" : "s",
		        strcmp(o->write_baseline, "-") == 0 ? "standard output"
		                                            : o->write_baseline);
	return 0;
}

/* The report, its --memory table and --trace, on out */
static int write_all(FILE *out, const struct dtl_options *o, const struct dtl_cli_run *run)
{
	int r = write_report(out, o, run->inputs, run->arena);

	if (r >= 0 && o->memory && o->format == DTL_FORMAT_TEXT && !o->statistics && !o->show_plan)
		r = dtl_report_memory_text(out, run->inputs, o->input_count);
	if (r >= 0 && o->trace.count) {
		/* after a text report on its stream; machine formats keep theirs clean */
		FILE *trace_out = o->format == DTL_FORMAT_TEXT && !o->statistics ? out : stderr;
		r = dtl_report_trace(trace_out, run->inputs, o->input_count, o->trace.items,
		                     o->trace.count);
	}
	return r;
}

int dtl_cli_emit_report(struct dtl_cli_run *run)
{
	const struct dtl_options *o = run->o;
	struct dtl_atomic_file report_file = {0};
	struct dtl_error error = {0};
	FILE *out = stdout;
	int r;

	if (o->output) {
		r = dtl_atomic_open(&report_file, o->output, &error);
		if (r < 0)
			return dtl_cli_note(run, r == -EPERM ? DTL_EXIT_INPUT : DTL_EXIT_INTERNAL,
			                    dtl_cli_fail(run, &error, r));
		out = report_file.out;
	}
	errno = 0;
	r = write_all(out, o, run);
	/* the stream's errno says why (ENOSPC, EPIPE, ...) better than -EIO */
	if (r == -EIO && errno)
		r = -errno;
	if (out == stdout) {
		if (fflush(out) != 0 && r >= 0)
			r = errno ? -errno : -EIO;
	} else if (r < 0) {
		dtl_atomic_abort(&report_file); /* the old report stays as it was */
	} else {
		r = dtl_atomic_commit(&report_file, &error);
	}
	if (r < 0) {
		fprintf(stderr, "dtypelint: cannot write the report to %s: %s\n",
		        o->output ? o->output : "standard output", strerror(-r));
		return dtl_cli_note(run, DTL_EXIT_INTERNAL, r);
	}
	return 0;
}
