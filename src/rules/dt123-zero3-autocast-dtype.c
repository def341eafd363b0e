/* SPDX-License-Identifier: MIT */
/* DT123 zero3-autocast-dtype: DeepSpeed's torch_autocast meets parameters or modes this DeepSpeed
 * refuses. */

#include <errno.h>

#include "rule-check.h"

static enum dtl_dtype comm_dtype(const struct dtl_sim *sim, uint32_t t)
{
	return (sim->t.flags[t] & DTL_TF_AUTOCAST_COMM) && sim->rp.plan.zero3.autocast_dtype
	           ? sim->rp.plan.zero3.autocast_dtype
	           : sim->t.dtype[t];
}

/*
 * DT123 — DeepSpeed's torch_autocast section against the parameters it meets, by version
 * (rules/versions.yaml deepspeed-autocast-*): 0.17.2-0.18.2 refuse it with bf16/fp16 on,
 * 0.17.2-0.17.5 refuse any parameter that is not float32, 0.17.6-0.19.2 assert one storage
 * dtype per coalesced fetch while keying the fetch by communication dtype.
 */
static int dt123_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_plan_zero3 *z = &rp->plan.zero3;
	uint32_t a = DTL_NONE_INDEX, b = DTL_NONE_INDEX;
	struct dtl_finding *f;

	if (rp->plan.strategy != DTL_STRATEGY_ZERO3 || z->autocast != DTL_TRUE ||
	    !dtl_sim_behavior(sim, DTL_B_DS_AUTOCAST))
		return 0;
	if (rp->mode_dtype != DTL_DTYPE_NONE &&
	    dtl_sim_behavior(sim, DTL_B_DS_AUTOCAST_NO_16BIT_MODE)) {
		f = dtl_check_report(c, c->rule->severity, z->autocast_loc,
		                     "torch_autocast is on together with %s, which this DeepSpeed "
		                     "refuses",
		                     rp->mode_dtype == DTL_DTYPE_BF16 ? "bf16" : "fp16");
		if (!f)
			return -ENOMEM;
		dtl_check_predict(
		    c, f,
		    rp->mode_dtype == DTL_DTYPE_BF16
		        ? "AssertionError: Cannot enable both torch autocast and bfloat16"
		        : "AssertionError: Cannot enable both torch autocast and fp16",
		    "in deepspeed.initialize", DTL_FW_DEEPSPEED,
		    "turn bf16/fp16 off beside torch_autocast, or use DeepSpeed >= 0.18.3 (PR "
		    "#7700)");
		return 0;
	}
	if (dtl_sim_behavior(sim, DTL_B_DS_AUTOCAST_FP32_ONLY)) {
		for (size_t k = 0; k < sim->t.count && a == DTL_NONE_INDEX; k++) {
			uint32_t t = sim->t.order[k];
			if (dtl_check_is_param(sim, t) && sim->t.dtype[t] != DTL_DTYPE_F32)
				a = t;
		}
		if (a == DTL_NONE_INDEX)
			return 0;
		f = dtl_check_report(c, c->rule->severity, z->autocast_loc,
		                     "torch_autocast needs every parameter in float32 with this "
		                     "DeepSpeed, but '%s' is %s",
		                     sim->t.name[a], dtl_dtype_name(sim->t.dtype[a]));
		if (!f)
			return -ENOMEM;
		dtl_check_predict(
		    c, f, "AssertionError: All parameters must be float32 for torch autocast",
		    "in deepspeed.initialize", DTL_FW_DEEPSPEED,
		    "keep the model in float32 under torch_autocast (bf16 and fp16 off), or "
		    "use DeepSpeed >= 0.17.6 (PR #7543)");
		return dtl_check_add_tensor(c, f, a, NULL) < 0 ? -ENOMEM : 0;
	}
	if (!dtl_sim_behavior(sim, DTL_B_DS_AUTOCAST_GATHER_DTYPE_ASSERT) ||
	    rp->plan.world_size < 2)
		return 0;
	/* two partitioned params that share a communication dtype but not a storage dtype (the
	 * first of each communication dtype is remembered) */
	uint32_t first[DTL_DTYPE_COUNT];
	for (int d = 0; d < DTL_DTYPE_COUNT; d++)
		first[d] = DTL_NONE_INDEX;
	for (size_t k = 0; k < sim->t.count && b == DTL_NONE_INDEX; k++) {
		uint32_t t = sim->t.order[k];
		if (!dtl_check_is_param(sim, t) || (sim->t.flags[t] & DTL_TF_ZERO_PERSIST) ||
		    !dtl_dtype_is_floating(sim->t.dtype[t]))
			continue;
		enum dtl_dtype cd = comm_dtype(sim, t);
		if (first[cd] == DTL_NONE_INDEX)
			first[cd] = t;
		else if (sim->t.dtype[t] != sim->t.dtype[first[cd]])
			a = first[cd], b = t;
	}
	if (b == DTL_NONE_INDEX)
		return 0;
	f = dtl_check_report(c, c->rule->severity, z->autocast_loc,
	                     "torch_autocast gathers %s and %s parameters together in %s: this "
	                     "DeepSpeed asserts one storage dtype per coalesced fetch",
	                     dtl_dtype_name(sim->t.dtype[a]), dtl_dtype_name(sim->t.dtype[b]),
	                     dtl_dtype_name(comm_dtype(sim, a)));
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f, "AssertionError: all params must have the same dtype",
	    "in a parameter fetch of a later step (_all_gather_dtype), once ZeRO-3's prefetch "
	    "gathers several modules' parameters in one call (the first step fetches one module "
	    "at a time)",
	    DTL_FW_DEEPSPEED,
	    "use DeepSpeed >= 0.19.3 (PR #8113 checks the communication dtype), or give the "
	    "parameters one storage dtype (get_peft_model(..., autocast_adapter_dtype=False))");
	if (dtl_check_add_tensor(c, f, b, NULL) < 0 || dtl_check_add_tensor(c, f, a, NULL) < 0)
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt123) = {
    .id = "DT123",
    .name = "zero3-autocast-dtype",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "DeepSpeed's torch_autocast meets parameters or modes this DeepSpeed refuses",
    .explanation =
        "DeepSpeed's torch_autocast section (0.17.2 on) runs the forward under torch.autocast "
        "and tags the parameters of Linear and Conv modules with a communication dtype: "
        "they are gathered and reduced in it while their storage dtype stays. Each release "
        "range fails differently: 0.17.2-0.18.2 refuse it together with bf16 or fp16 "
        "('Cannot enable both torch autocast and bfloat16'); 0.17.2-0.17.5 refuse any "
        "parameter that is not float32; 0.17.6-0.19.2 key coalesced fetches by communication "
        "dtype but assert one storage dtype, so a bf16 base weight and a float32 LoRA "
        "matrix, both tagged bf16, raise 'all params must have the same dtype' at the first "
        "forward. 0.19.3 checks the communication dtype instead.",
    .example = "torch_autocast: {enabled: true, dtype: bfloat16} with bf16 enabled and PEFT's "
               "float32 adapters, DeepSpeed 0.19.2",
    .fix = "DeepSpeed >= 0.19.3, or one storage dtype for the parameters (adapters in the base "
           "dtype).",
    .facts = "https://github.com/deepspeedai/DeepSpeed/pull/6993 "
             "https://github.com/deepspeedai/DeepSpeed/pull/7543 "
             "https://github.com/deepspeedai/DeepSpeed/pull/7700 "
             "https://github.com/deepspeedai/DeepSpeed/pull/8113",
    .check = dt123_check,
};
