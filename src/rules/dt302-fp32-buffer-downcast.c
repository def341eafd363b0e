/* SPDX-License-Identifier: MIT */
/* DT302 fp32-buffer-downcast: a buffer that must stay float32 is cast to 16-bit by the strategy. */
#include <errno.h>
#include <stdio.h>

#include "rule-util.h"

/* The RoPE cache built under zero.Init by transformers <= 4.37 (rules/versions.yaml
 * transformers-rope-cache-float-arange, src/sim/stage-zero3.c rope_cache): inv_freq stays
 * float32 and computes in 16-bit because the positions it multiplies were rounded, so the
 * fix is a transformers release, not a buffer dtype. */
static bool rope_cache(const struct dtl_sim *sim, const struct dtl_event *why, bool stored)
{
	return !stored && why->stage == DTL_STAGE_COMPUTE && sim->rp.zero_init &&
	       dtl_sim_behavior(sim, DTL_B_HF_ROPE_CACHE_FLOAT_ARANGE);
}

/* DT302 — a buffer that must stay float32 cast to 16-bit by the strategy. */
static int dt302_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_rules_grouper g;

	dtl_rules_grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] != DTL_KIND_BUFFER)
			continue;
		const struct dtl_buffer_info *info = dtl_sim_buffer_info(sim, t);
		if ((!(sim->t.flags[t] & DTL_TF_PINNED) && !info) || (info && info->unread))
			continue;
		bool stored = dtl_dtype_is_half(sim->t.dtype[t]);
		if (!stored && !dtl_dtype_is_half(sim->t.compute_dtype[t]))
			continue;
		const struct dtl_event *why = dtl_rules_cause(sim, t);
		if (!why)
			continue; /* declared 16-bit: nothing in the plan cast it */
		char key[256];
		snprintf(key, sizeof(key), "%s|%s", dtl_rules_leaf(sim, t),
		         dtl_stage_name(why->stage));
		struct dtl_finding *f = dtl_rules_grouper_get(&g, key);
		if (f) {
			if (dtl_rules_grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(
		    c, c->rule->severity, why->loc, "buffer '%s' must stay float32 but is %s in %s",
		    sim->t.name[t], stored ? "stored" : "computed",
		    dtl_dtype_name(stored ? sim->t.dtype[t] : sim->t.compute_dtype[t]));
		if (!f)
			return -ENOMEM;
		bool rope = rope_cache(sim, why, stored);
		f->effect = dtl_arena_sprintf(
		    c->arena, "%s; precision is lost silently (%s)", why->reason,
		    rope ? "those positions take the rotary angles of the positions they round to"
		         : "RoPE inv_freq rounded to 16-bit shifts every position's angle");
		f->fix = rope
		             ? "upgrade transformers to >= 4.38 (the RoPE cache from an int64 "
		               "arange, PR #28760), or build the rotary embedding outside zero.Init"
		             : "leave buffers uncast: FSDP1 buffer_dtype=None (or float32), "
		               "DeepSpeed >= 0.19.2 without data_types.buffer_dtype; or recompute "
		               "the buffer in float32 after wrapping";
		if (dtl_rules_grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return dtl_rules_grouper_finish(&g);
}

static int dt302_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	bool tensor = req->finding->tensor_count > 0;
	/* ZeRO 0-2 run the same initialize cast as ZeRO-3 (the engine stage) */
	bool zero3 = sim->rp.plan.strategy == DTL_STRATEGY_ZERO3 ||
	             (sim->rp.plan.strategy == DTL_STRATEGY_DDP && sim->rp.plan.deepspeed_engine);

	if (tensor && sim->rp.zero_init &&
	    dtl_sim_behavior(sim, DTL_B_HF_ROPE_CACHE_FLOAT_ARANGE)) {
		if (dtl_rules_propose_version(
		        req, DTL_FW_TRANSFORMERS, "4.38.0",
		        "upgrade transformers: training.versions.transformers: "
		        "\"4.38.0\" (PR #28760)") < 0)
			return -ENOMEM;
	}
	if (tensor && zero3 && dtl_sim_behavior(sim, DTL_B_DS_BLANKET_MODULE_CAST)) {
		/* rules/versions.yaml deepspeed-blanket-module-cast: from 0.19.2 initialize casts
		 * per policy and leaves buffers alone without data_types.buffer_dtype (PR #8066) */
		if (dtl_rules_propose_version(
		        req, DTL_FW_DEEPSPEED, "0.19.2",
		        "upgrade DeepSpeed: training.versions.deepspeed: \"0.19.2\" "
		        "(PR #8066 keeps buffers out of initialize's cast)") < 0)
			return -ENOMEM;
	}
	/* the buffers' policy itself casts them: keep them in float32 */
	if (tensor && zero3 && sim->rp.plan.zero3.buffer_dtype != DTL_DTYPE_NONE &&
	    sim->rp.plan.zero3.buffer_dtype != DTL_DTYPE_F32 &&
	    !dtl_rules_propose(req, DTL_FIX_ZERO3_BUFFER_DTYPE, NULL, DTL_DTYPE_F32, 1,
	                       "keep buffers in float32: set "
	                       "training.zero3.data_types.buffer_dtype: float32"))
		return -ENOMEM;
	if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 &&
	    !dtl_rules_propose(req, DTL_FIX_FSDP_BUFFER_DTYPE, NULL, DTL_DTYPE_NONE, 1,
	                       "set training.fsdp.buffer_dtype: null (FSDP1 leaves buffers "
	                       "uncast)"))
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt302) = {
    .id = "DT302",
    .name = "fp32-buffer-downcast",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a buffer that must stay float32 is cast to 16-bit by the strategy",
    .explanation =
        "RoPE's inv_freq and routers' score-correction biases are float32 on purpose. "
        "FSDP1 buffer_dtype=bf16 (accelerate's FSDP1 policy sets it), DeepSpeed <= 0.19.1's "
        "module.bfloat16() and zero.Init's tensor-creation wrappers (for buffers made by "
        "torch.zeros and the like) turn them into 16-bit. Nothing raises; positions or "
        "routing lose precision.",
    .example = "tensors:\n"
               "  - {name: model.rotary_emb.inv_freq, kind: buffer, shape: [32], dtype: float32, "
               "persistent: false}\n"
               "training: {strategy: fsdp1, fsdp: {buffer_dtype: bfloat16}}",
    .fix = "Leave buffers uncast (FSDP1 buffer_dtype None or float32; DeepSpeed >= 0.19.2 "
           "without data_types.buffer_dtype).",
    .facts = "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/"
             "torch/distributed/fsdp/api.py "
             "https://github.com/huggingface/transformers/blob/"
             "ef46806472a64b0013ed413781e3afed82bfa047/src/transformers/modeling_rope_utils.py; "
             "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
             "partition_parameters.py#L391-L404 https://github.com/deepspeedai/DeepSpeed/pull/8066",
    .check = dt302_check,
    .propose_fixes = dt302_propose_fixes,
};
