/* SPDX-License-Identifier: MIT */
/* DT102 fsdp1-mixed-requires-grad-unit: an FSDP1 unit mixes trainable and frozen parameters. */
#include <errno.h>

#include "rule-util.h"

static int dt102_check(struct dtl_check *c)
{
	size_t first_finding = c->findings->items.count;
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	const struct dtl_plan *plan = &sim->rp.plan;
	bool has_orig = dtl_sim_behavior(sim, DTL_B_FSDP1_HAS_USE_ORIG_PARAMS);
	bool relaxed = dtl_sim_behavior(sim, DTL_B_FSDP1_ORIG_PARAMS_MIXED_GRAD) &&
	               plan->fsdp.use_orig_params == DTL_TRUE;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP1_UNIT || g->count < 2)
			continue;
		uint32_t first = g->members[0];
		if (!dtl_dtype_is_floating(sim->t.dtype[first]))
			continue;
		for (size_t k = 1; k < g->count; k++) {
			uint32_t t = g->members[k];
			/* torch checks each tensor's dtype before its requires_grad: a dtype
			 * mismatch (DT101, DT401, DT402) stops it first */
			if (sim->t.dtype[t] != sim->t.dtype[first])
				break;
			if (dtl_rules_trainable(sim, t) == dtl_rules_trainable(sim, first))
				continue;
			struct dtl_finding *f = dtl_check_report(
			    c, relaxed ? DTL_SEVERITY_WARNING : c->rule->severity, g->loc,
			    "FSDP1 unit '%s' mixes trainable and frozen parameters%s", g->name,
			    relaxed ? " (allowed with use_orig_params, at the cost of gradient "
			              "memory for the whole flat parameter)"
			            : "");
			if (!f)
				return -ENOMEM;
			f->group = g;
			f->group_offset = (uint32_t)k;
			if (relaxed) {
				f->effect =
				    "gradients are materialised for the whole FlatParameter, "
				    "frozen members included";
			} else if (v2) {
				f->error_text = "ValueError: Must flatten tensors with uniform "
				                "`requires_grad` when `use_orig_params=False`";
			} else {
				f->error_text = "ValueError: `FlatParameter` requires uniform "
				                "`requires_grad`";
			}
			f->error_when = "at wrap time, in the FullyShardedDataParallel constructor";
			f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
			f->fix = relaxed ? "wrap the frozen parameters in units of their own"
			         : has_orig
			             ? "set fsdp.use_orig_params: true (torch >= 2.1), or wrap "
			               "the frozen parameters in units of their own"
			             : "wrap the frozen parameters in units of their own "
			               "(use_orig_params needs torch >= 2.0, and relaxes this "
			               "from 2.1)";
			if (dtl_check_add_tensor(c, f, t, NULL) < 0 ||
			    dtl_check_add_tensor(c, f, first, "the unit's first parameter") < 0)
				return -ENOMEM;
			break;
		}
	}
	return dtl_check_merge_groups(c, first_finding, "unit");
}

static int dt102_propose_fixes(const struct dtl_fix_request *req)
{
	if (!dtl_rules_propose(req, DTL_FIX_USE_ORIG_PARAMS, NULL, 0, 1,
	                       "set training.fsdp.use_orig_params: true"))
		return -ENOMEM;
	return dtl_rules_propose_wrap_module(req);
}

DTL_RULE(dt102) = {
    .id = "DT102",
    .name = "fsdp1-mixed-requires-grad-unit",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP1 unit mixes trainable and frozen parameters",
    .explanation =
        "A FlatParameter has one requires_grad. With use_orig_params=False (and always on "
        "torch 1.13 and 2.0) a unit that mixes frozen and trainable parameters fails at "
        "wrap time:\n"
        "  torch >= 2.1: ValueError: Must flatten tensors with uniform `requires_grad` when "
        "`use_orig_params=False`\n"
        "  torch <= 2.0: ValueError: `FlatParameter` requires uniform `requires_grad`\n"
        "From torch 2.1, use_orig_params=True allows it; dtypelint then reports a warning: "
        "gradients are materialised for the whole flat parameter.",
    .example = "tensors:\n"
               "  - {name: layers.0.a.weight, shape: [8, 8], trainable: false}\n"
               "  - {name: layers.0.b.weight, shape: [8, 8]}\n"
               "training: {strategy: fsdp1, fsdp: {wrap: [\"layers.*\"]}}",
    .fix = "Set fsdp.use_orig_params: true (torch >= 2.1), or wrap frozen parameters in units "
           "of their own.",
    .facts = "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py",
    .check = dt102_check,
    .propose_fixes = dt102_propose_fixes,
};
