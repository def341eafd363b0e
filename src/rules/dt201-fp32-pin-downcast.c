/* SPDX-License-Identifier: MIT */
/* DT201 fp32-pin-downcast: a tensor the model pins to float32 is stored or computed in 16-bit. */
#include <errno.h>
#include <stdio.h>

#include "rule-util.h"

static const char *pin_why(const struct dtl_sim *sim, uint32_t t, struct dtl_arena *arena)
{
	const struct dtl_pattern *e;
	if ((e = dtl_sim_keep_entry(sim, sim->model.strict_set, t)))
		return dtl_arena_sprintf(arena, "keep_in_fp32_strict '%s'", e->text);
	if ((e = dtl_sim_keep_entry(sim, sim->model.keep_set, t)))
		return dtl_arena_sprintf(arena, "keep_in_fp32 '%s'", e->text);
	return "a float32 buffer on purpose";
}

/* DT201 — a pinned tensor stored or computed in 16-bit because of the strategy. */
static int dt201_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_rules_grouper g;

	dtl_rules_grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_PINNED) || sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		bool stored = dtl_dtype_is_half(sim->t.dtype[t]);
		if (!stored && !dtl_dtype_is_half(sim->t.compute_dtype[t]))
			continue;
		const struct dtl_event *why = dtl_rules_cause(sim, t);
		const char *stage = why ? dtl_stage_name(why->stage) : "?";
		char key[256];
		snprintf(key, sizeof(key), "%s|%s|%d", dtl_rules_leaf(sim, t), stage, stored);
		struct dtl_finding *f = dtl_rules_grouper_get(&g, key);
		if (f) {
			if (dtl_rules_grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(
		    c, c->rule->severity, why ? why->loc : dtl_sim_tensor_loc(sim, t),
		    "'%s' must stay float32 (%s) but is %s in %s", sim->t.name[t],
		    pin_why(sim, t, c->arena), stored ? "stored" : "computed",
		    dtl_dtype_name(stored ? sim->t.dtype[t] : sim->t.compute_dtype[t]));
		if (!f)
			return -ENOMEM;
		f->effect =
		    dtl_arena_sprintf(c->arena, "%s", why ? why->reason : "the strategy casts it");
		f->error_versions = NULL;
		f->fix =
		    why && why->stage == DTL_STAGE_COMPUTE
		        ? "shard the module on its own with a float32 policy (the \"fp32 "
		          "layer\" pattern: fully_shard(module, mp_policy=MixedPrecisionPolicy("
		          "param_dtype=torch.float32))), or list it in fsdp.ignored"
		        : "keep the tensor out of the cast: for zero.Init there is no "
		          "per-parameter escape (DeepSpeed #7747 is open); build the module "
		          "outside zero.Init or accept the 16-bit storage";
		if (dtl_rules_grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return dtl_rules_grouper_finish(&g);
}

static int dt201_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	const char *mod = dtl_rules_fix_module(req);

	if (!mod || !mod[0] ||
	    (sim->rp.plan.strategy != DTL_STRATEGY_FSDP1 &&
	     sim->rp.plan.strategy != DTL_STRATEGY_FSDP2))
		return 0;
	/* the finding stands for all its tensors: one pattern for all their modules */
	const char *all = dtl_rules_modules_glob(req->arena, sim, req->finding);
	if (all && all[0])
		mod = all;
	return dtl_rules_propose(req, DTL_FIX_IGNORE_ADD,
	                         dtl_arena_sprintf(req->arena, "%s.**", mod), 0, 3,
	                         "keep '%s' out of FSDP's cast: add '%s.**' to "
	                         "training.fsdp.ignored",
	                         mod, mod)
	           ? 0
	           : -ENOMEM;
}

DTL_RULE(dt201) = {
    .id = "DT201",
    .name = "fp32-pin-downcast",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a tensor the model pins to float32 is stored or computed in 16-bit",
    .explanation =
        "Models keep some tensors in float32 on purpose: _keep_in_fp32_modules_strict "
        "(DeepSeek's e_score_correction_bias, Mamba's A_log), _keep_in_fp32_modules under "
        "float16 (T5's wo, whose activations overflow float16). The strategy can undo it "
        "silently: DeepSpeed zero.Init casts every floating tensor created under it to the "
        "mode dtype, explicit float32 included; DeepSpeed <= 0.19.1 runs module.bfloat16(); "
        "FSDP computes every parameter of a unit or group in param_dtype. Nothing raises: "
        "the model trains with less precision than it was designed for.",
    .example = "model: {keep_in_fp32_strict: [e_score_correction_bias]}\n"
               "training: {strategy: zero3, precision: bf16}",
    .fix = "Under FSDP, shard the pinned module on its own with a float32 policy; under "
           "ZeRO-3 there is no per-parameter escape from zero.Init (DeepSpeed #7747).",
    .facts = "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/"
             "torch/distributed/fsdp/api.py "
             "https://github.com/pytorch/pytorch/blob/8fc2039decebd92b15b38296df8bf9aa13275be0/"
             "torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py "
             "https://github.com/huggingface/transformers/pull/39058; "
             "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
             "partition_parameters.py#L391-L404 https://github.com/deepspeedai/DeepSpeed/pull/8066 "
             "https://github.com/deepspeedai/DeepSpeed/issues/7747",
    .check = dt201_check,
    .propose_fixes = dt201_propose_fixes,
};
