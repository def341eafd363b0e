/* SPDX-License-Identifier: MIT */
/*
 * SARIF 2.1.0 for GitHub code scanning
 * (https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning):
 * every property GitHub marks required, rules[] from the rule table for the rules with results
 * (descriptions, and help = --explain), regions with line and column, URIs relative to the
 * repository root (options->root; the checkout in CI, whichever subfolder dtypelint runs from)
 * under uriBaseId %SRCROOT%, and partialFingerprints keyed by rule + file + group/tensor, never by
 * line, so that alerts survive edits that move lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtl-config.h"
#include "dtypelint/core/json-writer.h"
#include "report-private.h"

/* GitHub truncates nothing but rejects nothing either past 1024 characters: stay within */
#define DESCRIPTION_MAX 1024

/* path percent-encoded (RFC 3986), as a file:// URI unless relative */
static void uri_string(struct dtl_json *w, const char *path, bool relative)
{
	static const char hex[] = "0123456789ABCDEF";
	char uri[sizeof("file://") + 3 * 4096];
	size_t n = 0;

	if (!relative)
		n = (size_t)snprintf(uri, sizeof(uri), "file://");
	for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 <= sizeof(uri);
	     p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			uri[n++] = (char)*p;
		} else {
			uri[n++] = '%';
			uri[n++] = hex[*p >> 4];
			uri[n++] = hex[*p & 15];
		}
	}
	dtl_json_put_string_len(w, uri, n);
}

/* s cut to at most max bytes at a UTF-8 boundary, with "..." when cut */
static void json_string_max(struct dtl_json *w, const char *s)
{
	char cut[DESCRIPTION_MAX + 1];
	size_t len = strlen(s);

	if (len <= DESCRIPTION_MAX) {
		dtl_json_put_string_len(w, s, len);
		return;
	}
	len = DESCRIPTION_MAX - 3;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	memcpy(cut, s, len);
	memcpy(cut + len, "...", 3);
	dtl_json_put_string_len(w, cut, len + 3);
}

/* {"text": s}, the SARIF message and description object */
static void text_object(struct dtl_json *w, const char *key, const char *s, bool cut)
{
	dtl_json_key_object(w, key);
	dtl_json_key(w, "text");
	if (cut)
		json_string_max(w, s);
	else
		dtl_json_put_string(w, s);
	dtl_json_end_object(w);
}

static const char *problem_severity(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR     ? "error"
	       : s == DTL_SEVERITY_WARNING ? "warning"
	                                   : "recommendation";
}

static int rule_object(struct dtl_json *w, const struct dtl_rule *rule)
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
	dtl_json_begin_object(w);
	dtl_json_key_string(w, "id", rule->id);
	dtl_json_key_string(w, "name", rule->name);
	dtl_json_break(w, 9);
	text_object(w, "shortDescription", rule->summary, true);
	dtl_json_break(w, 9);
	text_object(w, "fullDescription", rule->explanation, true);
	dtl_json_break(w, 9);
	dtl_json_key_object(w, "help");
	dtl_json_key_string(w, "text", help);
	dtl_json_key_string(w, "markdown", help);
	dtl_json_end_object(w);
	/* the rule's page, docs/rules/<ID>.md (meson -Drules_url) */
	dtl_json_break(w, 9);
	dtl_json_key_string(w, "helpUri", uri);
	free(uri);
	dtl_json_break(w, 9);
	dtl_json_key_object(w, "defaultConfiguration");
	dtl_json_key_string(w, "level", dtl_report_sarif_level(rule->severity));
	dtl_json_end_object(w);
	dtl_json_break(w, 9);
	dtl_json_key_object(w, "properties");
	dtl_json_key_array(w, "tags");
	dtl_json_put_string(w, "dtype");
	dtl_json_put_string(w, "dtypelint");
	dtl_json_end_array(w);
	dtl_json_key_string(w, "precision", "high");
	dtl_json_key_string(w, "problem.severity", problem_severity(rule->severity));
	dtl_json_end_object(w);
	dtl_json_end_object(w);
	free(help);
	return 0;
}

static void physical_location(struct dtl_json *w, const struct dtl_loc *loc,
                              const struct dtl_report_options *options)
{
	char path[4096];
	const char *file = loc->file ? loc->file : "-";
	bool relative =
	    dtl_report_relpath(file, options ? options->root : NULL, path, sizeof(path));
	uint32_t line = loc->line ? loc->line : 1, column = loc->column ? loc->column : 1;
	uint32_t end = 0;

	if (!path[0])
		snprintf(path, sizeof(path), "%s", file);
	if (options && options->line_end && loc->line)
		end = options->line_end(options->line_end_data, file, loc->line);
	if (end <= column)
		end = column + 1;
	dtl_json_key_object(w, "physicalLocation");
	dtl_json_key_object(w, "artifactLocation");
	dtl_json_key(w, "uri");
	uri_string(w, path, relative);
	if (relative)
		dtl_json_key_string(w, "uriBaseId", "%SRCROOT%");
	dtl_json_end_object(w);
	dtl_json_key_object(w, "region");
	dtl_json_key_uint(w, "startLine", line);
	dtl_json_key_uint(w, "startColumn", column);
	dtl_json_key_uint(w, "endLine", line);
	dtl_json_key_uint(w, "endColumn", end);
	dtl_json_end_object(w);
	dtl_json_end_object(w);
}

static void message_text(struct dtl_json *w, const struct dtl_finding *f)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);

	if (!mem) {
		text_object(w, "message", f->message, false);
		return;
	}
	fprintf(mem, "%s.", f->message);
	if (f->error_text)
		fprintf(mem, "\n%s raises %s: %s", dtl_report_raiser(f), dtl_report_when(f),
		        f->error_text);
	if (f->effect)
		fprintf(mem, "\neffect: %s", f->effect);
	if (f->fix)
		fprintf(mem, "\nfix: %s", f->fix);
	if (fclose(mem) != 0) {
		free(text);
		text_object(w, "message", f->message, false);
		return;
	}
	text_object(w, "message", text, false);
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

static void result(struct dtl_json *w, const struct dtl_report_item *it,
                   const struct dtl_rule **rules, size_t rule_count,
                   const struct dtl_report_options *options)
{
	const struct dtl_finding *f = it->finding;

	dtl_json_begin_object(w);
	dtl_json_key_string(w, "ruleId", f->rule->id);
	dtl_json_key_uint(w, "ruleIndex", rule_index(rules, rule_count, f->rule));
	dtl_json_key_string(w, "level", dtl_report_sarif_level(f->severity));
	dtl_json_break(w, 9);
	message_text(w, f);
	dtl_json_break(w, 9);
	dtl_json_key_array(w, "locations");
	dtl_json_begin_object(w);
	physical_location(w, &f->loc, options);
	dtl_json_end_object(w);
	dtl_json_end_array(w);
	dtl_json_break(w, 9);
	dtl_json_key_object(w, "partialFingerprints");
	dtl_json_key_string(w, "dtypelint/v1", it->fingerprint);
	dtl_json_end_object(w);
	if (f->note_count) {
		dtl_json_break(w, 9);
		dtl_json_key_array(w, "relatedLocations");
		for (size_t k = 0; k < f->note_count; k++) {
			dtl_json_break(w, k ? 11 : -1);
			dtl_json_begin_object(w);
			dtl_json_key_uint(w, "id", k + 1);
			text_object(w, "message", f->notes[k].text, false);
			physical_location(w, &f->notes[k].loc, options);
			dtl_json_end_object(w);
		}
		dtl_json_end_array(w);
	}
	dtl_json_break(w, 9);
	dtl_json_key_object(w, "properties");
	dtl_json_key_string(w, "name", f->rule->name);
	dtl_json_key_array(w, "tensors");
	for (size_t k = 0; k < f->tensor_count; k++)
		dtl_json_put_string(w, f->view.tensors[k].name ? f->view.tensors[k].name : "");
	dtl_json_end_array(w);
	if (f->view.group) {
		dtl_json_key_string(w, "group", f->view.group->name ? f->view.group->name : "");
	} else {
		dtl_json_key(w, "group");
		dtl_json_put_null(w);
	}
	if (f->range_count) {
		dtl_json_key(w, "versions");
		dtl_report_json_ranges(w, f);
	}
	dtl_json_end_object(w);
	dtl_json_end_object(w);
}

/* The run's invocation: executionSuccessful is false when an input could not be read, and
 * each such input is a toolExecutionNotification too (beside its DT001 result), as SARIF
 * 2.1.0 §3.20.21 has tools report the problems that kept them from analysing a file. */
static void invocations(struct dtl_json *w, const struct dtl_report_item *items, size_t count,
                        const struct dtl_report_options *options)
{
	bool failed = false;

	for (size_t i = 0; i < count; i++)
		failed = failed || strcmp(items[i].finding->rule->id, "DT001") == 0;
	dtl_json_key_array(w, "invocations");
	dtl_json_begin_object(w);
	dtl_json_key_bool(w, "executionSuccessful", !failed);
	if (failed) {
		dtl_json_break(w, 8);
		dtl_json_key_array(w, "toolExecutionNotifications");
		for (size_t i = 0; i < count; i++) {
			const struct dtl_finding *f = items[i].finding;
			if (strcmp(f->rule->id, "DT001") != 0)
				continue;
			dtl_json_break(w, 10);
			dtl_json_begin_object(w);
			dtl_json_key_string(w, "level", "error");
			text_object(w, "message", f->message, false);
			dtl_json_key_object(w, "descriptor");
			dtl_json_key_string(w, "id", "DT001");
			dtl_json_end_object(w);
			dtl_json_key_array(w, "locations");
			dtl_json_begin_object(w);
			physical_location(w, &f->loc, options);
			dtl_json_end_object(w);
			dtl_json_end_array(w);
			dtl_json_end_object(w);
		}
		dtl_json_end_array(w);
	}
	dtl_json_end_object(w);
	dtl_json_end_array(w);
}

/* the framework versions each input's verdict assumed, and where each came from */
static void versions(struct dtl_json *w, const struct dtl_report_input *inputs, size_t n)
{
	dtl_json_key_object(w, "properties");
	dtl_json_key_array(w, "versions");
	for (size_t i = 0; i < n; i++) {
		const struct dtl_input_view *view = inputs[i].view;
		if (!view)
			continue;
		dtl_json_begin_object(w);
		dtl_json_key_string(w, "file", view->manifest->file ? view->manifest->file : "-");
		for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
			char v[32], from[600];
			if (!dtl_report_version_shown(view, fw))
				continue;
			dtl_json_key_object(w, dtl_framework_name(fw));
			dtl_json_key_string(
			    w, "version",
			    dtl_version_format(&view->rp.plan->versions[fw], v, sizeof(v)));
			dtl_json_key_string(
			    w, "from", dtl_report_version_source(view, fw, from, sizeof(from)));
			dtl_json_end_object(w);
		}
		dtl_json_end_object(w);
	}
	dtl_json_end_array(w);
	dtl_json_end_object(w);
}

int dtl_report_sarif(FILE *out, const struct dtl_report_input *inputs, size_t n,
                     const struct dtl_report_options *options)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	size_t count, all_count, rule_count = 0;
	const struct dtl_rule *const *all = dtl_rules_all(&all_count);
	const struct dtl_rule **rules;
	struct dtl_json w;
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items_at(&arena, inputs, n, options ? options->root : NULL, &items, &count);
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
	dtl_json_init(&w, out);
	dtl_json_begin_object_block(&w);
	dtl_json_key_string(&w, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	dtl_json_key_string(&w, "version", "2.1.0");
	dtl_json_key(&w, "runs");
	dtl_json_begin_array_block(&w);
	dtl_json_begin_object_block(&w);
	dtl_json_key_object(&w, "tool");
	dtl_json_key_object(&w, "driver");
	dtl_json_key_string(&w, "name", "dtypelint");
	dtl_json_key_string(&w, "version", DTL_VERSION);
	dtl_json_key_string(&w, "semanticVersion", DTL_VERSION);
	dtl_json_break(&w, 6);
	dtl_json_key(&w, "rules");
	dtl_json_begin_array_block(&w);
	for (size_t i = 0; i < rule_count && r >= 0; i++)
		r = rule_object(&w, rules[i]);
	if (r < 0)
		goto done;
	dtl_json_end_array(&w);
	dtl_json_end_object(&w);
	dtl_json_end_object(&w);
	dtl_json_key_string(&w, "columnKind", "unicodeCodePoints");
	invocations(&w, items, count, options);
	versions(&w, inputs, n);
	dtl_json_key(&w, "results");
	dtl_json_begin_array_block(&w);
	for (size_t i = 0; i < count; i++)
		result(&w, &items[i], rules, rule_count, options);
	dtl_json_end_array(&w);
	dtl_json_end_object(&w);
	dtl_json_end_array(&w);
	dtl_json_end_object(&w);
	r = dtl_json_finish(&w);
done:
	dtl_arena_fini(&arena);
	return r;
}
