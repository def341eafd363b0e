/* SPDX-License-Identifier: MIT */
/* DT406 merge-rounding: merging adapters into 16-bit weights rounds the update. */
#include "rule-util.h"

static int dt406_check(struct dtl_check *c)
{
	return dtl_rules_merge_check(c, false);
}

DTL_RULE(dt406) = {
    .id = "DT406",
    .name = "merge-rounding",
    .severity = DTL_SEVERITY_INFO,
    .summary = "merging adapters into 16-bit weights rounds the update",
    .explanation = "merge_and_unload adds delta.to(orig_dtype): the merged weight keeps the "
                   "base's 16-bit dtype, so a float32 (or float16) adapter's update is rounded.",
    .example = "training: {merge: true}",
    .fix = "Keep the adapter separate, or merge into a float32 copy.",
    .facts = "https://github.com/huggingface/peft/blob/5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40/"
             "src/peft/tuners/lora/layer.py#L915-L980",
    .check = dt406_check,
};
