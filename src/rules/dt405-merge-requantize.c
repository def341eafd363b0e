/* SPDX-License-Identifier: MIT */
/* DT405 merge-requantize: merge_and_unload into quantized weights requantizes them. */
#include "rule-util.h"

static int dt405_check(struct dtl_check *c)
{
	return dtl_rules_merge_check(c, true);
}

DTL_RULE(dt405) = {
    .id = "DT405",
    .name = "merge-requantize",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "merge_and_unload into quantized weights requantizes them",
    .explanation = "Merging LoRA into a 4-bit or 8-bit base dequantizes, adds the delta and "
                   "quantizes again; peft warns that generations may differ.",
    .example = "quantization: {method: bnb-4bit}\ntraining: {merge: true}",
    .fix = "Merge into a 16-bit copy of the base model.",
    .facts = "https://github.com/huggingface/peft/blob/5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40/"
             "src/peft/tuners/lora/layer.py#L915-L980",
    .check = dt405_check,
};
