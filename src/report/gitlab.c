/* SPDX-License-Identifier: MIT */
/*
 * GitLab Code Quality (facts/ecosystem-and-style.md §1.12): a JSON array of issues with
 * description, check_name, fingerprint (unique per finding: GitLab shows only the first of
 * equal ones), severity and location {path, lines {begin}}. Severities: error -> major,
 * warning -> minor, info -> info.
 */
#include <errno.h>

#include "report-private.h"

static const char *gitlab_severity(enum dtl_severity s)
{
	return s == DTL_SEVERITY_ERROR ? "major" : s == DTL_SEVERITY_WARNING ? "minor" : "info";
}

int dtl_report_gitlab(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	struct dtl_arena arena;
	struct dtl_report_item *items;
	size_t count;
	int r;

	dtl_arena_init(&arena);
	r = dtl_report_items(&arena, inputs, n, &items, &count);
	if (r < 0)
		goto done;
	fputc('[', out);
	for (size_t i = 0; i < count; i++) {
		const struct dtl_finding *f = items[i].finding;
		char *description =
		    dtl_arena_sprintf(&arena, "%s %s: %s", f->rule->id, f->rule->name, f->message);
		if (!description) {
			r = -ENOMEM;
			goto done;
		}
		fputs(i ? ",\n  {\"type\": \"issue\", \"description\": "
		        : "\n  {\"type\": \"issue\", \"description\": ",
		      out);
		dtl_json_string(out, description);
		fputs(", \"check_name\": ", out);
		dtl_json_string(out, f->rule->id);
		fputs(", \"categories\": [\"Bug Risk\"], \"fingerprint\": ", out);
		dtl_json_string(out, items[i].fingerprint);
		fputs(", \"severity\": ", out);
		dtl_json_string(out, gitlab_severity(f->severity));
		fputs(", \"location\": {\"path\": ", out);
		dtl_json_string(out, items[i].path);
		fprintf(out, ", \"lines\": {\"begin\": %u}}}", f->loc.line ? f->loc.line : 1);
	}
	fputs(count ? "\n]\n" : "]\n", out);
	r = ferror(out) ? -EIO : 0;
done:
	dtl_arena_fini(&arena);
	return r;
}
