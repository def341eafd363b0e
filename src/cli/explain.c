/* SPDX-License-Identifier: MIT */
/* --explain and --list-rules: both read the rule table, the one source of rule text. */
#include <errno.h>

#include "cli.h"
#include "dtypelint/core/json-writer.h"

int dtl_cli_explain(FILE *out, const char *id_or_name)
{
	const struct dtl_rule *rule = dtl_lint_rule(id_or_name);

	if (!rule)
		return -ENOENT;
	return dtl_report_explain(out, rule);
}

int dtl_cli_list_rules(FILE *out, enum dtl_format format)
{
	size_t n;
	const struct dtl_rule *const *rules = dtl_lint_rules(&n);

	if (format == DTL_FORMAT_JSON) {
		struct dtl_json w;
		dtl_json_init(&w, out);
		dtl_json_begin_object(&w);
		dtl_json_key_uint(&w, "version", 1);
		dtl_json_key(&w, "rules");
		dtl_json_begin_array_block(&w);
		for (size_t i = 0; i < n; i++) {
			dtl_json_begin_object(&w);
			dtl_json_key_string(&w, "id", rules[i]->id);
			dtl_json_key_string(&w, "name", rules[i]->name);
			dtl_json_key_string(&w, "severity",
			                    dtl_lint_severity_name(rules[i]->severity));
			dtl_json_key_string(&w, "summary", rules[i]->summary);
			dtl_json_end_object(&w);
		}
		dtl_json_end_array(&w);
		dtl_json_end_object(&w);
		return dtl_json_finish(&w);
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s  %-36s %-8s %s\n", rules[i]->id, rules[i]->name,
			        dtl_lint_severity_name(rules[i]->severity), rules[i]->summary);
	}
	return ferror(out) ? -EIO : 0;
}
