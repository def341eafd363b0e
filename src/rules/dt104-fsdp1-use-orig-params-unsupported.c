/* SPDX-License-Identifier: MIT */
/* DT104 fsdp1-use-orig-params-unsupported: FSDP1 is given use_orig_params by a torch without it. */
#include <errno.h>

#include "rule-util.h"

/* rules/versions.yaml fsdp1-has-use-orig-params: the argument arrived in torch 2.0 (PR #84911).
 * torch 1.13's constructor has no **kwargs, so Python refuses the keyword before FSDP runs;
 * checked on Debian's python3-torch 1.13 (FullyShardedDataParallel(model,
 * use_orig_params=True) on the CPU). */
static int dt104_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_plan *plan = &sim->rp.plan;

	if (plan->strategy != DTL_STRATEGY_FSDP1 || plan->fsdp.use_orig_params != DTL_TRUE ||
	    dtl_sim_behavior(sim, DTL_B_FSDP1_HAS_USE_ORIG_PARAMS))
		return 0;
	struct dtl_finding *f =
	    dtl_check_report(c, c->rule->severity, plan->fsdp.use_orig_params_loc,
	                     "fsdp.use_orig_params is set, but this torch's FSDP1 has no such "
	                     "argument (it arrived in torch 2.0)");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(c, f,
	                  "TypeError: FullyShardedDataParallel.__init__() got an unexpected "
	                  "keyword argument 'use_orig_params'",
	                  "at wrap time, calling the FullyShardedDataParallel constructor",
	                  DTL_FW_TORCH,
	                  "drop fsdp.use_orig_params (torch 1.13 always flattens as "
	                  "use_orig_params=False does), or use torch >= 2.0");
	return 0;
}

DTL_RULE(dt104) = {
    .id = "DT104",
    .name = "fsdp1-use-orig-params-unsupported",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "FSDP1 is given use_orig_params by a torch that does not have it",
    .explanation =
        "FullyShardedDataParallel took use_orig_params from torch 2.0 on. torch 1.13's "
        "constructor does not know the keyword, so wrapping fails before any parameter is "
        "flattened: 'TypeError: FullyShardedDataParallel.__init__() got an unexpected keyword "
        "argument 'use_orig_params''. A plan written for torch 2.x (or an accelerate config "
        "with fsdp_use_orig_params) run on torch 1.13 stops there.",
    .example = "training:\n"
               "  strategy: fsdp1\n"
               "  versions: {torch: \"1.13.1\"}\n"
               "  fsdp: {wrap: [DecoderLayer], use_orig_params: true}",
    .fix = "Drop fsdp.use_orig_params on torch 1.13 (it always flattens as "
           "use_orig_params=False does), or upgrade torch to 2.0 or later.",
    .facts = "https://github.com/pytorch/pytorch/pull/84911 (adds use_orig_params, torch 2.0); "
             "https://github.com/pytorch/pytorch/blob/v1.13.0/torch/distributed/fsdp/"
             "fully_sharded_data_parallel.py (the 1.13 constructor, without it); raised by "
             "Debian's python3-torch 1.13 on the CPU",
    .check = dt104_check,
};
