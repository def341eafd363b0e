/* SPDX-License-Identifier: MIT */
/*
 * The trainer stage: what TRL does to dtypes after get_peft_model
 * (facts/deepspeed-peft-bnb-trl-accelerate.md §4). TRL >= 0.26's core trainers cast every
 * trainable parameter of a quantized model to bfloat16, unconditionally. (TRL >= 1.7's
 * autocast_adapter_dtype=False under ZeRO-3 is applied in the peft stage, where it acts.)
 */
#include <string.h>

#include "sim-private.h"

bool dtl_sim_trl_core_trainer(const struct dtl_sim *sim)
{
	static const char *const core[] = {"trl-sft", "trl-dpo", "trl-grpo", "trl-rloo",
					   "trl-reward", "trl-kto", NULL};
	const char *trainer = sim->rp.plan.trainer;

	for (const char *const *t = core; trainer && *t; t++)
		if (strcmp(*t, trainer) == 0)
			return true;
	return false;
}

int dtl_stage_trainer(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	char v[32];
	int r;

	(void)error;
	if (!dtl_sim_trl_core_trainer(sim) || sim->manifest->quantization.method == DTL_QUANT_NONE ||
	    !dtl_sim_behavior(sim, DTL_B_TRL_QLORA_BF16_CAST))
		return 0;
	dtl_version_format(&plan->versions[DTL_FW_TRL], v, sizeof(v));
	const char *reason = dtl_arena_sprintf(sim->arena,
					       "trl %s casts every trainable param of a quantized "
					       "model to bfloat16 (%s)",
					       v, plan->trainer);
	for (uint32_t t = 0; t < sim->t.count; t++) {
		if (!(sim->t.flags[t] & DTL_TF_TRAINABLE) || sim->t.kind[t] != DTL_KIND_PARAM ||
		    sim->t.dtype[t] == DTL_DTYPE_BF16)
			continue;
		r = dtl_sim_set_dtype(sim, t, DTL_STAGE_TRAINER, DTL_DTYPE_BF16, reason,
				      "facts/deepspeed-peft-bnb-trl-accelerate.md §4.1", plan->trainer_loc);
		if (r < 0)
			return r;
	}
	return 0;
}
