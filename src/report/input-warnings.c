/* SPDX-License-Identifier: MIT */
/*
 * The importers' warnings (DT003 input-warning: a near-miss key, a launch argument not read, a
 * request the checkpoint overrides) in the report formats. They are not findings of the
 * simulation and never count towards --fail-on, but a JSON, SARIF or CI-annotation consumer
 * sees only the report, not standard error: a run that read less than it was given must not
 * look clean there (issue 32). json puts them in "input_warnings"; the formats that show one
 * finding per alert, annotation or section get each as a DT003 finding of severity warning.
 */
#include <errno.h>
#include <string.h>

#include "report-private.h"

size_t dtl_report_warning_count(const struct dtl_report_input *inputs, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		count += inputs[i].warnings ? inputs[i].warnings->count : 0;
	return count;
}

void dtl_report_warning_finding(const struct dtl_input_warning *w, struct dtl_finding *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->rule = dtl_rule_find("DT003");
	ret->severity = DTL_SEVERITY_WARNING;
	ret->message = w->message ? w->message : "";
	ret->loc = w->loc;
}

/* One input's findings followed by its warnings as findings, sorted together, into *ret */
static int merge(struct dtl_arena *arena, const struct dtl_report_input *in,
                 struct dtl_findings **ret)
{
	struct dtl_findings *merged = dtl_arena_calloc(arena, 1, sizeof(*merged));
	const struct dtl_input_warning *w = in->warnings->items;
	size_t had = in->findings ? in->findings->items.count : 0;
	size_t total = had + in->warnings->count;
	struct dtl_finding *items = dtl_arena_calloc(arena, total, sizeof(*items));

	if (!merged || !items)
		return -ENOMEM;
	if (had)
		memcpy(items, in->findings->items.items, had * sizeof(*items));
	for (size_t k = 0; k < in->warnings->count; k++)
		dtl_report_warning_finding(&w[k], &items[had + k]);
	merged->items = (struct dtl_vec){.items = items, .count = total, .capacity = total};
	dtl_findings_sort(merged);
	*ret = merged;
	return 0;
}

int dtl_report_with_warnings(struct dtl_arena *arena, const struct dtl_report_input *inputs,
                             size_t n, const struct dtl_report_input **ret)
{
	struct dtl_report_input *copy;

	*ret = inputs;
	if (!dtl_report_warning_count(inputs, n) || !dtl_rule_find("DT003"))
		return 0;
	if (!(copy = dtl_arena_calloc(arena, n, sizeof(*copy))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct dtl_findings *merged;
		int r;
		copy[i] = inputs[i];
		if (!inputs[i].warnings || !inputs[i].warnings->count)
			continue;
		if ((r = merge(arena, &inputs[i], &merged)) < 0)
			return r;
		copy[i].findings = merged;
	}
	*ret = copy;
	return 0;
}
