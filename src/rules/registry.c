/* SPDX-License-Identifier: MIT */
/* The rule registry: lookup, selection, running, deterministic ordering. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rule-check.h"

const struct dtl_rule *const *dtl_rules_all(size_t *ret_count)
{
	*ret_count = dtl_rule_registry_count;
	return dtl_rule_registry;
}

const struct dtl_rule *dtl_rule_find(const char *id_or_name)
{
	for (size_t i = 0; i < dtl_rule_registry_count; i++)
		if (strcasecmp(dtl_rule_registry[i]->id, id_or_name) == 0 ||
		    strcmp(dtl_rule_registry[i]->name, id_or_name) == 0)
			return dtl_rule_registry[i];
	return NULL;
}

static const char *const severity_names[] = {"info", "warning", "error"};

const char *dtl_severity_name(enum dtl_severity severity)
{
	return severity_names[severity];
}

int dtl_severity_parse(const char *text, enum dtl_severity *ret_severity)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(text, severity_names[i]) == 0) {
			*ret_severity = (enum dtl_severity)i;
			return 0;
		}
	return -EINVAL;
}

bool dtl_rule_matches(const struct dtl_rule *rule, const char *entry)
{
	size_t n = strlen(entry);
	if (strcmp(entry, "ALL") == 0 || strcmp(rule->name, entry) == 0)
		return true;
	return n > 0 && n <= strlen(rule->id) && strncasecmp(rule->id, entry, n) == 0;
}

bool dtl_rules_selector_known(const char *selector)
{
	size_t n;
	const struct dtl_rule *const *rules = dtl_rules_all(&n);

	for (size_t i = 0; i < n; i++)
		if (dtl_rule_matches(rules[i], selector))
			return true;
	return false;
}

bool dtl_rule_selected(const struct dtl_rule *rule, const struct dtl_rule_selection *selection)
{
	bool selected = selection->select_count == 0;

	for (size_t i = 0; i < selection->select_count && !selected; i++)
		selected = dtl_rule_matches(rule, selection->select[i]);
	for (size_t i = 0; i < selection->ignore_count && selected; i++)
		selected = !dtl_rule_matches(rule, selection->ignore[i]);
	return selected;
}

bool dtl_rule_asked(const struct dtl_rule *rule, const struct dtl_rule_selection *selection)
{
	for (size_t i = 0; i < selection->select_count; i++)
		if (strcmp(selection->select[i], "ALL") != 0 &&
		    dtl_rule_matches(rule, selection->select[i]))
			return dtl_rule_selected(rule, selection);
	return false;
}

static int validate_list(const char *const *entries, size_t count, const char *option,
                         struct dtl_error *error)
{
	for (size_t i = 0; i < count; i++) {
		bool known = false;
		for (size_t k = 0; k < dtl_rule_registry_count && !known; k++)
			known = dtl_rule_matches(dtl_rule_registry[k], entries[i]);
		if (!known) {
			struct dtl_loc loc = {.file = "dtypelint"};
			return dtl_error_set(error, loc, -EINVAL,
			                     "%s: '%s' names no rule (see --list-rules)", option,
			                     entries[i]);
		}
	}
	return 0;
}

int dtl_rule_selection_validate(const struct dtl_rule_selection *selection, struct dtl_error *error)
{
	int r = validate_list(selection->select, selection->select_count, "--select", error);
	return r < 0 ? r
	             : validate_list(selection->ignore, selection->ignore_count, "--ignore", error);
}

static int compare_findings(const void *pa, const void *pb)
{
	const struct dtl_finding *a = pa, *b = pb;
	/* the findings of one file share its name: no compare */
	int c = a->loc.file == b->loc.file
	            ? 0
	            : strcmp(a->loc.file ? a->loc.file : "", b->loc.file ? b->loc.file : "");

	if (c)
		return c;
	if (a->loc.line != b->loc.line)
		return a->loc.line < b->loc.line ? -1 : 1;
	if (a->loc.column != b->loc.column)
		return a->loc.column < b->loc.column ? -1 : 1;
	c = strcmp(a->rule->id, b->rule->id);
	if (c)
		return c;
	if (a->sort_tensor != b->sort_tensor)
		return a->sort_tensor < b->sort_tensor ? -1 : 1;
	return strcmp(a->message, b->message);
}

int dtl_rules_run(const struct dtl_sim *sim, const struct dtl_rule_selection *selection,
                  const struct dtl_op_oracle *ops, struct dtl_findings *findings,
                  struct dtl_error *error)
{
	struct dtl_check check = {
	    .sim = sim, .ops = ops, .findings = findings, .arena = sim->arena};

	(void)error;
	for (size_t i = 0; i < dtl_rule_registry_count; i++) {
		if (!dtl_rule_selected(dtl_rule_registry[i], selection))
			continue;
		check.rule = dtl_rule_registry[i];
		check.asked = dtl_rule_asked(check.rule, selection);
		int r = dtl_rule_registry[i]->check(&check);
		if (r < 0)
			return r;
	}
	dtl_findings_sort(findings);
	return 0;
}

/* Ties (the same place, rule, tensor and message) keep their order: the address is the order
 * they were reported in. */
static int compare_finding_refs(const void *pa, const void *pb)
{
	const struct dtl_finding *a = *(const struct dtl_finding *const *)pa;
	const struct dtl_finding *b = *(const struct dtl_finding *const *)pb;
	int c = compare_findings(a, b);

	return c ? c : (a > b) - (a < b);
}

void dtl_findings_sort(struct dtl_findings *findings)
{
	size_t n = findings->items.count;
	struct dtl_finding *items = findings->items.items;

	if (n < 2)
		return;
	/* findings are large: sort references, then move each finding once (qsort of the
	 * findings themselves copied them at every merge) */
	const struct dtl_finding **order = malloc(n * sizeof(*order));
	struct dtl_finding *sorted = malloc(n * sizeof(*sorted));
	if (!order || !sorted) {
		free(order);
		free(sorted);
		qsort(items, n, sizeof(*items), compare_findings);
		return;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = &items[i];
	qsort(order, n, sizeof(*order), compare_finding_refs);
	for (size_t i = 0; i < n; i++)
		sorted[i] = *order[i];
	memcpy(items, sorted, n * sizeof(*items));
	free(order);
	free(sorted);
}
