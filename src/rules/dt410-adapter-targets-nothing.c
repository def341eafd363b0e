/* SPDX-License-Identifier: MIT */
/* DT410 adapter-targets-nothing: the adapter's target_modules match no module, so PEFT
 * refuses to inject it. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* PEFT's message prints peft_config.target_modules: a string as it is, a list as the set
 * LoraConfig made of it ({'q_proj', 'v_proj'}; a set's order is the hash's, the list's here). */
static const char *targets_text(struct dtl_check *c)
{
	const struct dtl_adapter *a = &c->sim->manifest->adapter;
	const char *text = "{";

	if (c->sim->peft_target_regex)
		return c->sim->peft_target_regex;
	for (size_t i = 0; text && i < a->target_modules.count; i++)
		text = dtl_arena_sprintf(c->arena, "%s%s'%.*s'", text, i ? ", " : "",
		                         (int)a->target_modules.items[i].len,
		                         a->target_modules.items[i].text);
	return text ? dtl_arena_sprintf(c->arena, "%s}", text) : NULL;
}

/* DT410 — get_peft_model raises when target_modules match no module of the model
 * (peft/tuners/tuners_utils.py inject_adapter: NoMatchingPeftModuleError from 0.21.0,
 * rules/versions.yaml peft-no-matching-module-error; ValueError before). A one-item
 * lora_target_modules of a TRL recipe is a regular expression (trl-one-target-is-regex),
 * which a bare module name never full-matches (tests/oracle/DISAGREEMENTS.md D18). Only when
 * the model's modules are known (a model folder or a manifest's tensors), nothing targets
 * parameters, and the targets are not all-linear. */
static int dt410_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_adapter *a = &sim->manifest->adapter;

	if (!dtl_rules_adapter_targets_nothing(sim))
		return 0;
	const char *targets = targets_text(c);
	if (!targets)
		return -ENOMEM;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, a->target_modules.loc, "target_modules %s match no module%s",
	    targets,
	    sim->peft_target_regex && a->target_one_item_regex
	        ? ": TRL's ModelConfig made the list of one name a regular expression, which "
	          "PEFT matches against each module's whole path"
	        : "");
	if (!f)
		return -ENOMEM;
	const char *type = dtl_sim_behavior(sim, DTL_B_PEFT_NO_MATCHING_MODULE_ERROR)
	                       ? "NoMatchingPeftModuleError"
	                       : "ValueError";
	const char *error = dtl_arena_sprintf(c->arena,
	                                      "%s: Target modules %s not found in the base "
	                                      "model. Please check the target modules and try "
	                                      "again.",
	                                      type, targets);
	if (!error)
		return -ENOMEM;
	dtl_check_predict(
	    c, f, error, "in get_peft_model (in a TRL trainer's __init__ when it wraps the model)",
	    DTL_FW_PEFT,
	    sim->peft_target_regex && a->target_one_item_regex
	        ? dtl_arena_sprintf(c->arena,
	                            "write the one target as a regular expression of the whole "
	                            "path ('.*\\.%s'), or list two names or more, which stay a "
	                            "list",
	                            targets)
	        : "name modules the model has (their last path components, or a regular "
	          "expression of the whole path)");
	return 0;
}

DTL_RULE(dt410) = {
    .id = "DT410",
    .name = "adapter-targets-nothing",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the adapter's target_modules match no module of the model",
    .explanation =
        "get_peft_model injects adapters into the modules target_modules names: a list "
        "matches a module whose path is an item or ends in '.' and an item; a string is a "
        "regular expression that must match the module's whole path (re.fullmatch). When "
        "nothing matches, PEFT raises 'Target modules ... not found in the base model. "
        "Please check the target modules and try again.' (NoMatchingPeftModuleError from "
        "PEFT 0.21, ValueError before). TRL's ModelConfig (trl sft, trl dpo, ... recipes, "
        "from TRL 0.9.6) turns a lora_target_modules list of one item into that item, a "
        "string: [query_key_value] is then a regular expression that no module path "
        "full-matches.",
    .example = "--trainer-args with use_peft: true and lora_target_modules: "
               "[query_key_value] on a GPT-NeoX folder",
    .fix = "Name modules the model has; in a TRL recipe, write one target as a regular "
           "expression of its whole path ('.*\\.query_key_value') or list two or more.",
    .facts = "https://github.com/huggingface/trl/blob/v1.16.0/trl/trainer/model_config.py "
             "https://github.com/huggingface/peft/blob/v0.21.0/src/peft/tuners/tuners_utils.py",
    .check = dt410_check,
};
