/* SPDX-License-Identifier: MIT */
/* --explain and --list-rules: both read the rule table, the one source of rule text. */
#include <errno.h>

#include "cli.h"

int dtl_cli_explain(FILE *out, const char *id_or_name)
{
	const struct dtl_rule *rule = dtl_rule_find(id_or_name);

	if (!rule)
		return -ENOENT;
	return dtl_report_explain(out, rule);
}

int dtl_cli_list_rules(FILE *out, enum dtl_format format)
{
	size_t n;
	const struct dtl_rule *const *rules = dtl_rules_all(&n);

	if (format == DTL_FORMAT_JSON) {
		fputs("{\"version\": 1, \"rules\": [", out);
		for (size_t i = 0; i < n; i++) {
			fputs(i ? ",\n  {\"id\": " : "\n  {\"id\": ", out);
			dtl_json_string(out, rules[i]->id);
			fputs(", \"name\": ", out);
			dtl_json_string(out, rules[i]->name);
			fputs(", \"severity\": ", out);
			dtl_json_string(out, dtl_severity_name(rules[i]->severity));
			fputs(", \"summary\": ", out);
			dtl_json_string(out, rules[i]->summary);
			fputc('}', out);
		}
		fputs("\n]}\n", out);
	} else {
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%s  %-36s %-8s %s\n", rules[i]->id, rules[i]->name,
			        dtl_severity_name(rules[i]->severity), rules[i]->summary);
	}
	return ferror(out) ? -EIO : 0;
}
