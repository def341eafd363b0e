/* SPDX-License-Identifier: MIT */
/*
 * OpenRLHF's command line (`deepspeed --module openrlhf.cli.train_sft --ds.zero_stage 3 ...`,
 * `python3 -m openrlhf.cli.train_ppo_ray ...`), read the way v0.11.0 builds the trained model
 * from it (rules/versions.yaml recipes: openrlhf-*). OpenRLHF has no config file: the launch
 * reader hands each argument this importer reads as an override "ds.zero_stage=3" (a flag as
 * "=true"), and the program as "cli=train_sft"; every key absent takes argparse's default.
 *
 * - get_train_ds_config: ZeRO stage --ds.zero_stage (2), bf16/fp16.enabled from
 *   --ds.param_dtype (bf16), offload_optimizer cpu with --ds.adam_offload, offload_param none,
 *   zero_quantized_weights false; its stage3_* thresholds are the string "auto", which
 *   DeepSpeed's config model drops outside the HF Trainer (DeepSpeed's own defaults);
 * - Actor (get_llm_for_sequence_regression for train_rm): from_pretrained(torch_dtype=
 *   param_dtype), under zero.Init at stage 3 (HfDeepSpeedConfig), bitsandbytes nf4 with
 *   compute dtype bfloat16 for --ds.load_in_4bit, get_peft_model(LoraConfig(r=--ds.lora.rank,
 *   target_modules=--ds.lora.target_modules)) when the rank is above 0;
 * - what it trains beside the model (a reference, reward or critic model, vLLM engines) and
 *   what dtypelint does not simulate (AutoTP, ring attention, packing, DeepCompile, ...) are
 *   reported as not modelled (DT604) at their argument.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "import-framework.h"

/* --ds.param_dtype: argparse's choices bf16, fp16 */
static int param_dtype(struct dtl_fw_config *c, enum dtl_dtype *ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, "ds.param_dtype");
	const char *text;
	int r;

	if ((r = dtl_fw_text(c, "ds.param_dtype", "bf16", &text)) < 0)
		return r;
	if (strcmp(text, "bf16") == 0 || strcmp(text, "fp16") == 0) {
		*ret = text[0] == 'b' ? DTL_DTYPE_BF16 : DTL_DTYPE_F16;
		return 0;
	}
	return dtl_schema_fail(v.s, v.node,
	                       "OpenRLHF refuses this: 'argument --ds.param_dtype: invalid "
	                       "choice: '%s' (choose from 'bf16', 'fp16')'",
	                       text);
}

/* get_train_ds_config (utils/deepspeed/deepspeed_utils.py): the ZeRO section */
static int zero(struct dtl_fw_config *c)
{
	struct dtl_plan *plan = &c->m->plan;
	struct dtl_plan_zero3 *z = &plan->zero3;
	int64_t stage;
	bool adam_offload;
	int r;

	if ((r = dtl_fw_int(c, "ds.zero_stage", 0, 3, 2, &stage)) < 0 ||
	    (r = dtl_fw_bool(c, "ds.adam_offload", false, &adam_offload)) < 0)
		return r;
	/* stages 0-2 keep every parameter whole on every rank: data parallel for dtypes */
	plan->strategy = stage == 3 ? DTL_STRATEGY_ZERO3 : DTL_STRATEGY_DDP;
	plan->deepspeed_engine = stage != 3;
	plan->strategy_loc = dtl_fw_key_loc(c, "ds.zero_stage");
	if (stage != 3)
		return 0;
	z->loc = plan->strategy_loc;
	/* Actor keeps an HfDeepSpeedConfig alive at stage 3: from_pretrained under zero.Init */
	z->init = DTL_TRUE;
	z->init_loc = plan->strategy_loc;
	z->offload_param = DTL_OFFLOAD_NONE;
	z->offload_param_loc = plan->strategy_loc;
	z->offload_optimizer = adam_offload ? DTL_OFFLOAD_CPU : DTL_OFFLOAD_NONE;
	z->offload_optimizer_loc = dtl_fw_key_loc(c, "ds.adam_offload");
	z->quantized_weights = DTL_FALSE;
	z->quantized_weights_loc = plan->strategy_loc;
	/* stage3_param_persistence_threshold, stage3_prefetch_bucket_size and
	 * stage3_max_live_parameters are "auto": DeepSpeedConfigModel drops the key, so
	 * DeepSpeed's defaults hold (1e5, 5e7, 1e9), not the HF Trainer's fill */
	z->persistence_auto = false;
	return 0;
}

/* bf16 / fp16 .enabled and from_pretrained(torch_dtype=convert_to_torch_dtype(param_dtype)) */
static int precision(struct dtl_fw_config *c, enum dtl_dtype d)
{
	struct dtl_manifest *m = c->m;

	m->plan.precision = d == DTL_DTYPE_BF16 ? DTL_PRECISION_BF16 : DTL_PRECISION_FP16;
	m->plan.precision_loc = dtl_fw_key_loc(c, "ds.param_dtype");
	m->model.load_mode = DTL_LOAD_DTYPE;
	m->model.load_dtype = d;
	m->model.load_dtype_loc = m->plan.precision_loc;
	return 0;
}

/* --ds.load_in_4bit: BitsAndBytesConfig(nf4, double quant, compute dtype bfloat16), after
 * `assert param_dtype == "bf16"` */
static int quantization(struct dtl_fw_config *c, enum dtl_dtype d, bool *ret_4bit)
{
	struct dtl_quantization *q = &c->m->quantization;
	struct dtl_fw_value v = dtl_fw_get(c, "ds.load_in_4bit");
	int r;

	if ((r = dtl_fw_bool(c, "ds.load_in_4bit", false, ret_4bit)) < 0 || !*ret_4bit)
		return r;
	if (d != DTL_DTYPE_BF16)
		return dtl_schema_fail(v.s, v.node,
		                       "OpenRLHF refuses this: 'AssertionError: we only support "
		                       "bnb_4bit_compute_dtype = bf16' (--ds.load_in_4bit needs "
		                       "--ds.param_dtype bf16)");
	struct dtl_loc loc = dtl_fw_loc(c, v);
	if (q->prequantized) {
		/* transformers keeps the checkpoint's own quantization_config */
		q->requested = DTL_QUANT_BNB_4BIT;
		q->requested_loc = loc;
		return 0;
	}
	q->method = DTL_QUANT_BNB_4BIT;
	q->method_loc = q->loc = q->compute_dtype_loc = loc;
	q->compute_dtype = DTL_DTYPE_BF16;
	q->quant_type = "nf4";
	return 0;
}

/* --ds.lora.target_modules: nargs="*", default the string "all-linear" */
static int lora_targets(struct dtl_fw_config *c, struct dtl_adapter *a)
{
	struct dtl_fw_value v = dtl_fw_get(c, "ds.lora.target_modules");
	int r;

	a->target_modules.present = true;
	a->target_modules.loc = dtl_fw_loc(c, v);
	if (!v.node || v.node->type != DTL_NODE_SEQ)
		return dtl_fw_text(c, "ds.lora.target_modules", "all-linear",
		                   &a->target_modules_string);
	struct dtl_pattern *items =
	    dtl_arena_calloc(c->arena, v.node->seq.count + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < v.node->seq.count; i++) {
		const struct dtl_node *item = &v.node->seq.items[i];
		const char *name;
		if ((r = dtl_schema_string(v.s, item, "ds.lora.target_modules", &name)) < 0)
			return r;
		items[i] =
		    (struct dtl_pattern){name, (uint32_t)strlen(name), dtl_schema_loc(v.s, item)};
	}
	a->target_modules.items = items;
	a->target_modules.count = v.node->seq.count;
	return 0;
}

/* --ds.lora.rank > 0: get_peft_model(LoraConfig(...)); no prepare_model_for_kbit_training */
static int lora(struct dtl_fw_config *c, bool kbit, bool rm)
{
	struct dtl_adapter *a = &c->m->adapter;
	int64_t rank;
	int r;

	if ((r = dtl_fw_int(c, "ds.lora.rank", 0, 1 << 20, 0, &rank)) < 0 || rank == 0)
		return r;
	dtl_adapter_init(a, dtl_fw_key_loc(c, "ds.lora.rank"));
	a->r = rank;
	a->added_with = DTL_ADDED_GET_PEFT_MODEL;
	a->added_with_loc = a->loc;
	a->prepare_kbit_training = DTL_FALSE;
	if (!rm) {
		a->task_type = "CAUSAL_LM";
		a->task_type_loc = a->loc;
	}
	if ((r = lora_targets(c, a)) < 0)
		return r;
	if (!kbit)
		return 0;
	struct dtl_recipe *rc = &c->m->recipe;
	rc->openrlhf_kbit_casts = true;
	rc->openrlhf_kbit_casts_loc = dtl_fw_key_loc(c, "ds.load_in_4bit");
	return 0;
}

/* the models trained or run beside the one simulated */
static int beside(struct dtl_fw_config *c, const char *cli)
{
	const char *other = "a second copy of every parameter; dtypelint simulates the actor";
	int64_t engines;
	const char *kl;
	int r;

	if (strcmp(cli, "train_dpo") == 0)
		return dtl_fw_unmodelled_key(
		    c, dtl_fw_given(c, "ref.model_name_or_path") ? "ref.model_name_or_path" : "cli",
		    "OpenRLHF's DPO reference model (an Actor in --ds.param_dtype, "
		    "forward only, get_ds_eval_config)",
		    other);
	if (strcmp(cli, "train_rm") == 0)
		return dtl_fw_unmodelled_key(
		    c, "cli",
		    "OpenRLHF's reward model class (get_llm_for_sequence_regression: a "
		    "value head named --ds.value_head_prefix, 'score', in place of "
		    "lm_head)",
		    "the value head, created by OpenRLHF; the simulation keeps the "
		    "checkpoint's own head");
	if (strcmp(cli, "train_ppo_ray") != 0)
		return 0;
	if ((r = dtl_fw_int(c, "vllm.num_engines", 0, 1 << 20, 0, &engines)) < 0 ||
	    (r = dtl_fw_text(c, "algo.kl.init_coef", "0.01", &kl)) < 0)
		return r;
	if (engines > 0 && (r = dtl_fw_unmodelled_key(
	                        c, "vllm.num_engines",
	                        "OpenRLHF's vLLM rollout engines (--vllm.num_engines, dtype "
	                        "bfloat16)",
	                        "the actor's weights, broadcast to the engines in bfloat16 each "
	                        "step; generation runs there")) < 0)
		return r;
	if (strtod(kl, NULL) > 0 &&
	    (r = dtl_fw_unmodelled_key(
	         c, "algo.kl.init_coef",
	         "OpenRLHF's reference model (--algo.kl.init_coef above 0: the actor's "
	         "checkpoint, forward only)",
	         other)) < 0)
		return r;
	if (dtl_fw_given(c, "reward.model_name_or_path") &&
	    (r = dtl_fw_unmodelled_key(
	         c, "reward.model_name_or_path",
	         "OpenRLHF's reward model (--reward.model_name_or_path, a value head)", other)) < 0)
		return r;
	if (dtl_fw_given(c, "critic.model_name_or_path") &&
	    (r = dtl_fw_unmodelled_key(
	         c, "critic.model_name_or_path",
	         "OpenRLHF's critic (--critic.model_name_or_path, trained beside the "
	         "actor)",
	         other)) < 0)
		return r;
	int64_t nodes, gpus;
	if ((r = dtl_fw_int(c, "actor.num_nodes", 1, 1 << 20, 1, &nodes)) < 0 ||
	    (r = dtl_fw_int(c, "actor.num_gpus_per_node", 1, 1 << 20, 8, &gpus)) < 0)
		return r;
	c->m->plan.world_size = nodes * gpus;
	c->m->plan.world_size_loc = dtl_fw_key_loc(c, "actor.num_gpus_per_node");
	return 0;
}

/* what OpenRLHF does that dtypelint does not simulate, when asked for */
static int not_simulated(struct dtl_fw_config *c)
{
	static const struct {
		const char *key;
		bool count; /* a size, not simulated above 1 */
		const char *what, *touches;
	} keys[] = {
	    {"ds.tensor_parallel_size", true, "DeepSpeed AutoTP (--ds.tensor_parallel_size)",
	     "every Linear weight, split across ranks"},
	    {"ds.ring_attn_size", true, "ring attention (--ds.ring_attn_size)",
	     "the activations of attention, the sequence split across ranks"},
	    {"ds.zpg", true, "ZeRO++ hierarchical partitioning (--ds.zpg)",
	     "every ZeRO-3 partition, a second copy kept within the node"},
	    {"ds.packing_samples", false,
	     "sample packing (--ds.packing_samples: flash-attention's variable-length kernel)",
	     "the attention kernel's inputs; parameters are not touched"},
	    {"ds.deepcompile", false, "DeepSpeed DeepCompile (--ds.deepcompile)",
	     "every parameter's gather and release, scheduled by the compiled graph"},
	    {"ds.use_liger_kernel", false, "Liger kernels (--ds.use_liger_kernel)",
	     "the norms, rotary embedding, SwiGLU and loss, computed by Liger's own kernels"},
	    {"ds.grad_accum_dtype", false,
	     "DeepSpeed data_types.grad_accum_dtype "
	     "(--ds.grad_accum_dtype)",
	     "the gradient accumulation buffers"},
	};
	int r;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		struct dtl_fw_value v = dtl_fw_get(c, keys[k].key);
		bool on = false;
		int64_t n;
		if (!v.node || v.node->type == DTL_NODE_NULL)
			continue;
		if (keys[k].count) {
			if ((r = dtl_fw_int(c, keys[k].key, 0, INT64_MAX, 1, &n)) < 0)
				return r;
			on = n > 1;
		} else if (v.node->type == DTL_NODE_BOOL) {
			on = v.node->boolean;
		} else {
			on = true; /* a grad_accum_dtype */
		}
		if (on &&
		    (r = dtl_fw_unmodelled_key(c, keys[k].key, keys[k].what, keys[k].touches)) < 0)
			return r;
	}
	return 0;
}

/* "--ds.zero_stage 3 (17:20)" or "--ds.adam_offload false (default)" */
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
	else if (v.node->type == DTL_NODE_SEQ && v.node->seq.count == 0)
		value = "[]";
	else if (v.node->type == DTL_NODE_SEQ)
		for (size_t i = 0; value && i < v.node->seq.count; i++) {
			const struct dtl_node *item = &v.node->seq.items[i];
			const char *t = item->type == DTL_NODE_STRING ? item->string.text : "?";
			value =
			    dtl_arena_sprintf(c->arena, "%s%s%s", i ? value : "", i ? " " : "", t);
		}
	if (!value)
		return NULL;
	if (loc.file && strcmp(loc.file, "--framework-override") == 0)
		return dtl_arena_sprintf(c->arena, "--%s %s (--framework-override)", key, value);
	return dtl_arena_sprintf(c->arena, "--%s %s (%u:%u)", key, value, loc.line, loc.column);
}

/* the arguments read, for --show-plan: never a silent default */
static int arguments_read(struct dtl_fw_config *c, bool ppo)
{
	static const char *const keys[][2] = {
	    {"ds.zero_stage", "2"},       {"ds.param_dtype", "bf16"},
	    {"ds.adam_offload", "false"}, {"ds.load_in_4bit", "false"},
	    {"ds.lora.rank", "0"},        {"ds.lora.target_modules", "all-linear"},
	};
	static const char *const ppo_keys[][2] = {
	    {"actor.num_nodes", "1"},
	    {"actor.num_gpus_per_node", "8"},
	    {"vllm.num_engines", "None"},
	    {"algo.kl.init_coef", "0.01"},
	};
	const char *text = "";

	for (size_t k = 0; text && k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *a = argument(c, keys[k][0], keys[k][1]);
		text = a ? dtl_arena_sprintf(c->arena, "%s%s%s", text, k ? ", " : "", a) : NULL;
	}
	for (size_t k = 0; ppo && text && k < sizeof(ppo_keys) / sizeof(ppo_keys[0]); k++) {
		const char *a = argument(c, ppo_keys[k][0], ppo_keys[k][1]);
		text = a ? dtl_arena_sprintf(c->arena, "%s, %s", text, a) : NULL;
	}
	c->m->recipe.arguments_read = text;
	return text ? 0 : -ENOMEM;
}

static int import(struct dtl_fw_config *c)
{
	struct dtl_manifest *m = c->m;
	enum dtl_dtype d = DTL_DTYPE_BF16;
	const char *cli;
	bool kbit;
	int r;

	if ((r = dtl_fw_text(c, "cli", "train_sft", &cli)) < 0)
		return r;
	bool rm = strcmp(cli, "train_rm") == 0;
	m->recipe.kind =
	    dtl_arena_sprintf(c->arena, "OpenRLHF %s (%s)", cli,
	                      strcmp(cli, "train_ppo_ray") == 0 ? "the actor" : "the model");
	if (!m->recipe.kind)
		return -ENOMEM;
	/* deepspeed.initialize and OpenRLHF's own loop: no HF Trainer, no TRL */
	m->plan.trainer = "none";
	m->plan.trainer_loc = dtl_fw_key_loc(c, "cli");
	if ((r = param_dtype(c, &d)) < 0 || (r = zero(c)) < 0 || (r = precision(c, d)) < 0 ||
	    (r = quantization(c, d, &kbit)) < 0 || (r = lora(c, kbit, rm)) < 0 ||
	    (r = beside(c, cli)) < 0 || (r = not_simulated(c)) < 0 ||
	    (r = arguments_read(c, strcmp(cli, "train_ppo_ray") == 0)) < 0)
		return r;
	return 0;
}

/* the arguments this importer reads, as their argparse dest (docs/frameworks.md lists them) */
static bool reads(const char *key)
{
	static const char *const keys[] = {"cli",
	                                   "ds.zero_stage",
	                                   "ds.param_dtype",
	                                   "ds.adam_offload",
	                                   "ds.load_in_4bit",
	                                   "ds.lora.rank",
	                                   "ds.lora.target_modules",
	                                   "ds.tensor_parallel_size",
	                                   "ds.ring_attn_size",
	                                   "ds.zpg",
	                                   "ds.packing_samples",
	                                   "ds.deepcompile",
	                                   "ds.use_liger_kernel",
	                                   "ds.grad_accum_dtype",
	                                   "ref.model_name_or_path",
	                                   "vllm.num_engines",
	                                   "algo.kl.init_coef",
	                                   "reward.model_name_or_path",
	                                   "critic.model_name_or_path",
	                                   "actor.num_nodes",
	                                   "actor.num_gpus_per_node",
	                                   NULL};
	for (const char *const *k = keys; *k; k++)
		if (strcmp(key, *k) == 0)
			return true;
	return false;
}

static bool detect(const struct dtl_node *root)
{
	(void)root;
	return false; /* OpenRLHF has no config file: only a launch command names it */
}

const struct dtl_framework_importer dtl_importer_openrlhf = {
    .kind = "OpenRLHF command line",
    .id = "openrlhf",
    .reads = reads,
    .detect = detect,
    .import = import,
};
