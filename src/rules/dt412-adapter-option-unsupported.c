/* SPDX-License-Identifier: MIT */
/* DT412 adapter-option-unsupported: the adapter sets a LoraConfig option its PEFT version does
 * not have. */
#include <errno.h>

#include "rule-util.h"

/* What the adapter's config says, for the finding: the first target parameter and whether
 * there are more. */
static const char *first_target(struct dtl_check *c)
{
	const struct dtl_patterns *tp = &c->sim->manifest->adapter.target_parameters;

	return dtl_arena_sprintf(c->arena, "'%.*s'%s", (int)tp->items[0].len, tp->items[0].text,
	                         tp->count > 1 ? ", ..." : "");
}

/* A config file PEFT >= 0.14 loads drops the key with a warning (rules/versions.yaml
 * peft-config-drops-unknown-keys: PeftConfigMixin.from_peft_type catches the TypeError and
 * calls the class again without the keys its signature lacks): no LoRA on the parameters. */
static int dropped(struct dtl_check *c, struct dtl_loc loc, const char *targets)
{
	struct dtl_finding *f = dtl_check_report(
	    c, DTL_SEVERITY_WARNING, loc,
	    "the adapter's config sets target_parameters (%s), which this PEFT's LoraConfig does "
	    "not have (they arrived in 0.17.0): loading the config drops them",
	    targets);
	if (!f)
		return -ENOMEM;
	f->effect = "UserWarning: Unexpected keyword arguments ['target_parameters'] for class "
	            "LoraConfig, these are ignored; the parameters get no LoRA and the adapter's "
	            "tensors for them are not loaded";
	f->error_versions = dtl_check_version(c, DTL_FW_PEFT);
	f->fix = "use a peft release with target_parameters (>= 0.17.0, PR #2638)";
	return 0;
}

/* ParamWrapper.__init__ (peft/tuners/lora/layer.py, 0.17.0 to 0.21.2) refuses the options it
 * cannot apply to a bare parameter: "ValueError: lora.ParamWrapper does not work with
 * lora_dropout != 0." (and with use_dora=True), raised in get_peft_model for the first target
 * parameter. TRL's ModelConfig defaults lora_dropout to 0.05. */
static int param_wrapper_refuses(struct dtl_check *c, const char *targets)
{
	const struct dtl_adapter *a = &c->sim->manifest->adapter;
	bool dropout = a->lora_dropout > 0;
	struct dtl_loc loc = dropout                ? a->lora_dropout_loc
	                     : a->use_dora_loc.line ? a->use_dora_loc
	                                            : a->loc;

	if (!dropout && a->use_dora != DTL_TRUE)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, loc,
	    "the adapter's target_parameters (%s) come with %s, which PEFT's ParamWrapper does "
	    "not support",
	    targets,
	    dropout ? dtl_arena_sprintf(c->arena, "lora_dropout %g", a->lora_dropout)
	            : "use_dora=True");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f,
	    dropout ? "ValueError: lora.ParamWrapper does not work with lora_dropout "
	              "!= 0."
	            : "ValueError: lora.ParamWrapper does not work with use_dora=True.",
	    "in get_peft_model, when it wraps the first target parameter", DTL_FW_PEFT,
	    dropout ? "set lora_dropout: 0 (TRL's ModelConfig defaults it to 0.05), "
	              "or put the parameters in an adapter of their own without "
	              "dropout"
	            : "use plain LoRA for the target parameters (no DoRA)");
	return 0;
}

/* rules/versions.yaml peft-lora-target-parameters: LoraConfig has target_parameters from
 * 0.17.0 (PR #2638). Before, the dataclass's __init__ refuses the keyword: the user's
 * LoraConfig(...), TRL's get_peft_config (lora_target_parameters), and the loader of a config
 * file before 0.14.0. Seen by tests/oracle/boundaries.py at peft 0.16.0 / 0.17.0. */
static int dt412_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_adapter *a = &sim->manifest->adapter;

	if (!a->present || !a->target_parameters.count)
		return 0;
	struct dtl_loc loc = a->target_parameters.loc.line ? a->target_parameters.loc : a->loc;
	const char *targets = first_target(c);
	if (!targets)
		return -ENOMEM;
	if (dtl_sim_behavior(sim, DTL_B_PEFT_LORA_TARGET_PARAMETERS))
		return param_wrapper_refuses(c, targets);
	bool loaded = a->from_config_file || a->added_with == DTL_ADDED_LOAD_ADAPTER;
	if (loaded && dtl_sim_behavior(sim, DTL_B_PEFT_CONFIG_DROPS_UNKNOWN_KEYS))
		return dropped(c, loc, targets);
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, loc,
	    "the adapter sets target_parameters (%s), which this PEFT's LoraConfig does not have "
	    "(they arrived in 0.17.0)",
	    targets);
	if (!f)
		return -ENOMEM;
	dtl_check_predict(c, f,
	                  "TypeError: LoraConfig.__init__() got an unexpected keyword argument "
	                  "'target_parameters'",
	                  loaded
	                      ? "where PEFT loads the adapter's config (LoraConfig.from_pretrained)"
	                      : "where the LoraConfig is made, before get_peft_model",
	                  DTL_FW_PEFT,
	                  "use a peft release with target_parameters (>= 0.17.0, PR #2638; "
	                  ">= 0.21.0 under zero.Init, PR #3576), or target the expert modules by "
	                  "name instead");
	return 0;
}

/* The first release that has target_parameters and, when the model is built under zero.Init,
 * also reads a partitioned parameter's ds_shape (peft-target-parameters-zero3-shape ends at
 * 0.20.0: 0.17.0 to 0.20.0 raise DT501's IndexError there). Proven by re-simulation. */
static int dt412_propose_fixes(const struct dtl_fix_request *req)
{
	/* a release with target_parameters: ParamWrapper's refusal, which no release lifts */
	if (dtl_sim_behavior(req->sim, DTL_B_PEFT_LORA_TARGET_PARAMETERS))
		return 0;
	bool partitioned = dtl_rules_target_parameters_partitioned(req->sim);
	if (dtl_rules_propose_version(
	        req, DTL_FW_PEFT, partitioned ? "0.21.0" : "0.17.0",
	        partitioned
	            ? "upgrade peft: training.versions.peft: \"0.21.0\" (target_parameters, "
	              "PR #2638, read under zero.Init from PR #3576)"
	            : "upgrade peft: training.versions.peft: \"0.17.0\" (target_parameters, "
	              "PR #2638)") < 0)
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt412) = {
    .id = "DT412",
    .name = "adapter-option-unsupported",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the adapter sets a LoRA option its PEFT version does not have or refuses",
    .explanation =
        "LoRA's target_parameters (LoRA on nn.Parameters such as an MoE's fused experts) "
        "arrived in PEFT 0.17.0 (PR #2638). An older LoraConfig refuses the keyword where it "
        "is made, by the script or by TRL's get_peft_config (lora_target_parameters): "
        "'TypeError: LoraConfig.__init__() got an unexpected keyword argument "
        "'target_parameters''. An adapter_config.json that sets it is loaded by PEFT 0.14.0 "
        "to 0.16.x with a warning that drops the key (PR #2038): the parameters then get no "
        "LoRA and their saved adapter tensors are not loaded (a warning finding); before "
        "0.14.0 the loader raises the TypeError too. From 0.17.0, ParamWrapper, the layer "
        "that wraps a target parameter, refuses the options it cannot apply to a bare "
        "parameter: 'ValueError: lora.ParamWrapper does not work with lora_dropout != 0.' "
        "(TRL's ModelConfig defaults lora_dropout to 0.05), and the same for use_dora=True.",
    .example = "adapter: {type: lora, target_modules: [q_proj],\n"
               "          target_parameters: [mlp.experts.gate_up_proj]}\n"
               "training: {versions: {peft: \"0.16.0\"}}",
    .fix = "Upgrade peft to 0.17.0 or later (0.21.0 or later when the model is built under "
           "zero.Init, see DT501), or target the expert modules by name.",
    .facts = "https://github.com/huggingface/peft/pull/2638 (target_parameters, 0.17.0); "
             "https://github.com/huggingface/peft/pull/2038 (unknown config keys dropped, "
             "0.14.0)",
    .check = dt412_check,
    .propose_fixes = dt412_propose_fixes,
};
