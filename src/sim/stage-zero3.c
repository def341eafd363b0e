/* SPDX-License-Identifier: MIT */
/* DeepSpeed zero.Init: every floating tensor created under it takes the mode dtype, unless
 * its tensor_overrides leave out dtype. */
#include <string.h>

#include "sim-private.h"

static const char *fact_init =
    "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/"
    "deepspeed/runtime/zero/partition_parameters.py#L391-L404";
static const char *fact_keep_fp32 =
    "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.8/deepspeed/runtime/keep_in_fp32.py";
static const char *fact_overrides =
    "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/"
    "deepspeed/runtime/zero/partition_parameters.py#L631-L640";

/* transformers <= 4.37 builds the RoPE cos/sin cache from a float torch.arange, which the
 * wrappers cast to the 16-bit dtype (rules/versions.yaml transformers-rope-cache-float-arange):
 * inv_freq stays float32 but the positions it multiplies are rounded, so the rotary buffer
 * computes in 16-bit. The cache holds positions 0 to max_position_embeddings - 1 (longer
 * inputs rebuild it in forward, outside zero.Init); those up to 256 (bfloat16) or 2048
 * (float16) are exact, so a model with no more positions than that loses nothing
 * (tests/oracle/DISAGREEMENTS.md D58). */
static int rope_cache(struct dtl_sim *sim, uint32_t t, struct dtl_loc loc)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	const char *name = sim->t.name[t];
	uint32_t len = sim->t.name_len[t];
	int64_t positions = sim->manifest->model.max_position_embeddings;
	int64_t exact = rp->zero_init_dtype == DTL_DTYPE_BF16 ? 256 : 2048;

	if (!dtl_dtype_is_half(rp->zero_init_dtype) || sim->t.dtype[t] != DTL_DTYPE_F32 ||
	    len < 8 || memcmp(name + len - 8, "inv_freq", 8) != 0 ||
	    !dtl_sim_behavior(sim, DTL_B_HF_ROPE_CACHE_FLOAT_ARANGE) ||
	    (positions > 0 && positions - 1 <= exact))
		return 0;
	const char *reason = dtl_arena_sprintf(
	    sim->arena,
	    "transformers <= 4.37 builds the RoPE cache from torch.arange(..., dtype=float32), "
	    "which zero.Init casts to %s: positions past %s are rounded (transformers#28685)",
	    dtl_dtype_name(rp->zero_init_dtype), exact == 256 ? "256" : "2048");
	return dtl_sim_set_compute_dtype(sim, t, rp->zero_init_dtype, reason,
	                                 "https://github.com/huggingface/transformers/issues/28685",
	                                 loc);
}

/* DeepSpeed >= 0.19.8 converts back to float32, after each module's __init__ and before the
 * checkpoint is copied into it, every floating buffer the model's _keep_in_fp32_modules_strict
 * names (and _keep_in_fp32_modules under fp16): data_types.keep_in_fp32_modules "auto", its
 * default (rules/versions.yaml deepspeed-zero-init-keep-buffers-fp32; DeepSeek-V3's
 * e_score_correction_bias). 1 when the buffer is kept, 0 when not, or -ENOMEM. */
static int kept_fp32_buffer(struct dtl_sim *sim, uint32_t t, struct dtl_loc loc)
{
	const struct dtl_model_view *v = &sim->model;
	enum dtl_dtype mode = sim->rp.zero_init_dtype;
	const struct dtl_pattern *e;
	const char *list = "_keep_in_fp32_modules_strict";

	if (!dtl_dtype_is_half(mode) ||
	    !dtl_sim_behavior(sim, DTL_B_DS_ZERO_INIT_KEEP_BUFFERS_FP32))
		return 0;
	if (!(e = dtl_sim_keep_entry(sim, v->strict_set, t))) {
		if (mode != DTL_DTYPE_F16 || !(e = dtl_sim_keep_entry(sim, v->keep_set, t)))
			return 0;
		list = "_keep_in_fp32_modules";
	}
	const char *reason =
	    dtl_arena_sprintf(sim->arena,
	                      "zero.Init keeps the buffer in float32: %s entry '%s' (data_types."
	                      "keep_in_fp32_modules \"auto\")",
	                      list, e->text);
	int r = sim->t.dtype[t] == DTL_DTYPE_F32
	            ? dtl_sim_note(sim, t, DTL_STAGE_ZERO_INIT, reason, fact_keep_fp32, loc)
	            : dtl_sim_set_dtype(sim, t, DTL_STAGE_ZERO_INIT, DTL_DTYPE_F32, reason,
	                                fact_keep_fp32, loc);
	return r < 0 ? r : 1;
}

int dtl_stage_zero_init(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	struct dtl_loc loc = dtl_sim_plan_loc(sim, rp->plan.zero3.init_loc, rp->plan.precision_loc);
	int r;

	(void)error;
	if (!rp->zero_init)
		return 0;
	/* transformers does not build quantized models under zero.Init */
	if (sim->manifest->quantization.method != DTL_QUANT_NONE)
		return 0;
	/* rules/versions.yaml deepspeed-init-tensor-overrides: without
	 * DeepSpeedTensorOverride.dtype the wrappers get target_fp_dtype=None; before 0.17.1 the
	 * argument does not exist */
	bool no_cast = false;
	const char *suffix = "";
	if (rp->plan.zero3.init_dtype_override == DTL_FALSE) {
		if (dtl_sim_behavior(sim, DTL_B_DS_INIT_TENSOR_OVERRIDES)) {
			no_cast = true;
			loc = rp->plan.zero3.init_dtype_override_loc;
		} else {
			suffix = " (this deepspeed's zero.Init has no tensor_overrides: passing it "
			         "raises TypeError)";
		}
	}
	for (size_t i = 0; i < sim->t.count; i++) {
		uint32_t flags = sim->t.flags[i];
		enum dtl_dtype d = sim->t.dtype[i];
		/* docs/design.md §3: adapter tensors listed explicitly were made by PEFT after the
		 * model was built, outside zero.Init */
		if (flags & (DTL_TF_ADAPTER | DTL_TF_ALIAS))
			continue;
		if (sim->t.kind[i] == DTL_KIND_PARAM)
			sim->t.flags[i] |= DTL_TF_ZERO_PARAM;
		if (!dtl_dtype_is_floating(d) || rp->zero_init_dtype == DTL_DTYPE_NONE ||
		    d == rp->zero_init_dtype)
			continue;
		const char *reason;
		if (no_cast) {
			if (sim->t.kind[i] == DTL_KIND_BUFFER && !(flags & DTL_TF_PERSISTENT))
				continue;
			reason = dtl_arena_sprintf(
			    sim->arena,
			    "zero.Init's tensor_overrides leave out dtype: its "
			    "wrappers cast nothing, so it stays %s (not %s)",
			    dtl_dtype_name(d), dtl_dtype_name(rp->zero_init_dtype));
			if ((r = dtl_sim_note(sim, (uint32_t)i, DTL_STAGE_ZERO_INIT, reason,
			                      fact_overrides, loc)) < 0)
				return r;
			continue;
		}
		if (sim->t.kind[i] == DTL_KIND_BUFFER) {
			/* buffers are never partitioned; a wrapped constructor (torch.zeros, ...)
			 * casts a persistent buffer, while one computed through unwrapped ops
			 * (inv_freq: arange(...).float()) keeps float32 — inferred */
			if (!(flags & DTL_TF_PERSISTENT) &&
			    !dtl_sim_created_in_load_dtype(sim, (uint32_t)i)) {
				if ((r = rope_cache(sim, (uint32_t)i, loc)) < 0)
					return r;
				continue;
			}
			if ((r = kept_fp32_buffer(sim, (uint32_t)i, loc)) != 0) {
				if (r < 0)
					return r;
				continue;
			}
			/* a non-persistent buffer made by torch.tensor(float) under zero.Init
			 * (Gemma 2's embed_scale) goes through the same wrapper: float32 under a
			 * config with neither bf16 nor fp16, whatever the load dtype (real:
			 * tests/oracle/DISAGREEMENTS.md D30) */
			reason =
			    dtl_arena_sprintf(sim->arena,
			                      "zero.Init's tensor-creation wrappers cast the "
			                      "%s buffer to %s%s",
			                      flags & DTL_TF_PERSISTENT ? "persistent" : "created",
			                      dtl_dtype_name(rp->zero_init_dtype), suffix);
		} else {
			reason =
			    dtl_arena_sprintf(sim->arena,
			                      "zero.Init casts every floating parameter created "
			                      "under it to %s%s%s",
			                      dtl_dtype_name(rp->zero_init_dtype),
			                      rp->zero_init_dtype == DTL_DTYPE_F32
			                          ? " (neither bf16 nor fp16 is enabled)"
			                          : ", explicit float32 included",
			                      suffix);
		}
		r = dtl_sim_set_dtype(sim, (uint32_t)i, DTL_STAGE_ZERO_INIT, rp->zero_init_dtype,
		                      reason, fact_init, loc);
		if (r < 0)
			return r;
	}
	return 0;
}
