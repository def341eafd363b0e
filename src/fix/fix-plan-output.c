/* SPDX-License-Identifier: MIT */
/* Writing a fix plan: text for people, JSON for tools. */
#include <errno.h>
#include <string.h>

#include "dtypelint/fix/fix.h"
#include "dtypelint/core/json-writer.h"
#include "dtypelint/report/report.h"

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
			        k + 1, fix->proposed.title, fix->before, fix->after);
			if (fix->appeared_count)
				fprintf(out, "; it creates %zu:", fix->appeared_count);
			fputc('\n', out);
			for (size_t a = 0; a < fix->appeared_count; a++)
				fprintf(out, "       + %s\n", fix->appeared[a]);
			if (fix->edit_file) {
				fputs("     --write edits ", out);
				dtl_report_put_path(out, fix->edit_file);
				fprintf(out, " (%s)\n", fix->edit_setting);
			} else if (fix->not_written &&
			           strcmp(fix->not_written, fix->proposed.title) == 0) {
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
	struct dtl_json w;

	(void)sim;
	dtl_json_init(&w, out);
	dtl_json_begin_object(&w);
	dtl_json_key_uint(&w, "version", 1);
	dtl_json_key(&w, "fix_plan");
	dtl_json_begin_array_block(&w);
	for (size_t i = 0; i < plan->count; i++) {
		const struct dtl_fix_item *item = &plan->items[i];
		const struct dtl_loc *loc = &item->finding->loc;
		dtl_json_begin_object(&w);
		dtl_json_key_string(&w, "rule", item->finding->rule->id);
		dtl_json_key_string(&w, "message", item->finding->message);
		dtl_json_key_object(&w, "location");
		dtl_json_key_string(&w, "file", loc->file ? loc->file : "");
		dtl_json_key_uint(&w, "line", loc->line ? loc->line : 1);
		dtl_json_key_uint(&w, "column", loc->column ? loc->column : 1);
		dtl_json_end_object(&w);
		dtl_json_key_array(&w, "fixes");
		for (size_t k = 0; k < item->count; k++) {
			const struct dtl_fix *fix = &item->fixes[k];
			dtl_json_begin_object(&w);
			dtl_json_key_uint(&w, "rank", k + 1);
			dtl_json_key_string(&w, "title", fix->proposed.title);
			dtl_json_key_int(&w, "cost", fix->proposed.cost);
			dtl_json_key_uint(&w, "findings_before", fix->before);
			dtl_json_key_uint(&w, "findings_after", fix->after);
			dtl_json_key_array(&w, "creates");
			for (size_t a = 0; a < fix->appeared_count; a++)
				dtl_json_put_string(&w, fix->appeared[a]);
			dtl_json_end_array(&w);
			if (fix->edit_file) {
				dtl_json_key_object(&w, "edit");
				dtl_json_key_string(&w, "file", fix->edit_file);
				dtl_json_key_string(&w, "setting", fix->edit_setting);
				dtl_json_end_object(&w);
			} else if (fix->not_written) {
				dtl_json_key_string(&w, "code_change", fix->not_written);
			}
			dtl_json_end_object(&w);
		}
		dtl_json_end_array(&w);
		dtl_json_end_object(&w);
	}
	dtl_json_end_array(&w);
	dtl_json_end_object(&w);
	return dtl_json_finish(&w);
}
