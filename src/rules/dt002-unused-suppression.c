/* SPDX-License-Identifier: MIT */
/* DT002 unused-suppression: a suppression matches no finding. */

#include "check.h"

/* Findings of DT002 are made where suppressions are applied; the rule pass adds none. */
static int dt002_check(struct dtl_check *c)
{
	(void)c;
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
