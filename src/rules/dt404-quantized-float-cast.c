/* SPDX-License-Identifier: MIT */
/* DT404 quantized-float-cast: a blanket float cast of float-stored 4-bit weights corrupts the
 * packed codes. */

#include <errno.h>

#include "rule-util.h"

/* DT404 — a float-stored 4-bit weight numerically cast after quantization. */
static int dt404_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_event *events = sim->events.items;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_QUANTIZED) || (sim->t.flags[t] & DTL_TF_INT8))
			continue;
		const struct dtl_event *cast = NULL;
		for (uint32_t e = sim->t.last_event[t]; e != DTL_NONE_INDEX; e = events[e].prev)
			if (events[e].stage > DTL_STAGE_QUANTIZE &&
			    events[e].from != events[e].to && dtl_dtype_is_floating(events[e].from))
				cast = &events[e];
		if (!cast)
			continue;
		if (!f) {
			f = dtl_check_report(c, c->rule->severity, cast->loc,
			                     "4-bit weights stored as %s are cast to %s after "
			                     "quantization: the packed codes are corrupted",
			                     dtl_dtype_name(cast->from), dtl_dtype_name(cast->to));
			if (!f)
				return -ENOMEM;
			f->effect =
			    "Params4bit.to(dtype) converts the packed 4-bit codes as numbers; "
			    "nothing raises, the model computes with garbage weights";
			f->fix =
			    "store 4-bit weights in the dtype the strategy casts to "
			    "(bnb_4bit_quant_storage = the training precision), or keep them in "
			    "uint8 so blanket casts skip them";
		}
		if (++n <= 3 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int dt404_propose_fixes(const struct dtl_fix_request *req)
{
	enum dtl_dtype want = req->sim->rp.mode_dtype;
	return dtl_rules_propose(req, DTL_FIX_QUANT_STORAGE, NULL, want, 1,
	                         "set quantization.quant_storage: %s", dtl_dtype_name(want))
	           ? 0
	           : -ENOMEM;
}

DTL_RULE(dt404) = {
    .id = "DT404",
    .name = "quantized-float-cast",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "a blanket float cast of float-stored 4-bit weights corrupts the packed codes",
    .explanation = "Params4bit.to(dtype) on already-quantized weights converts the packed codes "
                   "numerically; nothing guards it. uint8 storage is skipped by module.half() "
                   "and module.bfloat16(), but float storage (bf16, fp32) is cast by DeepSpeed's "
                   "engine cast or prepare_model_for_kbit_training before peft 0.10 when the "
                   "storage differs from the target dtype.",
    .example = "quantization: {method: bnb-4bit, quant_storage: bfloat16}\n"
               "training: {strategy: zero3, precision: fp16}",
    .fix = "Make quant_storage the training precision, or keep uint8 storage.",
    .facts = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
             "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/modules.py#L213-L484 "
             "https://github.com/deepspeedai/DeepSpeed/pull/8066",
    .check = dt404_check,
    .propose_fixes = dt404_propose_fixes,
};
