/* SPDX-License-Identifier: MIT */
/* DT141 fp16-scaler-half-gradients: fp16 mixed precision's GradScaler meets float16 gradients. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* fp16 mixed precision trains with a loss scaler: accelerate builds one for mixed_precision
 * "fp16" on any device but the CPU, outside DeepSpeed and Megatron (Accelerator.__init__), a
 * torch.amp.GradScaler for single-device, DDP and FSDP2 runs, FSDP1's ShardedGradScaler for
 * FSDP1 (get_grad_scaler, get_fsdp2_grad_scaler; accelerate v1.15.0, the same since FSDP2
 * came in 1.6.0). The HF Trainer and TRL's trainers (and LLaMA-Factory's and axolotl's, built on
 * them) train through accelerate; a loop of the user's own with fp16 autocast scales with
 * GradScaler as torch's AMP recipe does. GradScaler.unscale_ refuses float16 gradients
 * (torch/amp/grad_scaler.py _unscale_grads_, allow_fp16=False); ShardedGradScaler allows them
 * and DeepSpeed scales on its own. A gradient has its parameter's dtype. Under FSDP2 only a
 * run the plan says accelerate launches is judged: a loop of the user's own may scale with
 * ShardedGradScaler (torch/distributed/fsdp/sharded_grad_scaler.py, allow_fp16=True). */
static const char *const accelerate_recipes[] = {"TrainingArguments", "TRL ModelConfig",
                                                 "LLaMA-Factory", "axolotl"};

/* the scaler the set-up's fp16 mixed precision steps with refuses float16 gradients */
static bool scaler_refuses_fp16(const struct dtl_sim *sim)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	const char *kind = sim->manifest->recipe.kind;
	bool known = !kind;

	if (plan->precision != DTL_PRECISION_FP16)
		return false;
	for (size_t k = 0; !known && k < sizeof(accelerate_recipes) / sizeof(*accelerate_recipes);
	     k++)
		known = strcmp(kind, accelerate_recipes[k]) == 0;
	if (!known) /* verl, torchtune, torchtitan, NeMo, OpenRLHF: their own loops */
		return false;
	switch (plan->strategy) {
	case DTL_STRATEGY_UNSET:
	case DTL_STRATEGY_SINGLE:
		return true;
	case DTL_STRATEGY_FSDP2:
		/* accelerate's scaler, when the plan names accelerate (as its FSDP2 upcast,
		 * stage-engine.c); a loop of the user's own may take FSDP's ShardedGradScaler,
		 * which allows float16 (torch's FSDP2 tests do) */
		return !sim->rp.version_assumed[DTL_FW_ACCELERATE];
	case DTL_STRATEGY_DDP:
		return !plan->deepspeed_engine;
	default:
		return false;
	}
}

static int dt141_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	uint32_t first = DTL_NONE_INDEX;
	size_t count = 0;

	if (!scaler_refuses_fp16(sim))
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!dtl_check_is_param(sim, t) || !(sim->t.flags[t] & DTL_TF_TRAINABLE) ||
		    (sim->t.flags[t] & DTL_TF_ALIAS) || sim->t.dtype[t] != DTL_DTYPE_F16)
			continue;
		if (first == DTL_NONE_INDEX)
			first = t;
		count++;
	}
	if (first == DTL_NONE_INDEX)
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, sim->rp.plan.precision_loc,
	    "fp16 mixed precision's GradScaler refuses the float16 gradients of %zu trainable "
	    "parameter%s",
	    count, count == 1 ? "" : "s");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(c, f, "ValueError: Attempting to unscale FP16 gradients.",
	                  "at the first optimizer step (GradScaler.unscale_)", DTL_FW_TORCH,
	                  "train float32 parameters under fp16: load the model in float32 (fp16 "
	                  "autocast still computes in float16), or keep the adapters in float32 "
	                  "(PEFT >= 0.12 with autocast_adapter_dtype=True), or use bf16");
	return dtl_check_add_tensor(c, f, first, count > 1 ? "the first of them" : NULL);
}

/* PEFT 0.12.0 upcasts the adapters get_peft_model creates to float32 (rules/versions.yaml
 * peft-autocast-adapter-dtype); the re-simulation shows whether that is enough */
static int dt141_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;

	if (!sim->manifest->adapter.present ||
	    dtl_sim_behavior(sim, DTL_B_PEFT_AUTOCAST_ADAPTER_DTYPE))
		return 0;
	if (dtl_rules_propose_version(
	        req, DTL_FW_PEFT, "0.12.0",
	        "upgrade PEFT: training.versions.peft: \"0.12.0\" (PR #1706 creates "
	        "the adapters in float32)") < 0)
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt141) = {
    .id = "DT141",
    .name = "fp16-scaler-half-gradients",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "fp16 mixed precision's GradScaler meets trainable float16 parameters",
    .explanation =
        "fp16 mixed precision scales the loss so that small gradients survive float16, and "
        "unscales the gradients before the optimizer step. accelerate (and so the HF "
        "Trainer, TRL's trainers, LLaMA-Factory and axolotl) builds a torch.amp.GradScaler "
        "for mixed_precision fp16 on a GPU with one device, DDP or FSDP2; its unscale_ "
        "refuses float16 gradients, and a gradient has its parameter's dtype:\n"
        "  ValueError: Attempting to unscale FP16 gradients.\n"
        "It comes at the first optimizer step (clip_grad_norm_ or step). Full fine-tuning "
        "of a model loaded in float16, or adapters left in float16 (PEFT before "
        "autocast_adapter_dtype, or with it off), trips it. FSDP1's ShardedGradScaler "
        "accepts float16 gradients, and DeepSpeed scales on its own: neither is checked. "
        "On the CPU accelerate builds no scaler for fp16 and nothing is raised.",
    .example = "tensors:\n"
               "  - {name: model.layers.0.mlp.up_proj.weight, shape: [128, 64], dtype: "
               "float16}\n"
               "training: {strategy: single, precision: fp16}",
    .fix = "Train float32 parameters under fp16 mixed precision: load the model in float32 "
           "(autocast still computes in float16), keep LoRA adapters in float32 "
           "(PEFT >= 0.12, autocast_adapter_dtype=True), or train in bf16.",
    .facts = "https://github.com/huggingface/accelerate/blob/v1.15.0/src/accelerate/"
             "accelerator.py "
             "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/amp/grad_scaler.py",
    .check = dt141_check,
    .propose_fixes = dt141_propose_fixes,
};
