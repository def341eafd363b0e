/* SPDX-License-Identifier: MIT */
/* DT407 recipe-refuses-prequantized: the recipe refuses a pre-quantized checkpoint under ZeRO-3 or
 * FSDP. */

#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* DT407 — LLaMA-Factory refuses a checkpoint that is already quantized (any method but MXFP4
 * and FP8, which it dequantizes) under ZeRO-3 or FSDP, before transformers loads it
 * (model_utils/quantization.py configure_quantization). */
static int dt407_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;
	const char *method = m->quantization.checkpoint_method;

	if (!m->recipe.kind || strcmp(m->recipe.kind, "LLaMA-Factory") != 0 || !method ||
	    !strcmp(method, "mxfp4") || !strcmp(method, "fp8") || !dtl_rules_sharded(sim))
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, m->quantization.checkpoint_method_loc,
	    "LLaMA-Factory refuses a checkpoint already quantized with %s under %s", method,
	    dtl_rules_strategy_label(sim));
	if (!f)
		return -ENOMEM;
	f->error_text = "ValueError: DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized "
	                "models.";
	/* the recipe raises, not a framework whose version the plan tracks: name it */
	f->error_versions = "LLaMA-Factory";
	f->error_when = "when it configures quantization, before the model loads";
	f->fix = "start from the unquantized model and let LLaMA-Factory quantize it "
	         "(quantization_bit: 4, which packs 4-bit weights in the compute dtype for FSDP "
	         "and ZeRO-3), or train the quantized checkpoint without sharding";
	return 0;
}

DTL_RULE(dt407) = {
    .id = "DT407",
    .name = "recipe-refuses-prequantized",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the recipe refuses a pre-quantized checkpoint under ZeRO-3 or FSDP",
    .explanation =
        "LLaMA-Factory reads config.json's quantization_config before it loads a model. A "
        "checkpoint that is already quantized (bitsandbytes, GPTQ, AWQ, ...; MXFP4 and FP8 "
        "are dequantized instead) under DeepSpeed ZeRO-3 or FSDP stops there: 'ValueError: "
        "DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized models.' "
        "(model_utils/quantization.py). quantization_bit does not change it: it only warns "
        "that it has no effect on such models.",
    .example = "an HF folder with quantization_config {quant_method: bitsandbytes}, "
               "--trainer-args with quantization_bit: 4, --accelerate with distributed_type: "
               "FSDP",
    .fix = "Quantize at load from the unquantized model (quantization_bit: 4), or train "
           "without sharding.",
    .facts =
        "https://github.com/hiyouga/LLaMA-Factory/blob/ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30/"
        "src/llamafactory/model/model_utils/quantization.py#L94-L105",
    .check = dt407_check,
};
