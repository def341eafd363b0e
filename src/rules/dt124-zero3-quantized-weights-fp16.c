/* SPDX-License-Identifier: MIT */
/* DT124 zero3-quantized-weights-fp16: ZeRO++ weight quantization turns non-float16 parameters into
 * float16. */

#include <errno.h>

#include "rule-util.h"

/*
 * DT124 — ZeRO++ weight quantization before DeepSpeed PR #8215 (rules/versions.yaml
 * deepspeed-quantized-weights-fp16): the int8 quantizer reads each parameter's bits as fp16
 * and dequantize allocates fp16, so every partitioned parameter that is not float16 is
 * gathered with wrong values and comes back float16. zero_quantized_weights quantizes the
 * all-gather of every partitioned parameter (with more than one rank);
 * zero_quantized_nontrainable_weights stores the frozen ones quantized.
 */
static int dt124_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_plan_zero3 *z = &rp->plan.zero3;
	bool all = z->quantized_weights == DTL_TRUE && rp->plan.world_size >= 2;
	bool frozen = z->quantized_nontrainable == DTL_TRUE;
	uint32_t hit = DTL_NONE_INDEX;
	size_t count = 0;

	if (rp->plan.strategy != DTL_STRATEGY_ZERO3 || (!all && !frozen) ||
	    !dtl_sim_behavior(sim, DTL_B_DS_QUANTIZED_WEIGHTS_FP16))
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		enum dtl_dtype d = sim->t.dtype[t];
		if (!dtl_check_is_param(sim, t) || (sim->t.flags[t] & DTL_TF_ZERO_PERSIST) ||
		    !dtl_dtype_is_floating(d) || d == DTL_DTYPE_F16 ||
		    (!all && (sim->t.flags[t] & DTL_TF_TRAINABLE)))
			continue;
		if (hit == DTL_NONE_INDEX)
			hit = t;
		count++;
	}
	if (hit == DTL_NONE_INDEX)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, all ? z->quantized_weights_loc : z->quantized_nontrainable_loc,
	    "ZeRO++ %s returns %s parameters as float16 with this DeepSpeed (%zu parameter%s)",
	    all ? "zero_quantized_weights" : "zero_quantized_nontrainable_weights",
	    dtl_dtype_name(sim->t.dtype[hit]), count, count == 1 ? "" : "s");
	if (!f)
		return -ENOMEM;
	f->effect = "the int8 quantizer reads the parameter's bits as float16 and dequantize "
	            "allocates float16: the gathered values are wrong, and the first op that "
	            "meets the float16 weight beside its own dtype fails (DeepSpeed issue #7775; "
	            "the message depends on the op)";
	f->error_versions = dtl_check_version(c, DTL_FW_DEEPSPEED);
	f->fix = "use a DeepSpeed with PR #8215 (merged 2026-08-19, after 0.19.5), turn ZeRO++ "
	         "weight quantization off, or train in fp16";
	return dtl_check_add_tensor(c, f, hit, NULL) < 0 ? -ENOMEM : 0;
}

static int dt124_propose_fixes(const struct dtl_fix_request *req)
{
	/* PR #8215 is after 0.19.5; its first release is unread, so the newest known */
	if (dtl_rules_propose_version(
	        req, DTL_FW_DEEPSPEED, "0.19.8",
	        "upgrade DeepSpeed: training.versions.deepspeed: \"0.19.8\" (PR #8215, merged "
	        "2026-08-19; the first release with it is unverified)") < 0)
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt124) = {
    .id = "DT124",
    .name = "zero3-quantized-weights-fp16",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "ZeRO++ weight quantization turns non-float16 parameters into float16",
    .explanation =
        "ZeRO++'s quantized weights (zero_quantized_weights: the all-gather of every "
        "partitioned parameter goes through int8; zero_quantized_nontrainable_weights: frozen "
        "parameters are stored in int8) use a quantizer op that is float16-only in both "
        "directions: quantize reads the parameter's bits as float16 whatever its dtype, and "
        "dequantize always allocates float16. So from ZeRO++'s first release (0.10.0) to "
        "0.19.5 a bfloat16 or float32 parameter is gathered with wrong values and comes back "
        "as a float16 param.data, and training fails on the dtype mismatch (issue #7775). "
        "PR #8215 (2026-08-19) converts to float16 on the way in and restores each "
        "parameter's own dtype; its first release is not confirmed (0.19.6 is assumed). "
        "Persistent parameters (numel <= stage3_param_persistence_threshold) are not "
        "gathered and are not reported.",
    .example = "zero_optimization: {stage: 3, zero_quantized_weights: true} with bf16 "
               "enabled, DeepSpeed 0.19.5",
    .fix = "A DeepSpeed with PR #8215, ZeRO++ weight quantization off, or fp16 training.",
    .facts = "https://github.com/deepspeedai/DeepSpeed/pull/8215 "
             "https://github.com/deepspeedai/DeepSpeed/issues/7775",
    .check = dt124_check,
    .propose_fixes = dt124_propose_fixes,
};
