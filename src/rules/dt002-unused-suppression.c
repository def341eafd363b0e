/* SPDX-License-Identifier: MIT */
/*
 * DT002 unused-suppression. Suppressions (the manifest's `suppress:` list and inline
 * `# dtypelint: ignore[...]` comments) are applied after every other rule has run, by the
 * lint library (src/lint/suppressions.c): a suppression can only be known to be unused once
 * all findings exist. It hands over what each suppression silenced; the findings are made here.
 */

#include <errno.h>
#include <stdint.h>

#include "rule-check.h"

/* Findings of DT002 are made once suppressions are applied (dtl_rules_unused_suppressions);
 * the rule pass adds none. */
static int dt002_check(struct dtl_check *c)
{
	(void)c;
	return 0;
}

/* Could the selector's rules have produced findings in this run? */
static bool checkable(const char *selector, const struct dtl_rule_selection *selection)
{
	size_t n;
	const struct dtl_rule *const *rules = dtl_rules_all(&n);

	for (size_t i = 0; i < n; i++)
		if (dtl_rule_matches(rules[i], selector) && dtl_rule_selected(rules[i], selection))
			return true;
	return false;
}

/* Why u is reported (it names no rule, or silenced nothing); NULL when out of memory. */
static const char *message(const struct dtl_suppression_use *u, struct dtl_arena *arena)
{
	const char *kind = u->inline_comment ? "inline suppression" : "suppression";

	if (!dtl_rules_selector_known(u->rule))
		return dtl_arena_sprintf(arena, "%s names no rule this dtypelint knows: '%s'", kind,
		                         u->rule);
	if (u->tensors)
		return dtl_arena_sprintf(arena, "%s of %s for tensors '%s' matches no finding",
		                         kind, u->rule, u->tensors);
	return dtl_arena_sprintf(arena, "%s of %s matches no finding", kind, u->rule);
}

int dtl_rules_unused_suppressions(const struct dtl_suppression_use *uses, size_t count,
                                  const struct dtl_rule_selection *selection,
                                  struct dtl_arena *arena, struct dtl_findings *findings)
{
	const struct dtl_rule *dt002 = dtl_rule_find("DT002");

	if (!dt002 || !dtl_rule_selected(dt002, selection))
		return 0;
	for (size_t k = 0; k < count; k++) {
		const struct dtl_suppression_use *u = &uses[k];
		/* a suppression whose rules did not run cannot be known to be unused */
		if (dtl_rules_selector_known(u->rule) &&
		    (u->used || !checkable(u->rule, selection)))
			continue;
		const char *text = message(u, arena);
		struct dtl_finding *f =
		    text ? dtl_vec_push(&findings->items, arena, sizeof(*f)) : NULL;
		if (!f)
			return -ENOMEM;
		f->rule = dt002;
		f->severity = dt002->severity;
		f->loc = u->loc;
		f->message = text;
		f->fix = "delete the suppression, or correct its rule or tensors glob";
		f->sort_tensor = UINT32_MAX;
	}
	return 0;
}

DTL_RULE(dt002) = {
    .id = "DT002",
    .name = "unused-suppression",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a suppression matches no finding",
    .explanation =
        "A suppression silences the findings of one rule: an entry of the manifest's "
        "`suppress:` list (rule, optional tensors glob, reason) or an inline YAML comment "
        "`# dtypelint: ignore[RULE] reason` on the line a finding points at, on the line of "
        "a tensor it names, or alone on the line above either. A suppression that silences "
        "nothing is stale: the problem it hid was fixed, the tensors were renamed, or the "
        "rule id is misspelt. Left in place it would hide the next, unrelated finding of "
        "that rule. A suppression is checked only when its rule ran (see --select and "
        "--ignore); one that names no rule this dtypelint knows is always reported.",
    .example = "tensors:\n"
               "  - {name: model.norm.weight, shape: [64], dtype: bfloat16}\n"
               "suppress:\n"
               "  - {rule: DT101, tensors: \"model.visual.**\", reason: \"vision tower "
               "stays fp32\"}",
    .fix = "Delete the suppression, or correct its rule or tensors glob so that it matches "
           "the finding it is meant to silence.",
    .facts = "https://github.com/astral-sh/ruff/blob/11c76bf48fdac06b2f240cba502eda96da4dce77/docs/"
             "linter.md?plain=1#L24-L146 (ruff's RUF100 unused-noqa)",
    .check = dt002_check,
};
