/* SPDX-License-Identifier: MIT */
/* --statistics: findings per rule, most frequent first (ties by rule id), in flake8's and
 * ruff's "count<TAB>code<TAB>name" shape
 * (https://flake8.pycqa.org/en/latest/user/options.html#cmdoption-flake8-statistics) or as JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/core/json-writer.h"
#include "dtypelint/report/report.h"

struct stat_row {
	const struct dtl_rule *rule;
	size_t count;
};

static int compare_rows(const void *pa, const void *pb)
{
	const struct stat_row *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->rule->id, b->rule->id);
}

int dtl_report_statistics(FILE *out, const struct dtl_report_input *inputs, size_t n, bool json)
{
	size_t rule_count, used = 0;
	const struct dtl_rule *const *rules = dtl_rules_all(&rule_count);
	struct stat_row *rows = calloc(rule_count ? rule_count : 1, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	for (size_t r = 0; r < rule_count; r++)
		rows[r].rule = rules[r];
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++)
			for (size_t r = 0; r < rule_count; r++)
				if (strcmp(rules[r]->id, f[k].rule->id) == 0) {
					rows[r].count++;
					break;
				}
	}
	qsort(rows, rule_count, sizeof(*rows), compare_rows);
	while (used < rule_count && rows[used].count)
		used++;
	if (json) {
		struct dtl_json w;
		dtl_json_init(&w, out);
		dtl_json_begin_object(&w);
		dtl_json_key_uint(&w, "version", 1);
		dtl_json_key(&w, "statistics");
		dtl_json_begin_array_block(&w);
		for (size_t r = 0; r < used; r++) {
			dtl_json_begin_object(&w);
			dtl_json_key_string(&w, "rule", rows[r].rule->id);
			dtl_json_key_string(&w, "name", rows[r].rule->name);
			dtl_json_key_uint(&w, "count", rows[r].count);
			dtl_json_end_object(&w);
		}
		dtl_json_end_array(&w);
		dtl_json_end_object(&w);
	} else {
		for (size_t r = 0; r < used; r++)
			fprintf(out, "%zu\t%s\t%s\n", rows[r].count, rows[r].rule->id,
			        rows[r].rule->name);
	}
	free(rows);
	return ferror(out) ? -EIO : 0;
}
