/* SPDX-License-Identifier: MIT */
/* DT603 unknown-architecture: no architecture profile: routers and buffers found by heuristics. */
#include <errno.h>

#include "rule-check.h"

/* DT603 — no profile for the named architecture. */
static int dt603_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_model_info *m = &sim->manifest->model;

	if (!m->architecture || sim->model.profile)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, m->architecture_loc,
	    "no architecture profile for '%s': routers and fp32 buffers are found by name",
	    m->architecture);
	if (!f)
		return -ENOMEM;
	f->effect = "routers are modules named gate or router beside an experts module; fp32 "
	            "buffers on purpose are inv_freq and e_score_correction_bias; keep-in-fp32 "
	            "lists and wrap classes come only from the manifest";
	f->fix = "state model.keep_in_fp32, keep_in_fp32_strict, no_split_modules and routers in "
	         "the manifest, or add a profile in rules/architectures/";
	return 0;
}

DTL_RULE(dt603) = {
    .id = "DT603",
    .name = "unknown-architecture",
    .severity = DTL_SEVERITY_INFO,
    .summary = "no architecture profile: routers and buffers found by heuristics",
    .explanation =
        "dtypelint knows the keep-in-fp32 lists, wrap classes, routers and fp32 buffers of "
        "the architectures in rules/architectures/. For another model.architecture it uses "
        "only the manifest and name heuristics.",
    .example = "model: {architecture: MyCustomForCausalLM}",
    .fix = "Write the model's lists in the manifest, or contribute a profile.",
    .facts = "rules/architectures/README.md",
    .check = dt603_check,
};
