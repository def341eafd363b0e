/* SPDX-License-Identifier: MIT */
/* DT408 trainer-refuses-quantized-base: the HF Trainer refuses a quantized model that has no
 * adapter to train. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* The trainers built on transformers' Trainer: every trainer a plan names but none and verl
 * (TRL's trainers subclass it). */
static bool hf_trainer_based(const char *trainer)
{
	return trainer && (strcmp(trainer, "hf-trainer") == 0 || strncmp(trainer, "trl-", 4) == 0);
}

/* A quantizer whose model trains without an adapter (hf_quantizer.is_qat_trainable: bitnet's
 * autobitlinear, compressed-tensors, fp_quant), so validate_quantization_for_training lets it
 * pass; a bitsandbytes model never does. */
static bool qat_trainable(const char *method)
{
	return method && (strcmp(method, "compressed-tensors") == 0 ||
	                  strcmp(method, "bitnet") == 0 || strcmp(method, "fp_quant") == 0);
}

static bool has_adapter(const struct dtl_sim *sim)
{
	if (sim->manifest->adapter.present)
		return true;
	for (uint32_t t = 0; t < sim->t.count; t++)
		if (sim->t.flags[t] & DTL_TF_ADAPTER)
			return true;
	return false;
}

/* DT408 — transformers' Trainer.__init__ calls validate_quantization_for_training, which
 * raises when the model is quantized (model.is_quantized: bitsandbytes at load or a
 * pre-quantized checkpoint) and is no PEFT model (rules/versions.yaml
 * hf-trainer-refuses-quantized-base; tests/oracle/DISAGREEMENTS.md D14). */
static int dt408_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_quantization *q = &sim->manifest->quantization;

	/* a trainer no input names (the lint then varies it: trainer_range) is not enough: a
	 * model with no adapter in the files read most often gets one from code dtypelint does
	 * not see, so only a named trainer is held to it */
	if (!hf_trainer_based(sim->rp.plan.trainer) || sim->rp.plan.trainer_range ||
	    !dtl_sim_behavior(sim, DTL_B_HF_TRAINER_REFUSES_QUANTIZED_BASE) ||
	    (q->method == DTL_QUANT_NONE && !q->checkpoint_method) ||
	    qat_trainable(q->checkpoint_method) || has_adapter(sim))
		return 0;
	struct dtl_loc loc = q->method_loc.line ? q->method_loc
	                     : q->loc.line      ? q->loc
	                                        : q->checkpoint_method_loc;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, loc,
	    "%s refuses a quantized model with no adapter: nothing in it can be trained",
	    sim->rp.plan.trainer);
	if (!f)
		return -ENOMEM;
	dtl_check_predict(c, f,
	                  "ValueError: You cannot perform fine-tuning on purely quantized models. "
	                  "Please attach trainable adapters on top of the quantized model to "
	                  "correctly perform fine-tuning. Please see: "
	                  "https://huggingface.co/docs/transformers/peft for more details",
	                  "in Trainer.__init__ (validate_quantization_for_training), before the "
	                  "first step",
	                  DTL_FW_TRANSFORMERS,
	                  "attach an adapter (use_peft: true with lora_target_modules, or "
	                  "get_peft_model before the trainer), or train the unquantized model");
	return 0;
}

DTL_RULE(dt408) = {
    .id = "DT408",
    .name = "trainer-refuses-quantized-base",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the HF Trainer refuses a quantized model that has no adapter",
    .explanation =
        "transformers' Trainer (and every TRL trainer, which subclasses it) checks the model "
        "in __init__: a quantized model (bitsandbytes 4-bit or 8-bit at load, or a "
        "checkpoint stored quantized) that is no PEFT model has nothing it can train, and "
        "validate_quantization_for_training raises 'ValueError: You cannot perform "
        "fine-tuning on purely quantized models. Please attach trainable adapters on top "
        "of the quantized model ...'. Quantizers that support quantization-aware training "
        "(bitnet's autobitlinear, compressed-tensors, fp_quant) pass. Checked when an "
        "input names the trainer (the plan's trainer, or a recipe that implies one): with "
        "none named, the adapter may come from code dtypelint does not read.",
    .example = "--trainer-args with load_in_4bit: true and no use_peft, --plan with "
               "trainer: hf-trainer",
    .fix = "Attach a LoRA adapter (use_peft: true), or train the model unquantized.",
    .facts = "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/"
             "trainer_utils.py",
    .check = dt408_check,
};
