/* SPDX-License-Identifier: MIT */
/* DeepSpeed ZeRO-3 rules: DT121 (coalesced gather of persistent params), DT122 (defragment),
 * DT123 (torch_autocast), DT124 (ZeRO++ quantized weights). */
#include <errno.h>

#include "check.h"

static const struct dtl_group *find_group(const struct dtl_sim *sim, enum dtl_group_kind kind)
{
	const struct dtl_group *groups = sim->groups.items;
	for (size_t i = 0; i < sim->groups.count; i++)
		if (groups[i].kind == kind)
			return &groups[i];
	return NULL;
}

static uint32_t first_other_dtype(const struct dtl_sim *sim, const struct dtl_group *g,
                                  size_t *ret_offset)
{
	for (size_t k = 1; k < g->count; k++)
		if (sim->t.dtype[g->members[k]] != sim->t.dtype[g->members[0]]) {
			*ret_offset = k;
			return g->members[k];
		}
	return DTL_NONE_INDEX;
}

/*
 * facts/deepspeed-peft-bnb-trl-accelerate.md §1.3, §1.4: after each optimizer step ZeRO-3
 * all-gathers the persistent parameters in one coalesced call; from 0.12.0 to 0.19.2 every
 * output buffer has the first parameter's dtype, so mixed dtypes raise in
 * all_gather_into_tensor — when world size > 1 and stage3_allgather_sequential is false.
 */
static int dt121_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_group *g = find_group(sim, DTL_GROUP_ZERO3_PERSISTENT);
	size_t offset = 0;

	if (!g || g->count < 2 || !dtl_sim_behavior(sim, DTL_B_DS_COALESCED_GATHER_FIRST_DTYPE))
		return 0;
	if (rp->plan.world_size <= 1 || rp->plan.zero3.allgather_sequential == DTL_TRUE)
		return 0;
	uint32_t offender = first_other_dtype(sim, g, &offset), first = g->members[0];
	if (offender == DTL_NONE_INDEX)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, g->loc,
	    "ZeRO-3 persistent parameters mix %s: their coalesced all-gather allocates every "
	    "buffer in the first parameter's dtype (%s)",
	    dtl_check_dtype_set(c, g->members, g->count, false),
	    dtl_dtype_name(sim->t.dtype[first]));
	if (!f)
		return -ENOMEM;
	f->group = g;
	f->group_offset = (uint32_t)offset;
	f->error_text = "TypeError: output tensor must have the same type as input tensor "
	                "(RuntimeError on older torch)";
	f->error_when = "at the end of the first optimizer step (_post_step re-gathers the "
	                "persistent parameters)";
	f->error_versions = dtl_arena_sprintf(
	    c->arena, "%s with world size %lld%s", dtl_check_version(c, DTL_FW_DEEPSPEED),
	    (long long)rp->plan.world_size,
	    rp->world_size_assumed ? " (assumed: the plan names no world_size)" : "");
	f->fix = "upgrade to deepspeed >= 0.19.3 (PR #8073), or set "
	         "stage3_allgather_sequential: true, or stage3_param_persistence_threshold: 0, "
	         "or keep adapters in the base dtype (autocast_adapter_dtype=False)";
	if (dtl_check_add_tensor(c, f, offender, NULL) < 0 ||
	    dtl_check_add_tensor(c, f, first, "the first persistent parameter") < 0)
		return -ENOMEM;
	return 0;
}

/* facts §1.5: the ZeRO-3 optimizer defragments every trainable parameter into one flat
 * buffer: a bare assert of one dtype inside deepspeed.initialize (without param offload);
 * with offload_param the partitions are copied into a buffer of the first param's dtype. */
static int dt122_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_group *g = find_group(sim, DTL_GROUP_ZERO3_TRAINABLE);
	bool offload = rp->plan.zero3.offload_param == DTL_OFFLOAD_CPU ||
	               rp->plan.zero3.offload_param == DTL_OFFLOAD_NVME;
	size_t offset = 0;

	if (!g || g->count < 2 || !dtl_sim_behavior(sim, DTL_B_DS_DEFRAGMENT_ASSERT))
		return 0;
	uint32_t offender = first_other_dtype(sim, g, &offset), first = g->members[0];
	if (offender == DTL_NONE_INDEX)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, offload ? DTL_SEVERITY_WARNING : c->rule->severity, g->loc,
	    offload ? "ZeRO-3 trainable parameters mix %s: with offload_param they are silently "
	              "copied into %s buffers"
	            : "ZeRO-3 trainable parameters mix %s: the optimizer defragments them into "
	              "one %s buffer",
	    dtl_check_dtype_set(c, g->members, g->count, false),
	    dtl_dtype_name(sim->t.dtype[first]));
	if (!f)
		return -ENOMEM;
	f->group = g;
	f->group_offset = (uint32_t)offset;
	if (offload) {
		f->effect =
		    dtl_arena_sprintf(c->arena,
		                      "'%s' and every other non-%s trainable parameter is "
		                      "trained in %s",
		                      sim->t.name[offender], dtl_dtype_name(sim->t.dtype[first]),
		                      dtl_dtype_name(sim->t.dtype[first]));
	} else {
		f->error_text = "AssertionError (bare, in defragment)";
		f->error_when = "in deepspeed.initialize, when the ZeRO-3 optimizer is built";
	}
	f->error_versions = dtl_check_version(c, DTL_FW_DEEPSPEED);
	f->fix = "give all trainable parameters one dtype (e.g. autocast_adapter_dtype=False, or "
	         "cast the odd ones)";
	if (dtl_check_add_tensor(c, f, offender, NULL) < 0 ||
	    dtl_check_add_tensor(c, f, first, "the first trainable parameter") < 0)
		return -ENOMEM;
	return 0;
}

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
	    "in the first forward's parameter fetch (_all_gather_dtype)", DTL_FW_DEEPSPEED,
	    "use DeepSpeed >= 0.19.3 (PR #8113 checks the communication dtype), or give the "
	    "parameters one storage dtype (get_peft_model(..., autocast_adapter_dtype=False))");
	if (dtl_check_add_tensor(c, f, b, NULL) < 0 || dtl_check_add_tensor(c, f, a, NULL) < 0)
		return -ENOMEM;
	return 0;
}

const struct dtl_rule dtl_rule_dt123 = {
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

const struct dtl_rule dtl_rule_dt124 = {
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
};

const struct dtl_rule dtl_rule_dt121 = {
    .id = "DT121",
    .name = "zero3-mixed-dtype-persistent-gather",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "ZeRO-3 persistent parameters of mixed dtypes meet a first-dtype coalesced "
               "all-gather",
    .explanation =
        "ZeRO-3 keeps parameters with numel <= stage3_param_persistence_threshold (1e5 by "
        "default; 'auto' = 10 x hidden_size) unpartitioned, chosen in named_parameters() "
        "order, trainable or not. After each optimizer step it re-gathers them in one "
        "coalesced call, and DeepSpeed 0.12.0 to 0.19.2 allocates every output buffer in "
        "the first parameter's dtype. With more than one dtype among them (bf16 norms and "
        "PEFT's fp32 LoRA matrices), world size > 1 and stage3_allgather_sequential false, "
        "the first optimizer step ends with:\n"
        "  TypeError: output tensor must have the same type as input tensor\n"
        "DeepSpeed 0.19.2 exposed it by no longer casting params added after zero.Init; "
        "0.19.3 fixed the gather (PR #8073).",
    .example = "tensors:\n"
               "  - {name: l.0.norm.weight, shape: [64], dtype: bfloat16}\n"
               "  - {name: l.0.q.lora_A.default.weight, shape: [8, 64], dtype: float32}\n"
               "training: {strategy: zero3, precision: bf16, world_size: 8,\n"
               "           versions: {deepspeed: \"0.19.2\"}}",
    .fix = "DeepSpeed >= 0.19.3, or stage3_allgather_sequential: true, or "
           "stage3_param_persistence_threshold: 0, or adapters in the base dtype "
           "(autocast_adapter_dtype=False).",
    .facts = "https://github.com/deepspeedai/DeepSpeed/pull/8066 "
             "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
             "parameter_offload.py#L311-L329 https://github.com/deepspeedai/DeepSpeed/pull/8073",
    .check = dt121_check,
};

const struct dtl_rule dtl_rule_dt122 = {
    .id = "DT122",
    .name = "zero3-mixed-dtype-trainable",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "ZeRO-3 trainable parameters have more than one dtype",
    .explanation =
        "The ZeRO-3 optimizer defragments all trainable parameters into one flat buffer "
        "and asserts a single dtype first: without param offload, deepspeed.initialize "
        "fails with a bare AssertionError (since 0.6.0). With offload_param on cpu or nvme "
        "the partitions are copied into buffers of the first trainable parameter's dtype "
        "instead: no error, the others silently train in that dtype (warning).",
    .example = "tensors:\n"
               "  - {name: l.0.q.weight, shape: [64, 64], dtype: bfloat16}\n"
               "  - {name: l.0.q.lora_A.default.weight, shape: [8, 64], dtype: float32}\n"
               "training: {strategy: zero3, precision: bf16}",
    .fix = "Give all trainable parameters one dtype (autocast_adapter_dtype=False, or cast "
           "the odd ones).",
    .facts = "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/utils.py#L207-L235",
    .check = dt122_check,
};
