/* SPDX-License-Identifier: MIT */
/*
 * SARIF 2.1.0 for GitHub code scanning (facts/ecosystem-and-style.md §1.9): every property
 * GitHub marks required, rules[] from the rule table for the rules with results (descriptions,
 * and help = --explain),
 * regions with line and column, URIs relative to the working directory (the checkout root in
 * CI) under uriBaseId %SRCROOT%, and partialFingerprints keyed by rule + file + group/tensor,
 * never by line, so that alerts survive edits that move lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-config.h"
#include "report-private.h"

/* GitHub truncates nothing but rejects nothing either past 1024 characters: stay within */
#define DESCRIPTION_MAX 1024

static void uri_string(FILE *out, const char *path, bool relative)
{
	static const char hex[] = "0123456789ABCDEF";

	fputc('"', out);
	if (!relative)
		fputs("file://", out);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
			fputc(*p, out);
		else
			fprintf(out, "%%%c%c", hex[*p >> 4], hex[*p & 15]);
	}
	fputc('"', out);
}

/* s cut to at most max bytes at a UTF-8 boundary, with "..." when cut */
static void json_string_max(FILE *out, const char *s, size_t max)
{
	size_t len = strlen(s);
	char *copy;

	if (len <= max) {
		dtl_json_string(out, s);
		return;
	}
	len = max - 3;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	copy = malloc(len + 4);
	if (!copy) {
		dtl_json_string(out, "");
		return;
	}
	memcpy(copy, s, len);
	memcpy(copy + len, "...", 4);
	dtl_json_string(out, copy);
	free(copy);
}

static const char *problem_severity(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR     ? "error"
	       : s == DTL_SEVERITY_WARNING ? "warning"
	                                   : "recommendation";
}

static int rule_object(FILE *out, const struct dtl_rule *rule)
{
	char *help = NULL, *uri;
	size_t help_size = 0;
	FILE *mem = open_memstream(&help, &help_size);
	int r;

	if (!mem)
		return -ENOMEM;
	r = dtl_report_explain(mem, rule);
	if (fclose(mem) != 0 && r == 0)
		r = -ENOMEM;
	size_t uri_size = sizeof(DTL_RULES_URL) + strlen(rule->id) + 4;
	uri = malloc(uri_size);
	if (!uri && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		free(help);
		free(uri);
		return r;
	}
	snprintf(uri, uri_size, "%s/%s.md", DTL_RULES_URL, rule->id);
	fputs("        {\"id\": ", out);
	dtl_json_string(out, rule->id);
	fputs(", \"name\": ", out);
	dtl_json_string(out, rule->name);
	fputs(",\n         \"shortDescription\": {\"text\": ", out);
	json_string_max(out, rule->summary, DESCRIPTION_MAX);
	fputs("},\n         \"fullDescription\": {\"text\": ", out);
	json_string_max(out, rule->explanation, DESCRIPTION_MAX);
	fputs("},\n         \"help\": {\"text\": ", out);
	dtl_json_string(out, help);
	fputs(", \"markdown\": ", out);
	dtl_json_string(out, help);
	/* the rule's page, docs/rules/<ID>.md (meson -Drules_url) */
	fputs("},\n         \"helpUri\": ", out);
	dtl_json_string(out, uri);
	free(uri);
	fputs(",\n         \"defaultConfiguration\": {\"level\": ", out);
	dtl_json_string(out, dtl_report_sarif_level(rule->severity));
	fputs("},\n         \"properties\": {\"tags\": [\"dtype\", \"dtypelint\"], "
	      "\"precision\": \"high\", \"problem.severity\": ",
	      out);
	dtl_json_string(out, problem_severity(rule->severity));
	fputs("}}", out);
	free(help);
	return 0;
}

static void physical_location(FILE *out, const struct dtl_loc *loc,
                              const struct dtl_report_options *options)
{
	char path[4096];
	const char *file = loc->file ? loc->file : "-";
	bool relative = dtl_report_relpath(file, NULL, path, sizeof(path));
	uint32_t line = loc->line ? loc->line : 1, column = loc->column ? loc->column : 1;
	uint32_t end = 0;

	if (!path[0])
		snprintf(path, sizeof(path), "%s", file);
	if (options && options->line_end && loc->line)
		end = options->line_end(options->line_end_data, file, loc->line);
	if (end <= column)
		end = column + 1;
	fputs("\"physicalLocation\": {\"artifactLocation\": {\"uri\": ", out);
	uri_string(out, path, relative);
	if (relative)
		fputs(", \"uriBaseId\": \"%SRCROOT%\"", out);
	fprintf(out,
	        "}, \"region\": {\"startLine\": %u, \"startColumn\": %u, \"endLine\": %u, "
	        "\"endColumn\": %u}}",
	        line, column, line, end);
}

static void message_text(FILE *out, const struct dtl_finding *f)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);

	if (!mem) {
		dtl_json_string(out, f->message);
		return;
	}
	fprintf(mem, "%s.", f->message);
	if (f->error_text)
		fprintf(mem, "\n%s raises %s: %s", f->error_versions, f->error_when, f->error_text);
	if (f->effect)
		fprintf(mem, "\neffect: %s", f->effect);
	if (f->fix)
		fprintf(mem, "\nfix: %s", f->fix);
	if (fclose(mem) != 0) {
		free(text);
		dtl_json_string(out, f->message);
		return;
	}
	dtl_json_string(out, text);
	free(text);
}

/* rules[] lists the rules with results, in rule table order; returns the index of r */
static size_t rule_index(const struct dtl_rule **rules, size_t n, const struct dtl_rule *r)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i] == r || strcmp(rules[i]->id, r->id) == 0)
			return i;
	return 0;
}

static bool has_results(const struct dtl_report_item *items, size_t count, const struct dtl_rule *r)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(items[i].finding->rule->id, r->id) == 0)
			return true;
	return false;
}

static void result(FILE *out, const struct dtl_report_item *it, const struct dtl_rule **rules,
                   size_t rule_count, const struct dtl_report_options *options)
{
	const struct dtl_finding *f = it->finding;

	fputs("        {\"ruleId\": ", out);
	dtl_json_string(out, f->rule->id);
	fprintf(out, ", \"ruleIndex\": %zu, \"level\": ", rule_index(rules, rule_count, f->rule));
	dtl_json_string(out, dtl_report_sarif_level(f->severity));
	fputs(",\n         \"message\": {\"text\": ", out);
	message_text(out, f);
	fputs("},\n         \"locations\": [{", out);
	physical_location(out, &f->loc, options);
	fputs("}],\n         \"partialFingerprints\": {\"dtypelint/v1\": ", out);
	dtl_json_string(out, it->fingerprint);
	fputc('}', out);
	if (f->note_count) {
		fputs(",\n         \"relatedLocations\": [", out);
		for (size_t k = 0; k < f->note_count; k++) {
			fprintf(out, "%s{\"id\": %zu, \"message\": {\"text\": ",
			        k ? ",\n           " : "", k + 1);
			dtl_json_string(out, f->notes[k].text);
			fputs("}, ", out);
			physical_location(out, &f->notes[k].loc, options);
			fputc('}', out);
		}
		fputc(']', out);
	}
	fputs(",\n         \"properties\": {\"name\": ", out);
	dtl_json_string(out, f->rule->name);
	fputs(", \"tensors\": [", out);
	for (size_t k = 0; k < f->tensor_count; k++) {
		if (k)
			fputs(", ", out);
		dtl_json_string(out, f->view.tensors[k].name);
	}
	fputs("], \"group\": ", out);
	if (f->view.group)
		dtl_json_string(out, f->view.group->name);
	else
		fputs("null", out);
	fputs("}}", out);
}

/* The run's invocation: executionSuccessful is false when an input could not be read, and
 * each such input is a toolExecutionNotification too (beside its DT001 result), as SARIF
 * 2.1.0 §3.20.21 has tools report the problems that kept them from analysing a file. */
static void invocations(FILE *out, const struct dtl_report_item *items, size_t count,
                        const struct dtl_report_options *options)
{
	bool failed = false;

	for (size_t i = 0; i < count; i++)
		failed = failed || strcmp(items[i].finding->rule->id, "DT001") == 0;
	if (!failed) {
		fputs("      \"invocations\": [{\"executionSuccessful\": true}],\n", out);
		return;
	}
	fputs("      \"invocations\": [{\"executionSuccessful\": false,\n"
	      "        \"toolExecutionNotifications\": [",
	      out);
	bool first = true;
	for (size_t i = 0; i < count; i++) {
		const struct dtl_finding *f = items[i].finding;
		if (strcmp(f->rule->id, "DT001") != 0)
			continue;
		fputs(first ? "\n          {\"level\": \"error\", \"message\": {\"text\": "
		            : ",\n          {\"level\": \"error\", \"message\": {\"text\": ",
		      out);
		first = false;
		dtl_json_string(out, f->message);
		fputs("}, \"descriptor\": {\"id\": \"DT001\"}, \"locations\": [{", out);
		physical_location(out, &f->loc, options);
		fputs("}]}", out);
	}
	fputs("]}],\n", out);
}

int dtl_report_sarif(FILE *out, const struct dtl_report_input *inputs, size_t n,
                     const struct dtl_report_options *options)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	size_t count, all_count, rule_count = 0;
	const struct dtl_rule *const *all = dtl_rules_all(&all_count);
	const struct dtl_rule **rules;
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items(&arena, inputs, n, &items, &count);
	if (r < 0)
		goto done;
	rules = dtl_arena_calloc(&arena, all_count ? all_count : 1, sizeof(*rules));
	if (!rules) {
		r = -ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < all_count; i++)
		if (has_results(items, count, all[i]))
			rules[rule_count++] = all[i];
	fputs("{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n"
	      "  \"version\": \"2.1.0\",\n"
	      "  \"runs\": [\n"
	      "    {\n"
	      "      \"tool\": {\"driver\": {\"name\": \"dtypelint\", \"version\": ",
	      out);
	dtl_json_string(out, DTL_VERSION);
	fputs(", \"semanticVersion\": ", out);
	dtl_json_string(out, DTL_VERSION);
	fputs(",\n      \"rules\": [", out);
	for (size_t i = 0; i < rule_count && r >= 0; i++) {
		fputs(i ? ",\n" : "\n", out);
		r = rule_object(out, rules[i]);
	}
	if (r < 0)
		goto done;
	fputs(rule_count ? "\n      ]}},\n" : "]}},\n", out);
	fputs("      \"columnKind\": \"unicodeCodePoints\",\n", out);
	invocations(out, items, count, options);
	/* the framework versions each input's verdict assumed, and where each came from */
	fputs("      \"properties\": {\"versions\": [", out);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_view *view = inputs[i].view;
		if (!view)
			continue;
		fputs(first ? "{\"file\": " : ", {\"file\": ", out);
		first = false;
		dtl_json_string(out, view->manifest->file ? view->manifest->file : "-");
		for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
			char v[32], from[600];
			fputs(", ", out);
			dtl_json_string(out, dtl_framework_name(fw));
			fputs(": {\"version\": ", out);
			dtl_json_string(
			    out, dtl_version_format(&view->rp.plan->versions[fw], v, sizeof(v)));
			fputs(", \"from\": ", out);
			dtl_json_string(out,
			                dtl_report_version_source(view, fw, from, sizeof(from)));
			fputc('}', out);
		}
		fputc('}', out);
	}
	fputs("]},\n      \"results\": [", out);
	for (size_t i = 0; i < count; i++) {
		fputs(i ? ",\n" : "\n", out);
		result(out, &items[i], rules, rule_count, options);
	}
	fputs(count ? "\n      ]\n    }\n  ]\n}\n" : "]\n    }\n  ]\n}\n", out);
	r = ferror(out) ? -EIO : 0;
done:
	dtl_arena_fini(&arena);
	return r;
}
