/* SPDX-License-Identifier: MIT */
/* DT111 fsdp2-mixed-dtype-group: an FSDP2 fully_shard group holds parameters of more than one
 * dtype. */

#include <errno.h>

#include "rule-util.h"

/*
 * rules/versions.yaml fsdp2-trainable-only-check (_fsdp_param_group.py at its commit):
 * FSDPParamGroup._init_mp_dtypes asserts one original
 * dtype, at lazy init (the first forward): over all parameters up to ~2.7, over trainable ones
 * from ~2.8 (PR #154103). param_dtype does not help: the check is on the original dtype.
 */
static int dt111_check(struct dtl_check *c)
{
	size_t first_finding = c->findings->items.count;
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool trainable_only = dtl_sim_behavior(sim, DTL_B_FSDP2_TRAINABLE_ONLY_CHECK);

	/* torch that splits a group's trainable params by dtype (rules/versions.yaml
	 * fsdp2-split-trainable-by-dtype) raises nothing here */
	if (trainable_only && dtl_sim_behavior(sim, DTL_B_FSDP2_SPLIT_TRAINABLE_BY_DTYPE))
		return 0;
	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP2_GROUP)
			continue;
		uint32_t *checked =
		    dtl_arena_calloc(c->arena, g->count ? g->count : 1, sizeof(uint32_t));
		size_t n = 0;
		if (!checked)
			return -ENOMEM;
		for (size_t k = 0; k < g->count; k++)
			if (!trainable_only || dtl_rules_trainable(sim, g->members[k]))
				checked[n++] = g->members[k];
		if (n < 2)
			continue;
		uint32_t first = checked[0], offender = DTL_NONE_INDEX;
		size_t offset = 0;
		for (size_t k = 1; k < n && offender == DTL_NONE_INDEX; k++)
			if (sim->t.dtype[checked[k]] != sim->t.dtype[first])
				offender = checked[k];
		/* a quantized weight's storage is the cause: DT401 / DT402 report it */
		if (offender == DTL_NONE_INDEX || dtl_rules_quantized(sim, offender) ||
		    dtl_rules_quantized(sim, first))
			continue;
		for (size_t k = 0; k < g->count; k++)
			if (g->members[k] == offender)
				offset = k;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, g->loc, "FSDP2 group '%s' mixes %s %sparameters", g->name,
		    dtl_check_dtype_set(c, checked, n, false), trainable_only ? "trainable " : "");
		if (!f)
			return -ENOMEM;
		f->group = g;
		f->group_offset = (uint32_t)offset;
		dtl_check_predict(
		    c, f,
		    dtl_arena_sprintf(c->arena,
		                      "AssertionError: FSDP expects uniform original "
		                      "parameter dtype but got {%s}",
		                      dtl_check_dtype_set(c, checked, n, true)),
		    "at the first forward (lazy init)", DTL_FW_TORCH,
		    "give each fully_shard group one dtype: cast the odd parameters, or "
		    "fully_shard them separately (one group per dtype)");
		if (dtl_check_add_tensor(c, f, offender, NULL) < 0 ||
		    dtl_check_add_tensor(c, f, first, "the group's first checked parameter") < 0)
			return -ENOMEM;
	}
	return dtl_check_merge_groups(c, first_finding, "group");
}

static int dt111_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;

	/* NeMo Automodel 0.4.0 leaves Gemma 4's towers in their sub-configs' dtype beside
	 * embedders in the requested one; 0.5.0 sets the dtype on every nested config first
	 * (rules/versions.yaml automodel-subconfig-dtype-not-propagated, PR #2027) */
	if (dtl_sim_behavior(sim, DTL_B_AUTOMODEL_SUBCONFIG_DTYPE_NOT_PROPAGATED)) {
		if (dtl_rules_propose_version(
		        req, DTL_FW_AUTOMODEL, "0.5.0",
		        "upgrade NeMo Automodel: training.versions.nemo-automodel: \"0.5.0\" (PR "
		        "#2027 "
		        "gives the towers' sub-configs the requested dtype)") < 0)
			return -ENOMEM;
	}
	if (dtl_rules_propose_autocast_off(req) < 0 || dtl_rules_propose_wrap_apart(req) < 0)
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt111) = {
    .id = "DT111",
    .name = "fsdp2-mixed-dtype-group",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP2 fully_shard group holds parameters of more than one dtype",
    .explanation =
        "fully_shard builds one FSDPParamGroup per call from the parameters its module "
        "owns that no nested fully_shard took. At the first forward, lazy init asserts one "
        "original dtype:\n"
        "  AssertionError: FSDP expects uniform original parameter dtype but got "
        "{torch.bfloat16, torch.float32}\n"
        "Up to torch ~2.7 every parameter is checked, frozen ones included; from ~2.8 only "
        "trainable ones (PR #154103; the release boundary is unverified). The "
        "MixedPrecisionPolicy's param_dtype does not help: the check is on the original "
        "dtype. accelerate >= 1.14 upcasts trainable parameters to float32 first. torch "
        "2.15 splits a group's trainable parameters by dtype and raises nothing (NVIDIA "
        "Model-Optimizer#2152 reports it on PyTorch main; the release boundary is "
        "unverified). NeMo Automodel 0.4.0 builds Gemma 4's towers in their sub-configs' "
        "dtype beside embedders in the requested one (Automodel#2017); --fix-plan proposes "
        "0.5.0, which gives every sub-config the requested dtype (PR #2027).",
    .example = "tensors:\n"
               "  - {name: layers.0.attn.weight, shape: [8, 8], dtype: bfloat16}\n"
               "  - {name: layers.0.router.weight, shape: [4, 8], dtype: float32}\n"
               "training: {strategy: fsdp2, versions: {torch: \"2.8.0\"}, fsdp: {wrap: "
               "[\"layers.*\"]}}",
    .fix = "Give each group one dtype, or fully_shard the odd modules separately (one group "
           "per dtype, e.g. an fp32 group for the router).",
    .facts =
        "https://github.com/pytorch/pytorch/blob/b795ad9c42aec11accd16c94bc0b4d8dc73af07a/torch/"
        "distributed/fsdp/_fully_shard/_fsdp_init.py "
        "https://github.com/pytorch/pytorch/blob/002a76fbfea0ac0f199e4b8e2a0691074796c908/torch/"
        "distributed/fsdp/_fully_shard/_fsdp_param_group.py; "
        "https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/"
        "src/accelerate/utils/fsdp_utils.py#L773-L817",
    .check = dt111_check,
    .propose_fixes = dt111_propose_fixes,
};
