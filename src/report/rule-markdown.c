/* SPDX-License-Identifier: MIT */
/* A rule's documentation as Markdown, from the rule table (the one source of rule text): what
 * --explain prints and what SARIF carries as help.markdown. */
#include <errno.h>

#include "dtypelint/report.h"

int dtl_report_explain(FILE *out, const struct dtl_rule *rule)
{
	fprintf(out, "# %s %s\n\n", rule->id, rule->name);
	fprintf(out, "Severity: %s\n\n%s.\n\n", dtl_severity_name(rule->severity), rule->summary);
	fprintf(out, "## What happens\n\n%s\n\n", rule->explanation);
	fprintf(out, "## Example\n\n%s\n\n", rule->example);
	fprintf(out, "## Fix\n\n%s\n\n", rule->fix);
	fprintf(out, "## Sources\n\n%s\n", rule->facts);
	return ferror(out) ? -EIO : 0;
}
