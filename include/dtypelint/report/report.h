/* SPDX-License-Identifier: MIT */
/* Output formats. Each writes one run's findings (possibly of several inputs) to a stream. */
#ifndef DTYPELINT_REPORT_H
#define DTYPELINT_REPORT_H
#ifndef DTL_SEES_REPORT
#error "dtypelint/report/report.h is in the report layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dtypelint/rules/rules.h"

/* One linted input: what reporters read of its simulation, and its findings (each with its
 * view: dtl_input_view_init). */
struct dtl_report_input {
	const struct dtl_input_view *view; /* NULL: not read; its finding is DT001 */
	const struct dtl_findings *findings;
	const char *file;                     /* the input as given */
	const char *setup;                    /* the config's set-up it belongs to, or NULL */
	const struct dtl_memory_view *memory; /* --memory: the per-rank model states, else NULL */
	/* the importers' warnings (struct dtl_input_warning, DT003), NULL: none; not findings:
	 * they do not count towards --fail-on, but every format shows them */
	const struct dtl_vec *warnings;
};

struct dtl_report_counts {
	size_t findings, errors, warnings, infos;
};

/* Writes s with its control characters escaped: C0 (ESC, CR and LF included) and DEL as \xNN,
 * C1 as \u00NN, so that text from an input cannot drive a terminal or start a line of a CI
 * log. Every reporter and the command line's messages put input-derived text through it. */
void dtl_report_put_escaped(FILE *out, const char *s);
/* A file name at the start of a line: escaped, and "./" before one that starts with ':' (a
 * CI log reads a line that starts with "::" as a workflow command); NULL prints "-". */
void dtl_report_put_path(FILE *out, const char *path);

/* Counts the findings of n inputs by severity into *ret_counts (zeroed first): the summary
 * lines and the exit status read them. Cannot fail. */
void dtl_report_count(const struct dtl_report_input *inputs, size_t n,
                      struct dtl_report_counts *ret_counts);
/* The input warnings of n inputs */
size_t dtl_report_warning_count(const struct dtl_report_input *inputs, size_t n);
/* inputs whose findings also hold each input warning as a DT003 finding of severity warning,
 * sorted with them, in arena (*ret is inputs itself when none has a warning): for the formats
 * that show a finding per annotation, alert or section (sarif, github, gitlab, markdown,
 * html). Returns 0 or -ENOMEM. */
int dtl_report_with_warnings(struct dtl_arena *arena, const struct dtl_report_input *inputs,
                             size_t n, const struct dtl_report_input **ret);

/* gcc-style lines (docs/design.md §6); returns 0 or -EIO */
int dtl_report_text(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* one versioned JSON object (schema in dtypelint(1)) */
int dtl_report_json(FILE *out, const struct dtl_report_input *inputs, size_t n);

/* --trace: the dtype history of every tensor matching one of globs, stage by stage. */
int dtl_report_trace(FILE *out, const struct dtl_report_input *inputs, size_t n,
                     const char *const *globs, size_t glob_count);

/* What a reporter may need besides the findings. */
struct dtl_report_options {
	bool color;   /* text: ANSI colours (the caller decides: --color, a terminal, NO_COLOR) */
	bool verbose; /* text: every note (the folded groups too), not only the first */
	/* text, concise: the terminal's columns (text wraps, concise cuts its lines); 0: lines
	 * stay whole (a file, a pipe) */
	unsigned width;
	/* sarif, github, gitlab: paths relative to this folder (the repository root: GitHub's
	 * GITHUB_WORKSPACE, GitLab's CI_PROJECT_DIR), absolute outside it; NULL: the working
	 * directory */
	const char *root;
	/* SARIF region ends: the column just past the last character of `line` of `file`, or 0
	 * when unknown. May be NULL. */
	uint32_t (*line_end)(void *data, const char *file, uint32_t line);
	void *line_end_data;
};

/* dtl_report_text with options (colour) */
int dtl_report_text_styled(FILE *out, const struct dtl_report_input *inputs, size_t n,
                           const struct dtl_report_options *options);
/* concise: one line per finding, "file:line:col: severity: message [ID name]" (as ruff's
 * concise format), cut at options->width when it is set */
int dtl_report_concise(FILE *out, const struct dtl_report_input *inputs, size_t n,
                       const struct dtl_report_options *options);
/* json-lines: the finding objects of dtl_report_json, one per line, nothing else */
int dtl_report_json_lines(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* SARIF 2.1.0 as GitHub code scanning takes it: rules[] for the rules with results, URIs
 * (relative to options->root, uriBaseId %SRCROOT%), partialFingerprints from
 * dtl_report_fingerprint. */
int dtl_report_sarif(FILE *out, const struct dtl_report_input *inputs, size_t n,
                     const struct dtl_report_options *options);
/* GitHub Actions workflow commands (::error file=...::), most severe first, at most 10
 * annotations per level and one notice for the rest. */
int dtl_report_github(FILE *out, const struct dtl_report_input *inputs, size_t n,
                      const struct dtl_report_options *options);
/* Markdown for a GitHub job summary or pull-request comment: verdict, one section per
 * finding, versions assumed; at most 1 MiB (GitHub's limit), the rest counted. */
int dtl_report_markdown(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* One self-contained HTML page (inline CSS and script under a strict CSP): findings linked
 * to their tensors, the module tree with each tensor's dtype at each stage, the groups. */
int dtl_report_html(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* GitLab Code Quality (a JSON array of issues). */
int dtl_report_gitlab(FILE *out, const struct dtl_report_input *inputs, size_t n,
                      const struct dtl_report_options *options);
/* --statistics: the number of findings per rule, most frequent first; as
 * "count<TAB>ID<TAB>name" lines or as one JSON object. */
int dtl_report_statistics(FILE *out, const struct dtl_report_input *inputs, size_t n, bool json);
/* Where a framework version came from: "newest known" (assumed), "--with", or file:line:col of
 * the plan key; buf holds the text when it is built. */
const char *dtl_report_version_source(const struct dtl_input_view *view, enum dtl_framework fw,
                                      char *buf, size_t size);
/* Is fw's version reported for this input (dtl_framework_reported: NeMo Automodel's only
 * where the set-up reads its recipe or names its version)? */
bool dtl_report_version_shown(const struct dtl_input_view *view, enum dtl_framework fw);
/* "Versions: torch 2.9 (newest known), ..." per input, for standard error beside the summary. */
int dtl_report_versions_line(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* --memory: the per-rank model states of each input as a text table, after the report. */
int dtl_report_memory_text(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* --show-plan: the resolved plan of each input (text, or one JSON object with "plans"). */
int dtl_report_plan(FILE *out, const struct dtl_report_input *inputs, size_t n, bool json);
/* --explain: a rule's documentation as Markdown. */
int dtl_report_explain(FILE *out, const struct dtl_rule *rule);

/* GitHub's toolkit escaping: '%', CR and LF always; ':' and ',' too when property. */
void dtl_report_github_escape(FILE *out, const char *s, bool property);

/*
 * The identity of a finding that survives edits which move lines: its group's name and its
 * offending (first) tensor, or its message when it names neither. Written to buf as
 * "group\ntensor" ("" for a missing part) or "\n\n" + message. Returns false when truncated.
 */
bool dtl_report_finding_key(const struct dtl_report_input *input, const struct dtl_finding *f,
                            char *buf, size_t size);
/* 16 hex digits identifying (rule, path, key, occurrence): the SARIF partialFingerprints
 * and GitLab fingerprint; occurrence > 0 tells apart findings with equal keys. */
void dtl_report_fingerprint(const char *rule, const char *path, const char *key, size_t occurrence,
                            char ret_hex[17]);
/*
 * path relative to base_dir (NULL: the working directory), computed lexically ("." and ".."
 * resolved without following links). Returns false (buf holds the lexically absolute path)
 * when path is not under base_dir, or when buf is too small (buf is then "").
 */
bool dtl_report_relpath(const char *path, const char *base_dir, char *buf, size_t size);
/* path relative to base_dir, with ".." segments when it lies outside ("../rules/m.yaml");
 * false when buf is too small. */
bool dtl_report_relpath_dots(const char *path, const char *base_dir, char *buf, size_t size);
/* The lexically absolute form of path (relative paths are taken from the working directory). */
bool dtl_report_abspath(const char *path, char *buf, size_t size);

#endif
