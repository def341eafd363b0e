/* SPDX-License-Identifier: MIT */
/*
 * The engine stage: deepspeed.initialize's module cast at every ZeRO stage (blanket up to
 * 0.19.1, per policy after) and accelerate's fp32 upcast of trainable parameters before fully_shard
 * (FSDP2).
 */
#include <errno.h>
#include <string.h>

#include "sim-private.h"

static const char *fact_ds = "https://github.com/deepspeedai/DeepSpeed/pull/8066";
static const char *fact_accel =
    "https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/src/"
    "accelerate/utils/fsdp_utils.py#L773-L817";

static int deepspeed_cast(struct dtl_sim *sim)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	bool blanket = dtl_sim_behavior(sim, DTL_B_DS_BLANKET_MODULE_CAST);
	bool zero_init_model = false;
	char v[32];
	int r;

	for (size_t i = 0; i < sim->t.count && !zero_init_model; i++)
		zero_init_model = sim->t.flags[i] & DTL_TF_ZERO_PARAM;
	dtl_version_format(&rp->plan.versions[DTL_FW_DEEPSPEED], v, sizeof(v));
	for (size_t i = 0; i < sim->t.count; i++) {
		enum dtl_dtype d = sim->t.dtype[i], target = DTL_DTYPE_NONE;
		struct dtl_loc loc =
		    dtl_sim_plan_loc(sim, rp->plan.precision_loc, rp->plan.strategy_loc);
		const char *reason = NULL;
		if (!dtl_dtype_is_floating(d) || (sim->t.flags[i] & DTL_TF_ALIAS) ||
		    sim->t.kind[i] == DTL_KIND_QUANT_STATE)
			continue;
		if (blanket) {
			if (rp->mode_dtype == DTL_DTYPE_NONE)
				continue;
			target = rp->mode_dtype;
			reason =
			    dtl_arena_sprintf(sim->arena,
			                      "deepspeed %s's initialize runs module.%s(): every "
			                      "floating param and buffer",
			                      v, target == DTL_DTYPE_BF16 ? "bfloat16" : "half");
		} else if (sim->t.kind[i] == DTL_KIND_BUFFER) {
			if (rp->plan.zero3.buffer_dtype == DTL_DTYPE_NONE)
				continue;
			target = rp->plan.zero3.buffer_dtype;
			loc = rp->plan.zero3.buffer_dtype_loc;
			reason = dtl_arena_sprintf(
			    sim->arena, "deepspeed %s casts buffers to data_types.buffer_dtype", v);
		} else if (!zero_init_model) {
			if (rp->mode_dtype == DTL_DTYPE_NONE)
				continue;
			target = rp->mode_dtype;
			reason = dtl_arena_sprintf(
			    sim->arena,
			    rp->plan.strategy == DTL_STRATEGY_ZERO3
			        ? "deepspeed %s casts the params of a model not built under "
			          "zero.Init to %s"
			        : "deepspeed %s's initialize casts every floating param to %s "
			          "(at ZeRO stages 0-2 too)",
			    v, dtl_dtype_name(target));
		}
		if (target == DTL_DTYPE_NONE || target == d)
			continue;
		r = dtl_sim_set_dtype(sim, (uint32_t)i, DTL_STAGE_ENGINE, target, reason, fact_ds,
		                      loc);
		if (r < 0)
			return r;
	}
	return 0;
}

/* accelerate >= 1.14 upcasts trainable params to fp32 before fully_shard when mixed precision
 * is on and no Params4bit is present. Applied only when the plan names accelerate: the plan
 * does not otherwise say that accelerate launches the run. */
static int accelerate_fsdp2_upcast(struct dtl_sim *sim)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	char v[32];
	int r;

	if (rp->version_assumed[DTL_FW_ACCELERATE] || rp->mode_dtype == DTL_DTYPE_NONE ||
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_UPCAST) ||
	    sim->manifest->quantization.method == DTL_QUANT_BNB_4BIT)
		return 0;
	dtl_version_format(&rp->plan.versions[DTL_FW_ACCELERATE], v, sizeof(v));
	for (size_t i = 0; i < sim->t.count; i++) {
		if (!(sim->t.flags[i] & DTL_TF_TRAINABLE) || sim->t.dtype[i] == DTL_DTYPE_F32 ||
		    sim->t.kind[i] != DTL_KIND_PARAM)
			continue;
		const char *reason = dtl_arena_sprintf(sim->arena,
		                                       "accelerate %s upcasts trainable params to "
		                                       "float32 before fully_shard",
		                                       v);
		r = dtl_sim_set_dtype(sim, (uint32_t)i, DTL_STAGE_ENGINE, DTL_DTYPE_F32, reason,
		                      fact_accel, rp->plan.version_locs[DTL_FW_ACCELERATE]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* accelerate >= 1.14 on torch >= 2.7 puts frozen non-floating Params4bit in FSDP2's
 * ignored_params (accelerate PR #3987), when the plan names accelerate. */
static int accelerate_fsdp2_ignore_params4bit(struct dtl_sim *sim)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	int r;

	if (rp->version_assumed[DTL_FW_ACCELERATE] ||
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_IGNORE_PARAMS4BIT) ||
	    !dtl_sim_behavior(sim, DTL_B_FSDP2_IGNORED_PARAMS))
		return 0;
	for (uint32_t t = 0; t < sim->t.count; t++) {
		uint32_t f = sim->t.flags[t];
		if (!(f & DTL_TF_QUANTIZED) || (f & (DTL_TF_INT8 | DTL_TF_TRAINABLE)) ||
		    dtl_dtype_is_floating(sim->t.dtype[t]))
			continue;
		sim->t.flags[t] |= DTL_TF_IGNORED;
		r = dtl_sim_note(sim, t, DTL_STAGE_ENGINE,
		                 "accelerate excludes frozen non-floating Params4bit from FSDP2 "
		                 "sharding (ignored_params): kept whole on every rank",
		                 fact_accel, rp->plan.version_locs[DTL_FW_ACCELERATE]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* DeepSpeed's torch_autocast: Linear (and Conv) params are tagged with comm_dtype, the
 * dtype they are gathered and reduced in; their storage stays (rules/versions.yaml
 * deepspeed-torch-autocast). */
static int deepspeed_autocast(struct dtl_sim *sim)
{
	const struct dtl_plan_zero3 *z = &sim->rp.plan.zero3;
	int r;

	if (z->autocast != DTL_TRUE || !dtl_sim_behavior(sim, DTL_B_DS_AUTOCAST))
		return 0;
	const char *reason = dtl_arena_sprintf(
	    sim->arena,
	    "torch_autocast tags it: gathered and reduced in %s, "
	    "stored as it is",
	    z->autocast_dtype ? dtl_dtype_name(z->autocast_dtype) : "the autocast dtype");
	if (!reason)
		return -ENOMEM;
	for (uint32_t mod = 1; mod < sim->module_count; mod++) {
		uint32_t weight;
		const struct dtl_module *md = &sim->modules[mod];
		/* PEFT's lora_A / lora_B are plain nn.Linear modules too */
		bool lora = memmem(md->path, md->path_len, ".lora_A.", 8) ||
		            memmem(md->path, md->path_len, ".lora_B.", 8);
		if (!lora && !dtl_sim_linear(sim, mod, &weight, NULL, NULL))
			continue;
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t]) {
			if (sim->t.kind[t] != DTL_KIND_PARAM ||
			    !dtl_dtype_is_floating(sim->t.dtype[t]))
				continue;
			sim->t.flags[t] |= DTL_TF_AUTOCAST_COMM;
			r = dtl_sim_note(sim, t, DTL_STAGE_ENGINE, reason,
			                 "https://github.com/deepspeedai/DeepSpeed/pull/6993",
			                 z->autocast_loc);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int dtl_stage_engine(struct dtl_sim *sim, struct dtl_error *error)
{
	int r;

	(void)error;
	switch (sim->rp.plan.strategy) {
	case DTL_STRATEGY_ZERO3:
		r = deepspeed_cast(sim);
		return r < 0 ? r : deepspeed_autocast(sim);
	case DTL_STRATEGY_DDP:
		/* ZeRO 0-2: _configure_distributed_model casts whatever the stage */
		if (!sim->rp.plan.deepspeed_engine ||
		    !dtl_sim_behavior(sim, DTL_B_DS_ENGINE_CAST_ANY_STAGE))
			return 0;
		return deepspeed_cast(sim);
	case DTL_STRATEGY_FSDP2:
		r = accelerate_fsdp2_ignore_params4bit(sim);
		if (r >= 0)
			r = accelerate_fsdp2_upcast(sim);
		return r < 0 ? r : dtl_sim_accelerate_fsdp2_cast(sim);
	default:
		return 0;
	}
}
