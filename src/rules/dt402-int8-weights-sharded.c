/* SPDX-License-Identifier: MIT */
/* DT402 int8-weights-sharded: LLM.int8 weights under FSDP or ZeRO-3. */
#include <errno.h>

#include "rule-util.h"

/* DT402 — LLM.int8 weights under FSDP or ZeRO-3. */
static int dt402_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	if (!dtl_rules_sharded(sim))
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_INT8) || sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		if (!f) {
			f = dtl_check_report(
			    c, c->rule->severity,
			    sim->manifest->quantization.method_loc.line
			        ? sim->manifest->quantization.method_loc
			        : dtl_sim_tensor_loc(sim, t),
			    "LLM.int8 (bitsandbytes 8-bit) weights cannot be sharded "
			    "by %s",
			    dtl_rules_strategy_label(sim));
			if (!f)
				return -ENOMEM;
			f->effect =
			    "Int8Params are int8 with row scales beside them: FSDP flattens "
			    "only floating tensors ('Cannot flatten integer dtype tensors' or "
			    "a uniform-dtype error) and sharding would separate the codes from "
			    "their scales";
			f->fix = "use 4-bit QLoRA with bnb_4bit_quant_storage equal to the model "
			         "dtype, or train the 8-bit model without sharding it (DDP)";
			if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 &&
			    dtl_rules_fsdp1_error(c, f) < 0)
				return -ENOMEM;
		}
		if (++n <= 3 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	if (f && n > 1 &&
	    !(f->message = dtl_arena_sprintf(c->arena, "%s (%zu weights)", f->message, n)))
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt402) = {
    .id = "DT402",
    .name = "int8-weights-sharded",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "LLM.int8 weights under FSDP or ZeRO-3",
    .explanation = "bitsandbytes 8-bit weights (Int8Params) are int8 codes with row scales. FSDP "
                   "flattens only floating tensors, and neither FSDP nor ZeRO-3 keeps the scales "
                   "with the shards.",
    .example = "quantization: {method: bnb-8bit}\ntraining: {strategy: fsdp2}",
    .fix = "Use 4-bit QLoRA with a floating quant_storage, or DDP.",
    .facts = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
             "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/modules.py#L719-L809; "
             "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py",
    .check = dt402_check,
};
