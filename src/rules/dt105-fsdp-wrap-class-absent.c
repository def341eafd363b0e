/* SPDX-License-Identifier: MIT */
/* DT105 fsdp-wrap-class-absent: the model's own _no_split_modules names a class it never
 * builds, so accelerate's TRANSFORMER_BASED_WRAP cannot find it. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* Whether the model's list names the absent class ITEM at the plan's versions: an entry with
 * a behaviour only where it is in force (LLaVA's CLIPTextEmbeddings from transformers 5.6.0:
 * transformers-clip-vision-no-split-text-embeddings, tests/oracle/DISAGREEMENTS.md D35) */
static bool absent(const struct dtl_sim *sim, const struct dtl_profile *p,
                   const struct dtl_pattern *item)
{
	for (size_t i = 0; i < p->no_split_absent.count; i++) {
		uint16_t gate = p->no_split_absent_gates ? p->no_split_absent_gates[i] : 0;
		if (p->no_split_absent.items[i].len == item->len &&
		    memcmp(p->no_split_absent.items[i].text, item->text, item->len) == 0)
			return !gate || dtl_sim_behavior(sim, (enum dtl_behavior)(gate - 1));
	}
	return false;
}

/* The wrap list without the absent classes, for the fix: "A,B" (NULL on out of memory). */
static const char *present_classes(struct dtl_check *c, const struct dtl_profile *p)
{
	const struct dtl_patterns *wrap = &c->sim->rp.wrap;
	const char *out = "";

	for (size_t i = 0; out && i < wrap->count; i++)
		if (!absent(c->sim, p, &wrap->items[i]))
			out = dtl_arena_sprintf(c->arena, "%s%s%.*s", out, *out ? "," : "",
			                        (int)wrap->items[i].len, wrap->items[i].text);
	return out;
}

/* DT105 — accelerate's set_auto_wrap_policy (FSDP1) and fsdp2_prepare_auto_wrap_policy
 * (FSDP2) take model._no_split_modules when no class is named and raise for a name no module
 * of the model has (rules/versions.yaml recipes: accelerate-wrap-class-missing). Only the
 * classes an architecture profile lists under no_split_absent, read in source (LLaVA's CLIP
 * vision tower brings CLIPTextEmbeddings: tests/oracle/DISAGREEMENTS.md D6): a profile's
 * module map does not list every class a model builds. Not when the HF Trainer hands a PEFT
 * model to PEFT's own wrap policy (rp.peft_wrap_policy), which raises its own error. */
static int dt105_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_profile *p = sim->model.profile;

	if ((rp->plan.strategy != DTL_STRATEGY_FSDP1 && rp->plan.strategy != DTL_STRATEGY_FSDP2) ||
	    !rp->plan.fsdp.transformer_based_wrap || !rp->wrap_from_model ||
	    !sim->model.no_split_from_profile || !p || rp->peft_wrap_policy)
		return 0;
	for (size_t i = 0; i < rp->wrap.count; i++) {
		const struct dtl_pattern *item = &rp->wrap.items[i];
		if (!absent(sim, p, item))
			continue;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, item->loc,
		    "%s's _no_split_modules names %.*s, a class the model does not build: "
		    "accelerate's TRANSFORMER_BASED_WRAP cannot find it",
		    p->architecture, (int)item->len, item->text);
		const char *error = dtl_arena_sprintf(c->arena,
		                                      "ValueError: Could not find the transformer "
		                                      "layer class %.*s in the model.",
		                                      (int)item->len, item->text);
		const char *classes = present_classes(c, p);
		/* a list of absent classes only (LLaVA's ["LlavaVisionAttention"] up to 4.51.3)
		 * leaves no class to keep: the user names the model's layers */
		const char *fix =
		    !classes   ? NULL
		    : *classes ? dtl_arena_sprintf(c->arena,
		                                   "name the classes to wrap: "
		                                   "fsdp_transformer_layer_cls_to_wrap: %s",
		                                   classes)
		               : "name the classes to wrap in fsdp_transformer_layer_cls_to_wrap: "
		                 "the model's own layer classes (its list names none it builds)";
		if (!f || !error || !fix)
			return -ENOMEM;
		dtl_check_predict(c, f, error,
		                  "in accelerate's prepare, when it builds the auto-wrap policy",
		                  DTL_FW_ACCELERATE, fix);
		return 0;
	}
	return 0;
}

DTL_RULE(dt105) = {
    .id = "DT105",
    .name = "fsdp-wrap-class-absent",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the model's _no_split_modules names a class it does not build",
    .explanation =
        "With fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP and no class named, accelerate "
        "wraps the classes of model._no_split_modules and looks each up among the model's "
        "modules; one it does not find raises 'ValueError: Could not find the transformer "
        "layer class X in the model.' before anything is sharded. transformers gathers "
        "the list from every submodel (from 5.1.0), and from 5.6.0 a vision-only CLIP "
        "vision tower brings CLIPTextEmbeddings, which it does not build (LLaVA); older "
        "transformers 4 releases named LlavaVisionAttention, which no LLaVA builds either. "
        "Checked for the classes an architecture profile lists under no_split_absent, in "
        "the versions its entry names.",
    .example = "a LLaVA folder (LlavaForConditionalGeneration), --accelerate with "
               "distributed_type: FSDP and fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP",
    .fix = "Name the classes to wrap (fsdp_transformer_layer_cls_to_wrap: "
           "CLIPEncoderLayer,LlamaDecoderLayer).",
    .facts = "https://github.com/huggingface/accelerate/blob/v1.15.0/src/accelerate/utils/"
             "dataclasses.py "
             "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/"
             "modeling_utils.py",
    .check = dt105_check,
};
