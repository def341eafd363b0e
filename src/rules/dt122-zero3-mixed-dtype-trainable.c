/* SPDX-License-Identifier: MIT */
/* DT122 zero3-mixed-dtype-trainable: ZeRO-3 trainable parameters have more than one dtype. */
#include <errno.h>

#include "rule-util.h"

/* rules/versions.yaml deepspeed-defragment-assert: the ZeRO-3 optimizer defragments every trainable
 * parameter into one flat buffer: a bare assert of one dtype inside deepspeed.initialize (without
 * param offload); with offload_param the partitions are copied into a buffer of the first param's
 * dtype. */
static int dt122_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_resolved_plan *rp = &sim->rp;
	const struct dtl_group *g = dtl_rules_find_group(sim, DTL_GROUP_ZERO3_TRAINABLE);
	bool offload = rp->plan.zero3.offload_param == DTL_OFFLOAD_CPU ||
	               rp->plan.zero3.offload_param == DTL_OFFLOAD_NVME;
	size_t offset = 0;

	if (!g || g->count < 2 || !dtl_sim_behavior(sim, DTL_B_DS_DEFRAGMENT_ASSERT))
		return 0;
	uint32_t offender = dtl_rules_first_other_dtype(sim, g, &offset), first = g->members[0];
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

DTL_RULE(dt122) = {
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
    .propose_fixes = dtl_rules_propose_autocast_off,
};
