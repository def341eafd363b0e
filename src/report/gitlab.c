/* SPDX-License-Identifier: MIT */
/*
 * GitLab Code Quality
 * (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format): a JSON array of
 * issues with description, check_name, fingerprint (unique per finding: GitLab shows only the first
 * of equal ones), severity and location {path, lines {begin}}. Severities: error -> major, warning
 * -> minor, info -> info.
 */
#include <errno.h>

#include "dtypelint/core/json-writer.h"
#include "report-private.h"

static const char *gitlab_severity(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR ? "major" : s == DTL_SEVERITY_WARNING ? "minor" : "info";
}

int dtl_report_gitlab(FILE *out, const struct dtl_report_input *inputs, size_t n,
                      const struct dtl_report_options *options)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	struct dtl_json w;
	size_t count;
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items_at(&arena, inputs, n, options ? options->root : NULL, &items, &count);
	if (r < 0)
		goto done;
	dtl_json_init(&w, out);
	dtl_json_begin_array_block(&w);
	for (size_t i = 0; i < count; i++) {
		const struct dtl_finding *f = items[i].finding;
		char *description =
		    dtl_arena_sprintf(&arena, "%s %s: %s", f->rule->id, f->rule->name, f->message);
		if (!description) {
			r = -ENOMEM;
			goto done;
		}
		dtl_json_begin_object(&w);
		dtl_json_key_string(&w, "type", "issue");
		dtl_json_key_string(&w, "description", description);
		dtl_json_key_string(&w, "check_name", f->rule->id);
		dtl_json_key_array(&w, "categories");
		dtl_json_put_string(&w, "Bug Risk");
		dtl_json_end_array(&w);
		dtl_json_key_string(&w, "fingerprint", items[i].fingerprint);
		dtl_json_key_string(&w, "severity", gitlab_severity(f->severity));
		dtl_json_key_object(&w, "location");
		dtl_json_key_string(&w, "path", items[i].path);
		dtl_json_key_object(&w, "lines");
		dtl_json_key_uint(&w, "begin", f->loc.line ? f->loc.line : 1);
		dtl_json_end_object(&w);
		dtl_json_end_object(&w);
		dtl_json_end_object(&w);
	}
	dtl_json_end_array(&w);
	r = dtl_json_finish(&w);
done:
	dtl_arena_fini(&arena);
	return r;
}
