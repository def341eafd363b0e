/* SPDX-License-Identifier: MIT */
/* The compute stage: the dtype each tensor is used in during forward. */
#include <string.h>

#include "sim-private.h"

static const char *fact_fsdp1 =
    "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/torch/"
    "distributed/fsdp/api.py";
/* rules/versions.yaml fsdp1-buffer-dtype-cast: the root's lazy init casts the buffers */
static const char *fact_fsdp1_buffers =
    "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/fsdp/_runtime_utils.py"
    "#L111-L143";
static const char *fact_fsdp2 =
    "https://github.com/pytorch/pytorch/blob/8fc2039decebd92b15b38296df8bf9aa13275be0/torch/"
    "distributed/fsdp/_fully_shard/_fsdp_collectives.py";

/* rules/versions.yaml bnb-4bit-forward-bias-cast */
static const char *fact_bnb_bias =
    "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.2/bitsandbytes/nn/"
    "modules.py#L609-L637";

/* Whether module mod holds a bitsandbytes 4-bit weight */
static bool holds_4bit_weight(const struct dtl_sim *sim, uint32_t mod)
{
	for (uint32_t k = sim->modules[mod].first_tensor; k != DTL_NONE_INDEX;
	     k = sim->t.next_in_module[k])
		if ((sim->t.flags[k] & (DTL_TF_QUANTIZED | DTL_TF_INT8)) == DTL_TF_QUANTIZED)
			return true;
	return false;
}

/* Linear4bit.forward stores its bias in the compute dtype at the first forward (bias.data =
 * bias.data.to(x.dtype), x already in compute_dtype). On one device only: a flat or sharded
 * parameter of FSDP or ZeRO-3 is not reached the same way, and is left as stored. */
static int bnb_4bit_biases(struct dtl_sim *sim)
{
	const struct dtl_quantization *q = &sim->manifest->quantization;
	enum dtl_strategy strategy = sim->rp.plan.strategy;
	enum dtl_dtype compute =
	    q->compute_dtype != DTL_DTYPE_NONE ? q->compute_dtype : DTL_DTYPE_F32;
	const char *reason = NULL;
	static const char leaf[] = ".bias";

	if (q->method != DTL_QUANT_BNB_4BIT || strategy == DTL_STRATEGY_FSDP1 ||
	    strategy == DTL_STRATEGY_FSDP2 || strategy == DTL_STRATEGY_ZERO3)
		return 0;
	for (uint32_t i = 0; i < sim->t.count; i++) {
		uint32_t len = sim->t.name_len[i];
		if (sim->t.kind[i] != DTL_KIND_PARAM || sim->t.dtype[i] == compute ||
		    !dtl_dtype_is_floating(sim->t.dtype[i]) || (sim->t.flags[i] & DTL_TF_ALIAS) ||
		    len < sizeof(leaf) - 1 ||
		    memcmp(sim->t.name[i] + len - (sizeof(leaf) - 1), leaf, sizeof(leaf) - 1) !=
		        0 ||
		    !holds_4bit_weight(sim, sim->t.module[i]))
			continue;
		if (!reason)
			reason = dtl_arena_sprintf(
			    sim->arena,
			    "bitsandbytes Linear4bit's first forward stores its bias in the 4-bit "
			    "compute dtype %s (bias.data = bias.data.to(x.dtype))",
			    dtl_dtype_name(compute));
		int r = dtl_sim_set_dtype(sim, i, DTL_STAGE_COMPUTE, compute, reason, fact_bnb_bias,
		                          q->compute_dtype_loc);
		if (r < 0)
			return r;
	}
	return 0;
}

int dtl_stage_compute(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	bool fsdp1 = plan->strategy == DTL_STRATEGY_FSDP1,
	     fsdp2 = plan->strategy == DTL_STRATEGY_FSDP2;
	const char *param_reason = NULL, *buffer_reason = NULL;
	int r;

	(void)error;
	if ((r = bnb_4bit_biases(sim)) < 0)
		return r;
	if (!fsdp1 && !fsdp2)
		return 0;
	if (plan->fsdp.param_dtype != DTL_DTYPE_NONE)
		param_reason = dtl_arena_sprintf(
		    sim->arena, "%s param_dtype=%s: every parameter of a %s computes in it",
		    fsdp1 ? "FSDP1 MixedPrecision" : "FSDP2 MixedPrecisionPolicy",
		    dtl_dtype_name(plan->fsdp.param_dtype), fsdp1 ? "unit" : "group");
	if (fsdp1 && plan->fsdp.buffer_dtype != DTL_DTYPE_NONE &&
	    dtl_sim_behavior(sim, DTL_B_FSDP1_BUFFER_DTYPE_CAST))
		buffer_reason = dtl_arena_sprintf(
		    sim->arena,
		    "FSDP1 buffer_dtype=%s casts floating buffers (at its lazy init, the first "
		    "forward, and keeps them so)",
		    dtl_dtype_name(plan->fsdp.buffer_dtype));
	for (uint32_t i = 0; i < sim->t.count; i++) {
		enum dtl_dtype d = sim->t.dtype[i], to = d;
		const char *reason = NULL;
		struct dtl_loc loc = {0};
		if (!dtl_dtype_is_floating(d) || sim->t.kind[i] == DTL_KIND_QUANT_STATE)
			continue;
		if (sim->t.kind[i] == DTL_KIND_PARAM) {
			/* FSDP1's MixedPrecision, FSDP2's MixedPrecisionPolicy: every parameter of
			 * a unit or group computes in param_dtype; ignored ones keep their own */
			if (param_reason && !(sim->t.flags[i] & DTL_TF_IGNORED)) {
				to = plan->fsdp.param_dtype;
				reason = param_reason;
				loc = plan->fsdp.param_dtype_loc;
			}
		} else if (buffer_reason && !(sim->t.flags[i] & DTL_TF_IGNORED)) {
			/* FSDP1 casts floating buffers to buffer_dtype, the stored tensor itself
			 * (buffer.data = buffer.to(buffer_dtype)); FSDP2 never */
			if (plan->fsdp.buffer_dtype == d)
				continue;
			r = dtl_sim_set_dtype(sim, i, DTL_STAGE_COMPUTE, plan->fsdp.buffer_dtype,
			                      buffer_reason, fact_fsdp1_buffers,
			                      plan->fsdp.buffer_dtype_loc);
			if (r < 0)
				return r;
			continue;
		}
		if (to == d)
			continue;
		/* the trace keeps compute casts of the tensors rules may explain (pinned ones,
		 * routers, buffers); the rest only get their compute dtype */
		if (sim->t.flags[i] & (DTL_TF_PINNED | DTL_TF_ROUTER) ||
		    sim->t.kind[i] == DTL_KIND_BUFFER) {
			r = dtl_sim_set_compute_dtype(sim, i, to, reason,
			                              fsdp1 ? fact_fsdp1 : fact_fsdp2, loc);
			if (r < 0)
				return r;
		} else {
			sim->t.compute_dtype[i] = (uint8_t)to;
		}
	}
	return 0;
}
