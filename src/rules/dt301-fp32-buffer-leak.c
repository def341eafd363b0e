/* SPDX-License-Identifier: MIT */
/* DT301 fp32-buffer-leak: a float32 buffer in a 16-bit module promotes activations to float32. */
#include <errno.h>
#include <stdio.h>

#include "rule-util.h"

/* The dtype the module holding a buffer computes in: its own parameters', else the nearest
 * ancestor's with parameters. NONE when no parameter is above it. */
static enum dtl_dtype module_compute(const struct dtl_sim *sim, uint32_t mod)
{
	for (uint32_t m = mod; m != DTL_NONE_INDEX; m = sim->modules[m].parent) {
		const struct dtl_module *md = &sim->modules[m];
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t])
			if (sim->t.kind[t] == DTL_KIND_PARAM &&
			    dtl_dtype_is_floating(sim->t.dtype[t]))
				return sim->t.compute_dtype[t];
		/* a module without own parameters: look at its children's first parameter */
		for (uint32_t ch = md->first_child; ch != DTL_NONE_INDEX;
		     ch = sim->modules[ch].next_sibling)
			for (uint32_t t = sim->modules[ch].first_tensor; t != DTL_NONE_INDEX;
			     t = sim->t.next_in_module[t])
				if (sim->t.kind[t] == DTL_KIND_PARAM &&
				    dtl_dtype_is_floating(sim->t.dtype[t]))
					return sim->t.compute_dtype[t];
	}
	return DTL_DTYPE_NONE;
}

static const char *buffer_cast_note(const struct dtl_sim *sim)
{
	switch (sim->rp.plan.strategy) {
	case DTL_STRATEGY_FSDP2:
		return "FSDP2's MixedPrecisionPolicy has no buffer_dtype: buffers keep their dtype "
		       "(https://github.com/pytorch/pytorch/blob/"
		       "05f814fecfca7d2a17f28cbe7e1cb2d8d4c13230/torch/distributed/fsdp/"
		       "_fully_shard/_fsdp_api.py)";
	case DTL_STRATEGY_FSDP1:
		return "FSDP1 buffer_dtype is None: buffers keep their dtype "
		       "(https://github.com/pytorch/pytorch/blob/"
		       "acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/torch/distributed/fsdp/api.py)";
	case DTL_STRATEGY_ZERO3:
		return "DeepSpeed keeps buffers in their loaded dtype unless "
		       "data_types.buffer_dtype "
		       "is set (https://github.com/deepspeedai/DeepSpeed/pull/8066)";
	default:
		return "nothing casts buffers under this strategy";
	}
}

/* DT301 — an fp32 buffer in a module that computes in 16-bit, not cast, not self-casting. */
static int dt301_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_rules_grouper g;

	dtl_rules_grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] != DTL_KIND_BUFFER || sim->t.compute_dtype[t] != DTL_DTYPE_F32)
			continue;
		const struct dtl_buffer_info *info = dtl_sim_buffer_info(sim, t);
		if (info && info->self_casting)
			continue;
		/* torch's type promotion (src/core/dtype.c): only a dimensioned fp32 operand
		 * promotes */
		int64_t numel = sim->t.numel[t];
		const struct dtl_tensor_decl *d = sim->t.decl[t] != DTL_NONE_INDEX
		                                      ? &sim->manifest->tensors[sim->t.decl[t]]
		                                      : NULL;
		if (d && d->shape && d->rank == 0)
			continue;
		(void)numel;
		enum dtl_dtype around = module_compute(sim, sim->t.module[t]);
		if (!dtl_dtype_is_half(around))
			continue;
		const struct dtl_module *md = &sim->modules[sim->t.module[t]];
		char key[256];
		snprintf(key, sizeof(key), "%s|%s", md->class_name ? md->class_name : "",
		         dtl_rules_leaf(sim, t));
		struct dtl_finding *f = dtl_rules_grouper_get(&g, key);
		if (f) {
			if (dtl_rules_grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(c, c->rule->severity, dtl_sim_tensor_loc(sim, t),
		                     "float32 buffer '%s' sits in a module that computes in %s: it "
		                     "promotes activations to float32",
		                     sim->t.name[t], dtl_dtype_name(around));
		if (!f)
			return -ENOMEM;
		f->effect = dtl_arena_sprintf(
		    c->arena,
		    "%s; a bf16 tensor combined with a dimensioned fp32 tensor gives fp32, so the "
		    "next 16-bit Linear or norm gets float32 input (RuntimeError: mat1 and mat2 "
		    "must have the same dtype, or silent fp32 compute under autocast)",
		    buffer_cast_note(sim));
		f->fix = dtl_arena_sprintf(
		    c->arena,
		    "cast the buffer to %s after loading (module.%s.data = ...to(torch.%s)), or "
		    "set a buffer dtype (FSDP1 buffer_dtype, DeepSpeed data_types.buffer_dtype); "
		    "if its consumer casts it, it is safe: add it to the profile's self-casting "
		    "list or suppress with a reason",
		    dtl_dtype_name(around), dtl_rules_leaf(sim, t), dtl_dtype_name(around));
		if (dtl_rules_grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return dtl_rules_grouper_finish(&g);
}

static int dt301_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	enum dtl_dtype want =
	    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_BF16;

	if (!req->finding->tensor_count)
		return 0;
	if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 &&
	    !dtl_rules_propose(req, DTL_FIX_FSDP_BUFFER_DTYPE, NULL, want, 1,
	                       "set training.fsdp.buffer_dtype: %s", dtl_dtype_name(want)))
		return -ENOMEM;
	if (sim->rp.plan.strategy == DTL_STRATEGY_ZERO3 &&
	    !dtl_rules_propose(req, DTL_FIX_ZERO3_BUFFER_DTYPE, NULL, want, 1,
	                       "set training.zero3.data_types.buffer_dtype: %s",
	                       dtl_dtype_name(want)))
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt301) = {
    .id = "DT301",
    .name = "fp32-buffer-leak",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a float32 buffer in a 16-bit module promotes activations to float32",
    .explanation =
        "FSDP2's MixedPrecisionPolicy casts parameters, never buffers; FSDP1 casts buffers "
        "only with buffer_dtype; DeepSpeed >= 0.19.2 keeps buffers in their loaded dtype. A "
        "float32 buffer with at least one dimension, combined with bfloat16 activations, "
        "gives float32 (torch.result_type), so the next bfloat16 Linear or norm meets "
        "float32 input: 'RuntimeError: mat1 and mat2 must have the same dtype', or silent "
        "float32 compute. Buffers whose consumer casts them (RoPE inv_freq; DeepSeek's "
        "e_score_correction_bias) are exempt (the profile's self-casting list).",
    .example = "tensors:\n"
               "  - {name: vision.proj.weight, shape: [8, 8], dtype: bfloat16}\n"
               "  - {name: vision.proj.std_bias, kind: buffer, shape: [8], dtype: float32}\n"
               "training: {strategy: fsdp2, fsdp: {param_dtype: bfloat16}}",
    .fix = "Cast the buffer to the compute dtype after loading, or set a buffer dtype (FSDP1 "
           "buffer_dtype, DeepSpeed data_types.buffer_dtype).",
    .facts = "https://github.com/pytorch/pytorch/blob/acd8c9e7d691ee02408b5c0bb3e072fcb6705c13/"
             "torch/distributed/fsdp/api.py "
             "https://github.com/pytorch/pytorch/blob/05f814fecfca7d2a17f28cbe7e1cb2d8d4c13230/"
             "torch/distributed/fsdp/_fully_shard/_fsdp_api.py "
             "https://github.com/huggingface/transformers/blob/"
             "ef46806472a64b0013ed413781e3afed82bfa047/src/transformers/modeling_rope_utils.py "
             "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py; "
             "https://github.com/deepspeedai/DeepSpeed/pull/8066",
    .check = dt301_check,
    .propose_fixes = dt301_propose_fixes,
};
