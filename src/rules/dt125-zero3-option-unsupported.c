/* SPDX-License-Identifier: MIT */
/* DT125 zero3-option-unsupported: the set-up gives DeepSpeed a ZeRO-3 option its version does not
 * have. */
#include <errno.h>

#include "rule-util.h"

/* rules/versions.yaml deepspeed-allgather-sequential: stage3_allgather_sequential arrived in
 * 0.18.5 (PR #7661). DeepSpeedZeroConfig is a pydantic model with extra="forbid"
 * (runtime/config_utils.py DeepSpeedConfigModel), so an older DeepSpeed refuses the key whatever
 * its value, where it first parses its config: zero.Init in from_pretrained (HfDeepSpeedConfig),
 * else deepspeed.initialize. Seen by tests/oracle/boundaries.py at 0.18.4 / 0.18.5. */
static int allgather_sequential(struct dtl_check *c)
{
	const struct dtl_plan *plan = &c->sim->rp.plan;

	if (plan->zero3.allgather_sequential == DTL_UNSET ||
	    dtl_sim_behavior(c->sim, DTL_B_DS_ALLGATHER_SEQUENTIAL))
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, plan->zero3.allgather_sequential_loc,
	    "stage3_allgather_sequential is set, but this DeepSpeed's ZeRO "
	    "config has no such key (it arrived in 0.18.5) and forbids extra ones");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f,
	    "ValidationError: 1 validation error for DeepSpeedZeroConfig: "
	    "stage3_allgather_sequential: Extra inputs are not permitted",
	    "where DeepSpeed parses its config: zero.Init in from_pretrained, else "
	    "deepspeed.initialize",
	    DTL_FW_DEEPSPEED,
	    "drop stage3_allgather_sequential, or use DeepSpeed >= 0.18.5 (PR #7661)");
	return 0;
}

/* rules/versions.yaml deepspeed-init-tensor-overrides: zero.Init's tensor_overrides and its
 * DeepSpeedTensorOverride enum arrived together in 0.17.1 (PR #7215); on 0.17.0 the script's
 * own import of the enum fails before zero.Init runs. Seen by tests/oracle/boundaries.py at
 * 0.17.0 / 0.17.1. */
static int tensor_overrides(struct dtl_check *c)
{
	const struct dtl_plan *plan = &c->sim->rp.plan;

	if (plan->zero3.init_dtype_override == DTL_UNSET ||
	    dtl_sim_behavior(c->sim, DTL_B_DS_INIT_TENSOR_OVERRIDES))
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, plan->zero3.init_dtype_override_loc,
	    "zero.Init is given tensor_overrides, but this DeepSpeed has no such argument "
	    "(it arrived in 0.17.1)");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(c, f,
	                  "ImportError: cannot import name 'DeepSpeedTensorOverride' from "
	                  "'deepspeed.runtime.zero.partition_parameters'",
	                  "in the script, before zero.Init (passing tensor_overrides=[] instead "
	                  "raises TypeError in zero.Init)",
	                  DTL_FW_DEEPSPEED,
	                  "drop tensor_overrides (zero.Init then casts every floating tensor to "
	                  "its dtype), or use DeepSpeed >= 0.17.1 (PR #7215)");
	return 0;
}

static int dt125_check(struct dtl_check *c)
{
	const struct dtl_plan *plan = &c->sim->rp.plan;
	int r;

	if (plan->strategy != DTL_STRATEGY_ZERO3 && !plan->deepspeed_engine)
		return 0;
	if ((r = allgather_sequential(c)) < 0)
		return r;
	return tensor_overrides(c);
}

DTL_RULE(dt125) = {
    .id = "DT125",
    .name = "zero3-option-unsupported",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the set-up gives DeepSpeed a ZeRO-3 option its version does not have",
    .explanation =
        "Two ZeRO-3 options that change dtypes are younger than the DeepSpeed releases that "
        "still run. stage3_allgather_sequential (the fix DT121 proposes) arrived in 0.18.5; "
        "DeepSpeed's ZeRO config forbids unknown keys, so an older release refuses the config "
        "where it first parses it (zero.Init in from_pretrained, else deepspeed.initialize): "
        "'ValidationError: 1 validation error for DeepSpeedZeroConfig "
        "stage3_allgather_sequential Extra inputs are not permitted'. zero.Init's "
        "tensor_overrides and its DeepSpeedTensorOverride enum arrived in 0.17.1; on 0.17.0 "
        "the script's import of the enum fails: 'ImportError: cannot import name "
        "'DeepSpeedTensorOverride' from 'deepspeed.runtime.zero.partition_parameters''.",
    .example = "training:\n"
               "  strategy: zero3\n"
               "  versions: {deepspeed: \"0.18.4\"}\n"
               "  zero3: {allgather_sequential: true}",
    .fix = "Drop the option, or upgrade DeepSpeed: 0.18.5 for stage3_allgather_sequential, "
           "0.17.1 for tensor_overrides.",
    .facts = "https://github.com/deepspeedai/DeepSpeed/pull/7661 (stage3_allgather_sequential, "
             "0.18.5); https://github.com/deepspeedai/DeepSpeed/blob/v0.18.4/deepspeed/runtime/"
             "config_utils.py (extra=\"forbid\"); https://github.com/deepspeedai/DeepSpeed/pull/"
             "7215 (tensor_overrides, 0.17.1); both seen on the CPU accelerator by "
             "tests/oracle/boundaries.py",
    .check = dt125_check,
};
