/* SPDX-License-Identifier: MIT */
/* DT101 fsdp1-mixed-dtype-unit: an FSDP1 unit holds parameters of more than one dtype. */
#include <errno.h>

#include "rule-util.h"

/*
 * _validate_tensors_to_flatten (rules/versions.yaml fsdp1-validate-v2,
 * https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/torch/distributed/fsdp/_flat_param.py):
 * FSDP1 validates each unit's parameters in
 * registration order when it flattens them, in the constructor (wrap time), units in
 * post-order. The first tensor must be floating; every later one must have its dtype; with
 * use_orig_params=False (always before 2.0, and in 2.0 in both modes) its requires_grad too.
 * We report each unit's first offence per rule; the group offset says which torch meets first.
 */
static int dt101_check(struct dtl_check *c)
{
	size_t first_finding = c->findings->items.count;
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP1_UNIT || g->count < 2)
			continue;
		uint32_t first = g->members[0];
		enum dtl_dtype d0 = sim->t.dtype[first];
		if (!dtl_dtype_is_floating(d0))
			continue; /* DT103: torch stops at the first tensor */
		for (size_t k = 1; k < g->count; k++) {
			uint32_t t = g->members[k];
			enum dtl_dtype d = sim->t.dtype[t];
			if (d == d0)
				continue;
			/* torch stops here; a quantized weight's storage is the cause, which
			 * DT401 (4-bit) and DT402 (LLM.int8) report with the same error */
			if (dtl_rules_quantized(sim, t) || dtl_rules_quantized(sim, first))
				break;
			struct dtl_finding *f = dtl_check_report(
			    c, c->rule->severity, g->loc,
			    "FSDP1 unit '%s' mixes %s and %s parameters: one FlatParameter needs "
			    "one dtype",
			    g->name, dtl_dtype_name(d0), dtl_dtype_name(d));
			if (!f)
				return -ENOMEM;
			f->group = g;
			f->group_offset = (uint32_t)k;
			f->error_text =
			    v2 ? dtl_arena_sprintf(c->arena,
			                           "ValueError: Must flatten tensors with uniform "
			                           "dtype but got %s and %s",
			                           dtl_dtype_torch_name(d0),
			                           dtl_dtype_torch_name(d))
			       : dtl_arena_sprintf(c->arena,
			                           "ValueError: `FlatParameter` requires uniform "
			                           "dtype but got %s and %s",
			                           dtl_dtype_torch_name(d0),
			                           dtl_dtype_torch_name(d));
			f->error_when = "at wrap time, in the FullyShardedDataParallel constructor";
			f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
			f->fix = dtl_arena_sprintf(
			    c->arena,
			    "give the unit one dtype: cast '%s' to %s, or make its module a unit "
			    "of its own (add it to fsdp.wrap), or list it in fsdp.ignored",
			    sim->t.name[t], dtl_dtype_name(d0));
			if (dtl_check_add_tensor(c, f, t, NULL) < 0 ||
			    dtl_check_add_tensor(c, f, first, "the unit's first parameter") < 0)
				return -ENOMEM;
			break;
		}
	}
	return dtl_check_merge_groups(c, first_finding, "unit");
}

static int dt101_propose_fixes(const struct dtl_fix_request *req)
{
	const char *mod = dtl_rules_fix_module(req);

	if (dtl_rules_propose_autocast_off(req) < 0 || dtl_rules_propose_wrap_apart(req) < 0)
		return -ENOMEM;
	if (mod && mod[0] &&
	    !dtl_rules_propose(req, DTL_FIX_IGNORE_ADD, dtl_arena_sprintf(req->arena, "%s.**", mod),
	                       0, 3, "leave '%s' out of FSDP: add '%s.**' to training.fsdp.ignored",
	                       mod, mod))
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt101) = {
    .id = "DT101",
    .name = "fsdp1-mixed-dtype-unit",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP1 unit holds parameters of more than one dtype",
    .explanation =
        "FSDP1 flattens the parameters of each wrapped unit into one FlatParameter, which "
        "has one dtype. When it meets a parameter whose dtype differs from the unit's "
        "first, the FullyShardedDataParallel constructor raises, at wrap time:\n"
        "  torch >= 2.1: ValueError: Must flatten tensors with uniform dtype but got "
        "torch.bfloat16 and torch.float32\n"
        "  torch <= 2.0: ValueError: `FlatParameter` requires uniform dtype but got "
        "torch.bfloat16 and torch.float32\n"
        "use_orig_params=True does not relax this. Units are built children first; a unit "
        "owns its subtree's parameters that no nested unit took, and the root takes the "
        "rest. Typical causes: a LoRA adapter PEFT upcast to float32 inside a bfloat16 "
        "layer, an fp32 router, a keep-in-fp32 module.",
    .example = "tensors:\n"
               "  - {name: layers.0.attn.weight, shape: [8, 8], dtype: bfloat16}\n"
               "  - {name: layers.0.gate.weight, shape: [4, 8], dtype: float32}\n"
               "training: {strategy: fsdp1, fsdp: {wrap: [\"layers.*\"]}}",
    .fix = "Give every unit one dtype: cast the odd tensor, wrap its module as a unit of its "
           "own (fsdp.wrap), or list it in fsdp.ignored.",
    .facts = "https://github.com/pytorch/pytorch/blob/39ec502db40696605fd91001e5a0afa23ed62f20/"
             "torch/distributed/fsdp/_init_utils.py "
             "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py",
    .check = dt101_check,
    .propose_fixes = dt101_propose_fixes,
};
