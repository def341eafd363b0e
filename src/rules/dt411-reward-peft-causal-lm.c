/* SPDX-License-Identifier: MIT */
/* DT411 reward-peft-causal-lm: TRL's reward trainer builds a causal-LM PeftModel around its
 * sequence-classification model, which transformers >= 4.52 cannot generate with. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* The adapter's PEFT task type: its own, or, for an adapter a TRL ModelConfig recipe asked for
 * (use_peft), ModelConfig.lora_task_type's default CAUSAL_LM (trl/trainer/model_config.py at
 * v1.16.0, read by get_peft_config); NULL when unknown. */
static const char *task_type(const struct dtl_manifest *m)
{
	if (m->adapter.task_type)
		return m->adapter.task_type;
	if (m->recipe.kind && strcmp(m->recipe.kind, "TRL ModelConfig") == 0)
		return "CAUSAL_LM";
	return NULL;
}

/* The class AutoModelForSequenceClassification loads for a causal LM's checkpoint: the same
 * prefix, "ForSequenceClassification" (LlamaForCausalLM -> LlamaForSequenceClassification);
 * NULL for any other architecture. */
static const char *seq_cls_class(struct dtl_arena *arena, const char *arch)
{
	static const char suffix[] = "ForCausalLM";
	size_t n = arch ? strlen(arch) : 0, s = sizeof(suffix) - 1;

	if (n <= s || strcmp(arch + n - s, suffix) != 0)
		return NULL;
	return dtl_arena_sprintf(arena, "%.*sForSequenceClassification", (int)(n - s), arch);
}

/* DT411 — RewardTrainer loads AutoModelForSequenceClassification(num_labels=1) and calls
 * get_peft_model with the given LoraConfig (trl/trainer/reward_trainer.py at v1.16.0); task
 * type CAUSAL_LM builds a PeftModelForCausalLM, whose __init__ reads
 * base_model.prepare_inputs_for_generation (peft/peft_model.py), which a model that does not
 * inherit GenerationMixin lacks: AttributeError (rules/versions.yaml
 * transformers-seq-cls-no-generation-mixin; tests/oracle/DISAGREEMENTS.md D23). */
static int dt411_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;
	const char *trainer = sim->rp.plan.trainer, *task = task_type(m), *cls;

	if (!trainer || strcmp(trainer, "trl-reward") != 0 || sim->rp.plan.trainer_range ||
	    !m->adapter.present || !task || strcmp(task, "CAUSAL_LM") != 0 ||
	    !dtl_sim_behavior(sim, DTL_B_TRANSFORMERS_SEQ_CLS_NO_GENERATION_MIXIN) ||
	    dtl_rules_adapter_targets_nothing(sim))
		return 0; /* an adapter that targets nothing fails first, in the injection (DT410)
		           */
	if (!(cls = seq_cls_class(c->arena, m->model.architecture)))
		return 0;
	struct dtl_loc loc =
	    m->adapter.task_type_loc.line ? m->adapter.task_type_loc : m->adapter.loc;
	struct dtl_finding *f =
	    dtl_check_report(c, c->rule->severity, loc,
	                     "trl-reward wraps its %s in a causal-LM PeftModel (task type "
	                     "CAUSAL_LM), which it cannot build",
	                     cls);
	const char *error = dtl_arena_sprintf(
	    c->arena,
	    "AttributeError: '%s' object has no attribute 'prepare_inputs_for_generation'", cls);
	if (!f || !error)
		return -ENOMEM;
	dtl_check_predict(
	    c, f, error,
	    "in RewardTrainer.__init__ (get_peft_model builds a PeftModelForCausalLM), "
	    "before the first step",
	    DTL_FW_TRANSFORMERS,
	    "set the adapter's task type to SEQ_CLS (lora_task_type: SEQ_CLS in a "
	    "TRL recipe, task_type=\"SEQ_CLS\" in a LoraConfig)");
	return 0;
}

DTL_RULE(dt411) = {
    .id = "DT411",
    .name = "reward-peft-causal-lm",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "TRL's reward trainer with a CAUSAL_LM adapter cannot build its PeftModel",
    .explanation =
        "TRL's RewardTrainer loads the model as AutoModelForSequenceClassification with "
        "num_labels=1 and wraps it with get_peft_model. A LoraConfig of task type CAUSAL_LM "
        "(the default of a TRL recipe's lora_task_type) makes PEFT build a "
        "PeftModelForCausalLM, whose __init__ reads the model's "
        "prepare_inputs_for_generation; since transformers 4.52 PreTrainedModel no longer "
        "inherits GenerationMixin, a sequence-classification model has none, and "
        "RewardTrainer.__init__ dies with 'AttributeError: '<Model>ForSequenceClassification' "
        "object has no attribute 'prepare_inputs_for_generation''. Checked when the plan "
        "names trainer: trl-reward and the checkpoint is a causal LM.",
    .example = "--trainer-args with use_peft: true and no lora_task_type, --plan with "
               "trainer: trl-reward",
    .fix = "Set the adapter's task type to SEQ_CLS (lora_task_type: SEQ_CLS), which also "
           "trains the score head (modules_to_save).",
    .facts = "https://github.com/huggingface/trl/blob/v1.16.0/trl/trainer/model_config.py "
             "https://github.com/huggingface/trl/blob/v1.16.0/trl/trainer/reward_trainer.py "
             "https://github.com/huggingface/peft/blob/v0.21.2/src/peft/peft_model.py "
             "https://github.com/huggingface/transformers/pull/37173",
    .check = dt411_check,
};
