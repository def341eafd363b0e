/* SPDX-License-Identifier: MIT */
/* The compute stage: the dtype each tensor is used in during forward. */
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

int dtl_stage_compute(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	bool fsdp1 = plan->strategy == DTL_STRATEGY_FSDP1,
	     fsdp2 = plan->strategy == DTL_STRATEGY_FSDP2;
	const char *param_reason = NULL, *buffer_reason = NULL;
	int r;

	(void)error;
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
