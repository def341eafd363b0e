/* SPDX-License-Identifier: MIT */
/* DT001 input-error: an input could not be read. */
#include "rule-check.h"

/* Findings of DT001 are made where inputs are read; the rule pass adds none. */
static int dt001_check(struct dtl_check *c)
{
	(void)c;
	return 0;
}

DTL_RULE(dt001) = {
    .id = "DT001",
    .name = "input-error",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an input could not be read",
    .explanation =
        "An input named on the command line, or a file it refers to (a plan, a DeepSpeed "
        "JSON, an accelerate YAML, adapter_config.json, trainer arguments, a model folder's "
        "config and shards, the .dtypelint.yaml that applies to it), could not be read: it is "
        "missing or unreadable, is not valid JSON or YAML, breaks the manifest schema, is over "
        "a limit, or resolves outside the folders dtypelint reads from. The message says what "
        "and where. The other inputs are still linted and the report is written in full (also "
        "with -o and --exit-zero), but the exit status is 2, whatever --exit-zero, --select, "
        "--ignore, suppressions and baselines say: a set-up that was not read was not "
        "checked.",
    .example = "tensors:\n"
               "  - {name: model.norm.weight, shape: [64], dtype: bfloat16\n"
               "# a flow mapping left open: the file is no YAML",
    .fix = "Correct the file at the position the message gives, or drop it from the command "
           "line.",
    .facts = "https://docs.astral.sh/ruff/rules/io-error/ (ruff's E902: a file that cannot be "
             "read is a diagnostic of its own, and the other files are still linted)",
    .check = dt001_check,
};
