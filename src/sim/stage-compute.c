/* SPDX-License-Identifier: MIT */
/* The compute stage: the dtype each tensor is used in during forward. */
#include "sim-private.h"

int dtl_stage_compute(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	bool fsdp = plan->strategy == DTL_STRATEGY_FSDP1 || plan->strategy == DTL_STRATEGY_FSDP2;

	(void)error;
	for (size_t i = 0; i < sim->t.count; i++) {
		enum dtl_dtype d = sim->t.dtype[i];
		if (!fsdp || !dtl_dtype_is_floating(d))
			continue;
		if (sim->t.kind[i] == DTL_KIND_PARAM) {
			/* facts/torch-and-transformers.md §1.4, §2.5: every parameter of a unit or
			 * group computes in param_dtype; ignored ones keep their own */
			if (plan->fsdp.param_dtype != DTL_DTYPE_NONE &&
			    !(sim->t.flags[i] & DTL_TF_IGNORED))
				sim->t.compute_dtype[i] = (uint8_t)plan->fsdp.param_dtype;
		} else if (plan->strategy == DTL_STRATEGY_FSDP1 &&
		           plan->fsdp.buffer_dtype != DTL_DTYPE_NONE) {
			/* §1.4: FSDP1 casts floating buffers to buffer_dtype; FSDP2 never (§2.6) */
			sim->t.compute_dtype[i] = (uint8_t)plan->fsdp.buffer_dtype;
		}
	}
	return 0;
}
