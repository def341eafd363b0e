/* SPDX-License-Identifier: MIT */
/* DT121 zero3-mixed-dtype-persistent-gather: ZeRO-3 persistent parameters of mixed dtypes meet a
 * first-dtype coalesced . */

#include <errno.h>

#include "rule-util.h"

/*
 * rules/versions.yaml deepspeed-coalesced-gather-first-dtype (DeepSpeed PR #8073): after each
 * optimizer step ZeRO-3
 * all-gathers the persistent parameters in one coalesced call; from 0.5.5 to 0.19.2 every
 * output buffer has the first parameter's dtype, so mixed dtypes raise in
 * all_gather_into_tensor — when world size > 1 and stage3_allgather_sequential is false.
 */
static int dt121_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_group *g = dtl_rules_find_group(sim, DTL_GROUP_ZERO3_PERSISTENT);
	size_t offset = 0;

	if (!g || g->count < 2 || !dtl_sim_behavior(sim, DTL_B_DS_COALESCED_GATHER_FIRST_DTYPE))
		return 0;
	if (rp->plan.world_size <= 1 || rp->plan.zero3.allgather_sequential == DTL_TRUE)
		return 0;
	uint32_t offender = dtl_rules_first_other_dtype(sim, g, &offset), first = g->members[0];
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
	/* stage3_allgather_sequential exists from 0.18.5 (deepspeed-allgather-sequential); an
	 * older DeepSpeed refuses the key (DT125) */
	f->fix = dtl_sim_behavior(sim, DTL_B_DS_ALLGATHER_SEQUENTIAL)
	             ? "upgrade to deepspeed >= 0.19.3 (PR #8073), or set "
	               "stage3_allgather_sequential: true, or stage3_param_persistence_threshold: "
	               "0, or keep adapters in the base dtype (autocast_adapter_dtype=False)"
	             : "upgrade to deepspeed >= 0.19.3 (PR #8073), or set "
	               "stage3_param_persistence_threshold: 0, or keep adapters in the base dtype "
	               "(autocast_adapter_dtype=False)";
	if (dtl_check_add_tensor(c, f, offender, NULL) < 0 ||
	    dtl_check_add_tensor(c, f, first, "the first persistent parameter") < 0)
		return -ENOMEM;
	return 0;
}

static int dt121_propose_fixes(const struct dtl_fix_request *req)
{

	if (dtl_rules_propose_autocast_off(req) < 0)
		return -ENOMEM;
	if (dtl_rules_propose_version(
	        req, DTL_FW_DEEPSPEED, "0.19.3",
	        "upgrade DeepSpeed: training.versions.deepspeed: \"0.19.3\" (PR #8073)") < 0)
		return -ENOMEM;
	/* the key exists from 0.18.5; an older DeepSpeed refuses it (DT125) */
	if (dtl_sim_behavior(req->sim, DTL_B_DS_ALLGATHER_SEQUENTIAL) &&
	    !dtl_rules_propose(req, DTL_FIX_ALLGATHER_SEQUENTIAL, NULL, 0, 1,
	                       "set training.zero3.allgather_sequential: true "
	                       "(stage3_allgather_sequential)"))
		return -ENOMEM;
	if (!dtl_rules_propose(req, DTL_FIX_PERSISTENCE_ZERO, NULL, 0, 1,
	                       "set training.zero3.persistence_threshold: 0 "
	                       "(stage3_param_persistence_threshold)"))
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt121) = {
    .id = "DT121",
    .name = "zero3-mixed-dtype-persistent-gather",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "ZeRO-3 persistent parameters of mixed dtypes meet a first-dtype coalesced "
               "all-gather",
    .explanation =
        "ZeRO-3 keeps parameters with numel <= stage3_param_persistence_threshold (1e5 by "
        "default; 'auto' = 10 x hidden_size) unpartitioned, chosen in named_parameters() "
        "order, trainable or not. After each optimizer step it re-gathers them in one "
        "coalesced call, and DeepSpeed 0.5.5 to 0.19.2 allocates every output buffer in "
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
    .fix = "DeepSpeed >= 0.19.3, or stage3_allgather_sequential: true (DeepSpeed >= 0.18.5), or "
           "stage3_param_persistence_threshold: 0, or adapters in the base dtype "
           "(autocast_adapter_dtype=False).",
    .facts = "https://github.com/deepspeedai/DeepSpeed/pull/8066 "
             "https://github.com/deepspeedai/DeepSpeed/blob/"
             "edaa7221267243c7be7fb49c5d5f5c4fb97b4641/deepspeed/runtime/zero/"
             "parameter_offload.py#L311-L329 https://github.com/deepspeedai/DeepSpeed/pull/8073",
    .check = dt121_check,
    .propose_fixes = dt121_propose_fixes,
};
