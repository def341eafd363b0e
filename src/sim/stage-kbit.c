/* SPDX-License-Identifier: MIT */
/*
 * PEFT's prepare_model_for_kbit_training (rules/versions.yaml peft-kbit-skips-params4bit):
 * freezes every parameter, then casts every float16/bfloat16 parameter to float32 except
 * Params4bit (since peft 0.10.0) — without checking that the model is quantized.
 */
#include "sim-private.h"

static const char *fact_kbit =
    "https://github.com/huggingface/peft/blob/5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40/src/peft/"
    "utils/other.py#L158-L259";

int dtl_stage_kbit_prepare(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_adapter *a = &sim->manifest->adapter;
	bool skips_4bit = dtl_sim_behavior(sim, DTL_B_PEFT_KBIT_SKIPS_PARAMS4BIT);
	int r;

	(void)error;
	if (a->prepare_kbit_training != DTL_TRUE)
		return 0;
	for (uint32_t t = 0; t < sim->t.count; t++) {
		if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS))
			continue;
		sim->t.flags[t] &= ~DTL_TF_TRAINABLE;
		enum dtl_dtype d = sim->t.dtype[t];
		if (!dtl_dtype_is_half(d))
			continue;
		bool params4bit =
		    (sim->t.flags[t] & DTL_TF_QUANTIZED) && !(sim->t.flags[t] & DTL_TF_INT8);
		if (params4bit && skips_4bit)
			continue;
		const char *reason =
		    params4bit
		        ? "prepare_model_for_kbit_training casts the float-stored Params4bit too "
		          "(peft < 0.10.0): a numeric cast of packed 4-bit codes"
		        : "prepare_model_for_kbit_training freezes it and upcasts fp16/bf16 params "
		          "to float32";
		r = dtl_sim_set_dtype(sim, t, DTL_STAGE_KBIT_PREPARE, DTL_DTYPE_F32, reason,
		                      fact_kbit, a->loc);
		if (r < 0)
			return r;
	}
	return 0;
}
