/* SPDX-License-Identifier: MIT */
/*
 * DeepSpeed-Chat's training scripts (`deepspeed main.py --zero_stage 3 --dtype bf16
 * --lora_dim 128 ...` in deepspeedai/DeepSpeedExamples applications/DeepSpeed-Chat/training/
 * step1..3), read the way commit 3d83278 builds the trained model from them
 * (rules/versions.yaml recipes: dschat-*). Like OpenRLHF it has no config file: the launch
 * reader hands each argument this importer reads as "zero_stage=3" (a flag as "=true"), the
 * step as "cli=step1" (step3: --actor_model_name_or_path, step2: --num_padding_at_beginning);
 * an absent key takes argparse's default.
 *
 * - get_train_ds_config (dschat/utils/ds_utils.py): ZeRO stage --zero_stage (step3:
 *   --actor_zero_stage, default 0), offload_param and offload_optimizer "cpu" with --offload,
 *   stage3_param_persistence_threshold 1e4, prefetch and live parameters 3e7, fp16 (default)
 *   or bf16 from --dtype; --enable_mixed_precision_lora adds ZeRO++
 *   zero_quantized_nontrainable_weights;
 * - create_hf_model: from_pretrained with no dtype, under zero.Init at stage 3 (an
 *   HfDeepSpeedConfig alive in its scope); deepspeed.initialize casts the rest;
 * - --lora_dim > 0: its own LinearLayer_LoRA (not PEFT) on every nn.Linear whose name holds
 *   --lora_module_name, the matrices made in float32 then cast to the base weight's dtype;
 * - what it trains beside the actor (reference, critic, reward, EMA), its hybrid engine and
 *   ZeRO++ are reported as not modelled (DT604) at their argument.
 */
#include <errno.h>
#include <string.h>

#include "import-framework.h"

#define DSCHAT_URL                                                                                 \
	"https://github.com/deepspeedai/DeepSpeedExamples/blob/"                                   \
	"3d83278f2b27c79339a36e5974537c8a2833a176/applications/DeepSpeed-Chat/"

struct dschat {
	struct dtl_fw_config *c;
	const char *cli;
	bool step3;
	enum dtl_dtype dtype;
	int64_t stage;
};

/* the actor's argument: step3 spells it --actor_<name> */
static const char *actor(const struct dschat *d, const char *name)
{
	return d->step3 ? dtl_arena_sprintf(d->c->arena, "actor_%s", name) : name;
}

/* --dtype: argparse's choices fp16 (the default), bf16 */
static int dtype(struct dschat *d)
{
	struct dtl_fw_value v = dtl_fw_get(d->c, "dtype");
	const char *text;
	int r;

	if ((r = dtl_fw_text(d->c, "dtype", "fp16", &text)) < 0)
		return r;
	if (strcmp(text, "fp16") == 0 || strcmp(text, "bf16") == 0) {
		d->dtype = text[0] == 'b' ? DTL_DTYPE_BF16 : DTL_DTYPE_F16;
		return 0;
	}
	return dtl_schema_fail(v.s, v.node,
	                       "DeepSpeed-Chat refuses this: 'main.py: error: argument --dtype: "
	                       "invalid choice: '%s' (choose from 'fp16', 'bf16')'",
	                       text);
}

/* get_train_ds_config's zero_optimization; stage 3 builds the model under zero.Init */
static int zero(struct dschat *d)
{
	struct dtl_fw_config *c = d->c;
	struct dtl_plan *plan = &c->m->plan;
	struct dtl_plan_zero3 *z = &plan->zero3;
	const char *key = actor(d, "zero_stage");
	bool offload;
	int r;

	if (!key)
		return -ENOMEM;
	if ((r = dtl_fw_int(c, key, 0, 3, 0, &d->stage)) < 0 ||
	    (r = dtl_fw_bool(c, "offload", false, &offload)) < 0)
		return r;
	/* stages 0-2 keep every parameter whole on every rank: data parallel for dtypes */
	plan->strategy = d->stage == 3 ? DTL_STRATEGY_ZERO3 : DTL_STRATEGY_DDP;
	plan->deepspeed_engine = d->stage != 3;
	plan->strategy_loc = dtl_fw_key_loc(c, key);
	if (d->stage != 3)
		return 0;
	struct dtl_loc offload_loc = dtl_fw_key_loc(c, "offload");
	z->loc = plan->strategy_loc;
	/* create_hf_model keeps HfDeepSpeedConfig(ds_config) alive over from_pretrained */
	z->init = DTL_TRUE;
	z->init_loc = plan->strategy_loc;
	z->offload_param = z->offload_optimizer = offload ? DTL_OFFLOAD_CPU : DTL_OFFLOAD_NONE;
	z->offload_param_loc = z->offload_optimizer_loc = offload_loc;
	z->persistence_threshold = 10000; /* "stage3_param_persistence_threshold": 1e4 */
	z->persistence_auto = false;
	z->persistence_threshold_loc = plan->strategy_loc;
	z->prefetch_bucket_size = z->max_live_parameters = 30000000; /* 3e7 */
	z->prefetch_bucket_size_loc = z->max_live_parameters_loc = plan->strategy_loc;
	z->quantized_weights = DTL_FALSE;
	z->quantized_weights_loc = plan->strategy_loc;
	return 0;
}

/* fp16 / bfloat16 .enabled; from_pretrained names no dtype (the engine or zero.Init casts) */
static void precision(struct dschat *d)
{
	struct dtl_plan *plan = &d->c->m->plan;
	plan->precision = d->dtype == DTL_DTYPE_BF16 ? DTL_PRECISION_BF16 : DTL_PRECISION_FP16;
	plan->precision_loc = dtl_fw_key_loc(d->c, "dtype");
}

/* ".*<name>.*" with the name's regular-expression characters escaped: convert_linear_layer_
 * to_lora takes every nn.Linear whose name holds --lora_module_name */
static const char *substring_regex(struct dtl_arena *arena, const char *name)
{
	size_t n = strlen(name);
	char *out = dtl_arena_alloc(arena, 2 * n + 5), *p = out;
	if (!out)
		return NULL;
	p = stpcpy(p, ".*");
	for (; *name; name++) {
		if (strchr(".[]()*+?{}|^$\\", *name))
			*p++ = '\\';
		*p++ = *name;
	}
	strcpy(p, ".*");
	return out;
}

/* --lora_dim > 0: LinearLayer_LoRA, the matrices in the base weight's dtype */
static int lora(struct dschat *d)
{
	struct dtl_fw_config *c = d->c;
	struct dtl_adapter *a = &c->m->adapter;
	const char *dim = actor(d, "lora_dim"), *module = actor(d, "lora_module_name"), *name;
	bool only;
	int64_t rank;
	int r;

	if (!dim || !module)
		return -ENOMEM;
	if ((r = dtl_fw_int(c, dim, 0, 1 << 20, 0, &rank)) < 0 || rank == 0)
		return r;
	if ((r = dtl_fw_text(c, module, "decoder.layers.", &name)) < 0 ||
	    (r = dtl_fw_bool(c, "only_optimize_lora", false, &only)) < 0)
		return r;
	dtl_adapter_init(a, dtl_fw_key_loc(c, dim));
	a->r = rank;
	a->autocast_adapter_dtype = DTL_FALSE;
	a->autocast_adapter_dtype_loc = a->loc;
	a->created_as = "DeepSpeed-Chat's LinearLayer_LoRA: nn.Parameter in float32, then "
	                ".to(module.weight.dtype)";
	a->created_as_fact = DSCHAT_URL "dschat/utils/module/lora.py#L89-L104";
	a->target_modules.present = true;
	a->target_modules.loc = dtl_fw_key_loc(c, module);
	if (!(a->target_modules_string = substring_regex(c->arena, name)))
		return -ENOMEM;
	if (only)
		return 0;
	return dtl_fw_unmodelled_key(
	    c, dim,
	    "DeepSpeed-Chat's LoRA without --only_optimize_lora (the weights "
	    "outside the LoRA-wrapped Linear layers stay trainable)",
	    "the embeddings, norms and unwrapped Linear weights, which the "
	    "simulation freezes as PEFT does");
}

/* step3's asserts (main.py parse_args and main) and DeepSpeed's own refusal */
static int step3_refusals(struct dschat *d, bool mixed)
{
	struct dtl_fw_config *c = d->c;
	struct dtl_fw_value v = dtl_fw_get(c, "enable_mixed_precision_lora");
	int64_t tp, lora_dim;
	int r;

	if ((r = dtl_fw_int(c, "inference_tp_size", 1, 1 << 20, 1, &tp)) < 0 ||
	    (r = dtl_fw_int(c, "actor_lora_dim", 0, 1 << 20, 0, &lora_dim)) < 0)
		return r;
	if (tp > 1 && d->stage != 3) {
		struct dtl_fw_value t = dtl_fw_get(c, "inference_tp_size");
		return dtl_schema_fail(t.s, t.node,
		                       "DeepSpeed-Chat refuses this: 'AssertionError: Zero stage 3 "
		                       "must be used to do Tensor sharding in the hybrid engine'");
	}
	if (!mixed)
		return 0;
	if (lora_dim == 0)
		return dtl_schema_fail(
		    v.s, v.node,
		    "DeepSpeed-Chat refuses this: 'AssertionError: Mixed Precision "
		    "LoRA requires LoRA to be enabled' (--actor_lora_dim)");
	if (d->stage != 3)
		return dtl_schema_fail(
		    v.s, v.node,
		    "DeepSpeed-Chat refuses this: 'AssertionError: Mixed Precision "
		    "LoRA requires Zero stage 3' (--actor_zero_stage)");
	if (d->dtype != DTL_DTYPE_F16)
		return dtl_schema_fail(
		    v.s, v.node,
		    "DeepSpeed refuses this: 'AssertionError: quantize_dstensor() expects "
		    "tensor.dtype == torch.float16, got torch.bfloat16' (ZeRO-3's "
		    "quantize_nontrainable_params, which --enable_mixed_precision_lora calls, "
		    "quantizes float16 weights only: --dtype fp16)");
	return 0;
}

/* the models trained or run beside the actor, and the engine's own machinery */
static int step3_beside(struct dschat *d)
{
	static const struct {
		const char *key, *what, *touches;
	} flags[] = {
	    {"enable_hybrid_engine",
	     "DeepSpeed's hybrid engine (--enable_hybrid_engine: generation through DeepSpeed "
	     "inference kernels)",
	     "the actor's weights, gathered into the inference containers for generation"},
	    {"enable_mixed_precision_lora",
	     "ZeRO++ quantized non-trainable weights (--enable_mixed_precision_lora: "
	     "zero_quantized_nontrainable_weights, hpZ within the node)",
	     "every frozen base weight, stored int8-quantized in its ZeRO-3 partition"},
	    {"enable_ema", "DeepSpeed-Chat's EMA copy of the actor (--enable_ema)",
	     "a second copy of every actor parameter, in --dtype"},
	    {"offload_reference_model",
	     "the reference model's ZeRO offload (--offload_reference_model)",
	     "the reference model's parameters, kept on the CPU"},
	};
	struct dtl_fw_config *c = d->c;
	bool on;
	int r;

	if ((r = dtl_fw_unmodelled_key(
	         c, "cli",
	         "DeepSpeed-Chat's reference model (the actor's checkpoint, forward "
	         "only, get_eval_ds_config)",
	         "a second copy of every parameter; dtypelint simulates the actor")) < 0 ||
	    (r = dtl_fw_unmodelled_key(
	         c,
	         dtl_fw_given(c, "critic_model_name_or_path") ? "critic_model_name_or_path" : "cli",
	         "DeepSpeed-Chat's critic and reward models (a value head, "
	         "--critic_zero_stage)",
	         "the critic's and reward model's parameters; dtypelint simulates "
	         "the actor")) < 0)
		return r;
	for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
		if ((r = dtl_fw_bool(c, flags[k].key, false, &on)) < 0)
			return r;
		if (on && (r = dtl_fw_unmodelled_key(c, flags[k].key, flags[k].what,
		                                     flags[k].touches)) < 0)
			return r;
	}
	if ((r = dtl_fw_bool(c, "enable_mixed_precision_lora", false, &on)) < 0)
		return r;
	if (on) {
		c->m->plan.zero3.quantized_nontrainable = DTL_TRUE;
		c->m->plan.zero3.quantized_nontrainable_loc =
		    dtl_fw_key_loc(c, "enable_mixed_precision_lora");
	}
	return step3_refusals(d, on);
}

/* "--zero_stage 3 (17:20)" or "--offload false (default)" */
static const char *argument(const struct dtl_fw_config *c, const char *key, const char *dflt)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	struct dtl_loc loc = dtl_fw_loc(c, v);
	const char *value = dflt;

	if (!v.node || v.node->type == DTL_NODE_NULL)
		return dtl_arena_sprintf(c->arena, "--%s %s (default)", key, dflt);
	if (v.node->type == DTL_NODE_STRING)
		value = v.node->string.text;
	else if (v.node->raw)
		value = dtl_arena_strndup(c->arena, v.node->raw, v.node->raw_len);
	if (!value)
		return NULL;
	if (loc.file && strcmp(loc.file, "--framework-override") == 0)
		return dtl_arena_sprintf(c->arena, "--%s %s (--framework-override)", key, value);
	return dtl_arena_sprintf(c->arena, "--%s %s (%u:%u)", key, value, loc.line, loc.column);
}

/* the arguments read, for --show-plan: never a silent default */
static int arguments_read(struct dschat *d)
{
	static const char *const keys[][2] = {
	    {"zero_stage", "0"},
	    {"dtype", "fp16"},
	    {"offload", "false"},
	    {"lora_dim", "0"},
	    {"lora_module_name", "decoder.layers."},
	    {"only_optimize_lora", "false"},
	    {"compute_fp32_loss", "false"},
	};
	static const char *const step3_keys[][2] = {
	    {"actor_zero_stage", "0"},
	    {"critic_zero_stage", "0"},
	    {"dtype", "fp16"},
	    {"offload", "false"},
	    {"actor_lora_dim", "0"},
	    {"actor_lora_module_name", "decoder.layers."},
	    {"only_optimize_lora", "false"},
	    {"enable_hybrid_engine", "false"},
	    {"enable_mixed_precision_lora", "false"},
	    {"offload_reference_model", "false"},
	};
	const char *const(*list)[2] = d->step3 ? step3_keys : keys;
	size_t count =
	    d->step3 ? sizeof(step3_keys) / sizeof(step3_keys[0]) : sizeof(keys) / sizeof(keys[0]);
	const char *text = "";

	for (size_t k = 0; text && k < count; k++) {
		const char *a = argument(d->c, list[k][0], list[k][1]);
		text = a ? dtl_arena_sprintf(d->c->arena, "%s%s%s", text, k ? ", " : "", a) : NULL;
	}
	d->c->m->recipe.arguments_read = text;
	return text ? 0 : -ENOMEM;
}

/* what the step trains, for the plan */
static const char *trained(const struct dschat *d)
{
	if (d->step3)
		return "the actor";
	if (strcmp(d->cli, "step2") == 0)
		return "the reward model";
	return strcmp(d->cli, "step2_dpo") == 0 ? "the policy" : "the model";
}

static int import(struct dtl_fw_config *c)
{
	struct dschat d = {.c = c};
	struct dtl_manifest *m = c->m;
	int r;

	if ((r = dtl_fw_text(c, "cli", "step1", &d.cli)) < 0)
		return r;
	d.step3 = strcmp(d.cli, "step3") == 0;
	m->recipe.kind = dtl_arena_sprintf(c->arena, "DeepSpeed-Chat %s (%s)", d.cli, trained(&d));
	if (!m->recipe.kind)
		return -ENOMEM;
	/* deepspeed.initialize and DeepSpeed-Chat's own loop: no HF Trainer */
	m->plan.trainer = "none";
	m->plan.trainer_loc = dtl_fw_key_loc(c, "cli");
	if ((r = dtype(&d)) < 0 || (r = zero(&d)) < 0)
		return r;
	precision(&d);
	if ((r = lora(&d)) < 0)
		return r;
	if (strcmp(d.cli, "step2") == 0 &&
	    (r = dtl_fw_unmodelled_key(
	         c, "cli",
	         "DeepSpeed-Chat's RewardModel (AutoModel with a value head v_head, "
	         "nn.Linear(hidden, 1, bias=False), in place of lm_head)",
	         "the value head, created by DeepSpeed-Chat; the simulation keeps the "
	         "checkpoint's own head")) < 0)
		return r;
	if (strcmp(d.cli, "step2_dpo") == 0 &&
	    (r = dtl_fw_unmodelled_key(
	         c, "cli",
	         "DeepSpeed-Chat's DPO reference model (the model's checkpoint, forward "
	         "only, get_eval_ds_config; --offload_reference_model)",
	         "a second copy of every parameter; dtypelint simulates the policy")) < 0)
		return r;
	if (d.step3 && (r = step3_beside(&d)) < 0)
		return r;
	return arguments_read(&d);
}

/* the arguments this importer reads, as their argparse dest (docs/frameworks.md lists them) */
static bool reads(const char *key)
{
	static const char *const keys[] = {"cli",
	                                   "zero_stage",
	                                   "actor_zero_stage",
	                                   "critic_zero_stage",
	                                   "dtype",
	                                   "offload",
	                                   "lora_dim",
	                                   "lora_module_name",
	                                   "actor_lora_dim",
	                                   "actor_lora_module_name",
	                                   "only_optimize_lora",
	                                   "compute_fp32_loss",
	                                   "critic_model_name_or_path",
	                                   "enable_hybrid_engine",
	                                   "inference_tp_size",
	                                   "enable_mixed_precision_lora",
	                                   "enable_ema",
	                                   "offload_reference_model",
	                                   NULL};
	for (const char *const *k = keys; *k; k++)
		if (strcmp(key, *k) == 0)
			return true;
	return false;
}

static bool detect(const struct dtl_node *root)
{
	(void)root;
	return false; /* no config file: only a launch command names it */
}

const struct dtl_framework_importer dtl_importer_dschat = {
    .kind = "DeepSpeed-Chat command line",
    .id = "deepspeed-chat",
    .reads = reads,
    .detect = detect,
    .import = import,
};
