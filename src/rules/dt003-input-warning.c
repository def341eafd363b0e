/* SPDX-License-Identifier: MIT */
/*
 * DT003 input-warning. The importers warn about what they read but do not use: a key that is
 * a near miss of one they read (a typo that would silently change the set-up) and a request
 * that the checkpoint overrides. They are found while inputs are read, before any rule runs,
 * and the command line prints them on standard error with this rule's id, so that problem
 * matchers and `--ignore` treat them as the other findings; the reports carry them too
 * (src/report/input-warnings.c), so that a JSON or SARIF consumer never sees a clean run.
 */
#include <errno.h>

#include "rule-check.h"

/* The warnings are the importers' (struct dtl_input_warning, printed by src/cli/lint-inputs.c); the
 * rule pass adds none. */
static int dt003_check(struct dtl_check *c)
{
	(void)c;
	return 0;
}

DTL_RULE(dt003) = {
    .id = "DT003",
    .name = "input-warning",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "an input holds a key dtypelint does not read, or a request the checkpoint "
               "overrides",
    .explanation =
        "While reading a recipe (--trainer-args), dtypelint warns about what it reads but "
        "will not use: a key that is one or two edits away from a key it reads "
        "(`bnb_4bit_quant_storge` for `bnb_4bit_quant_storage`), which the trainer would "
        "also ignore or refuse, and a request the checkpoint overrides (8-bit loading asked "
        "of a checkpoint stored 4-bit: transformers keeps the checkpoint's own "
        "quantization_config). The set-up is linted as the framework would run it, without "
        "the key or the request. The warning goes to standard error as `file:line:col: "
        "warning: ... [DT003 input-warning]` and into the report: json's input_warnings, "
        "a json-lines object, and a DT003 warning in sarif (a result), github (a "
        "::warning command, instead of the standard error line), gitlab, markdown and "
        "html. It never makes the exit status 1; --ignore DT003 silences it (--select does "
        "not, since it is about the inputs rather than the set-up).",
    .example = "# recipe.yaml, given with --trainer-args\n"
               "load_in_4bit: true\n"
               "bnb_4bit_quant_storge: bfloat16",
    .fix = "Correct the key's spelling, or remove the request the checkpoint overrides.",
    .facts = "https://github.com/huggingface/transformers/blob/v4.57.0/src/transformers/"
             "utils/quantization_config.py",
    .check = dt003_check,
};
