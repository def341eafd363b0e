/* SPDX-License-Identifier: MIT */
/* Writing a fix plan: text for people, JSON for tools. */
#include <errno.h>
#include <string.h>

#include "dtypelint/fix.h"
#include "dtypelint/report.h"

int dtl_fix_plan_write_text(FILE *out, const struct dtl_fix_plan *plan)
{
	for (size_t i = 0; i < plan->count; i++) {
		const struct dtl_fix_item *item = &plan->items[i];
		const struct dtl_finding *f = item->finding;
		fprintf(out, "%s:%u:%u: %s: %s [%s %s]\n", f->loc.file,
		        f->loc.line ? f->loc.line : 1, f->loc.column ? f->loc.column : 1,
		        dtl_severity_name(f->severity), f->message, f->rule->id, f->rule->name);
		if (!item->count) {
			fputs("  no fix dtypelint can prove for this finding (see --explain)\n",
			      out);
			continue;
		}
		for (size_t k = 0; k < item->count; k++) {
			const struct dtl_fix *fix = &item->fixes[k];
			fprintf(out, "  %zu. %s\n     findings at warning or above: %zu -> %zu",
			        k + 1, fix->title, fix->before, fix->after);
			if (fix->appeared_count)
				fprintf(out, "; it creates %zu:", fix->appeared_count);
			fputc('\n', out);
			for (size_t a = 0; a < fix->appeared_count; a++)
				fprintf(out, "       + %s\n", fix->appeared[a]);
			if (fix->edit_file) {
				fputs("     --write edits ", out);
				dtl_report_put_path(out, fix->edit_file);
				fprintf(out, " (%s)\n", fix->edit_setting);
			} else if (fix->not_written && strcmp(fix->not_written, fix->title) == 0) {
				fputs("     a code change: --write leaves it to you\n", out);
			} else if (fix->not_written) {
				fputs("     not written by --write: ", out);
				dtl_report_put_escaped(out, fix->not_written);
				fputc('\n', out);
			}
		}
	}
	return ferror(out) ? -EIO : 0;
}

int dtl_fix_plan_write_json(FILE *out, const struct dtl_fix_plan *plan, const struct dtl_sim *sim)
{
	(void)sim;
	fputs("{\"version\": 1, \"fix_plan\": [", out);
	for (size_t i = 0; i < plan->count; i++) {
		const struct dtl_fix_item *item = &plan->items[i];
		fputs(i ? ",\n  {\"rule\": " : "\n  {\"rule\": ", out);
		dtl_json_string(out, item->finding->rule->id);
		fputs(", \"message\": ", out);
		dtl_json_string(out, item->finding->message);
		fprintf(out, ", \"location\": {\"file\": ");
		dtl_json_string(out, item->finding->loc.file);
		fprintf(out, ", \"line\": %u, \"column\": %u}, \"fixes\": [",
		        item->finding->loc.line ? item->finding->loc.line : 1,
		        item->finding->loc.column ? item->finding->loc.column : 1);
		for (size_t k = 0; k < item->count; k++) {
			const struct dtl_fix *fix = &item->fixes[k];
			fputs(k ? ", {\"rank\": " : "{\"rank\": ", out);
			fprintf(out, "%zu, \"title\": ", k + 1);
			dtl_json_string(out, fix->title);
			fprintf(
			    out,
			    ", \"cost\": %d, \"findings_before\": %zu, \"findings_after\": %zu, "
			    "\"creates\": [",
			    fix->cost, fix->before, fix->after);
			for (size_t a = 0; a < fix->appeared_count; a++) {
				fputs(a ? ", " : "", out);
				dtl_json_string(out, fix->appeared[a]);
			}
			fputc(']', out);
			if (fix->edit_file) {
				fputs(", \"edit\": {\"file\": ", out);
				dtl_json_string(out, fix->edit_file);
				fputs(", \"setting\": ", out);
				dtl_json_string(out, fix->edit_setting);
				fputc('}', out);
			} else if (fix->not_written) {
				fputs(", \"code_change\": ", out);
				dtl_json_string(out, fix->not_written);
			}
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs(plan->count ? "\n]}\n" : "]}\n", out);
	return ferror(out) ? -EIO : 0;
}
