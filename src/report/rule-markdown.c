/* SPDX-License-Identifier: MIT */
/* A rule's documentation as Markdown, from the rule table (the one source of rule text): what
 * --explain prints, what docs/rules/ holds and what SARIF carries as help.markdown. Examples
 * and quoted error lines go in fenced blocks, so that GitHub (code-scanning alerts, the rule
 * pages) renders them as code, not as bullet lists and run-on text. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dtypelint/report/report.h"

/* Is the line at p (up to end) a YAML key or list item ("tensors:", "- {name: ...}")? */
static bool yaml_line(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	if (end - p >= 2 && p[0] == '-' && p[1] == ' ')
		return true;
	const char *q = p;
	while (q < end && (*q == '_' || *q == '.' || *q == '-' || (*q >= 'a' && *q <= 'z') ||
	                   (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
		q++;
	return q > p && q < end && *q == ':';
}

/* An example is YAML when every line is a key or a list item and no prose follows ("... with
 * bf16 enabled"); anything else is plain text. Both are fenced. */
static const char *example_language(const char *text)
{
	if (strstr(text, " with ") || strstr(text, ", DeepSpeed"))
		return "text";
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		const char *end = nl ? nl : p + strlen(p);
		if (end > p && !yaml_line(p, end))
			return "text";
		p = nl ? nl + 1 : end;
	}
	return "yaml";
}

/* The explanation: prose, with each run of lines indented by two spaces (quoted framework
 * errors, one per version range) in a fenced block, dedented. */
static void explanation(FILE *out, const char *text)
{
	bool fenced = false;

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		bool code = len >= 2 && p[0] == ' ' && p[1] == ' ';
		if (code != fenced) {
			fputs(code ? "\n```text\n" : "```\n\n", out);
			fenced = code;
		}
		fwrite(code ? p + 2 : p, 1, code ? len - 2 : len, out);
		putc('\n', out);
		p = nl ? nl + 1 : p + len;
	}
	if (fenced)
		fputs("```\n", out);
}

/* The sources: one list item per URL, with the words after it (the table separates them by
 * spaces: "https://... (ruff's RUF100 unused-noqa) https://..."). */
static void sources(FILE *out, const char *text)
{
	bool item = false;

	for (const char *p = text; *p;) {
		while (*p == ' ' || *p == '\n')
			p++;
		size_t len = strcspn(p, " \n");
		if (!len)
			break;
		bool url = !strncmp(p, "https://", 8) || !strncmp(p, "http://", 7);
		if (url || !item)
			fputs(item ? "\n- " : "- ", out);
		else
			putc(' ', out);
		fprintf(out, url ? "<%.*s>" : "%.*s", (int)len, p);
		item = true;
		p += len;
	}
	if (item)
		putc('\n', out);
}

int dtl_report_explain(FILE *out, const struct dtl_rule *rule)
{
	fprintf(out, "# %s %s\n\n", rule->id, rule->name);
	fprintf(out, "Severity: %s\n\n%s.\n\n", dtl_severity_name(rule->severity), rule->summary);
	fputs("## What happens\n\n", out);
	explanation(out, rule->explanation);
	fprintf(out, "\n## Example\n\n```%s\n%s\n```\n\n", example_language(rule->example),
	        rule->example);
	fprintf(out, "## Fix\n\n%s\n\n", rule->fix);
	fputs("## Sources\n\n", out);
	sources(out, rule->facts);
	return ferror(out) ? -EIO : 0;
}
