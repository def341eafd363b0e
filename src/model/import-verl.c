/* SPDX-License-Identifier: MIT */
/*
 * A verl PPO/GRPO trainer config (Hydra YAML: verl/trainer/config/ppo_trainer.yaml, its
 * generated reference _generated_ppo_trainer.yaml, or a user's own) and the `key=value`
 * overrides of `python3 -m verl.trainer.main_ppo`, read the way verl 0.7.0's legacy FSDP
 * workers build the actor (rules/versions.yaml recipes: verl-*):
 *
 * - actor_rollout_ref.actor.strategy: fsdp is FSDP1, fsdp2 is fully_shard, megatron is
 *   Megatron-Core (not modelled), anything else main_ppo's NotImplementedError;
 * - the actor is loaded with from_pretrained(torch_dtype=fsdp_config.model_dtype) (fp32 in
 *   engine/fsdp.yaml; None is fp32 for the actor), then moved to that dtype;
 * - fsdp_config.mixed_precision given: MixedPrecision(param_dtype (bf16), reduce_dtype (fp32),
 *   buffer_dtype (fp32)); not given: param_dtype = fsdp_config.dtype (bfloat16), reduce and
 *   buffer float32; fsdp2 takes param and reduce in its MixedPrecisionPolicy;
 * - model.lora_rank > 0: get_peft_model(LoraConfig(r, target_modules, ...)) after the move,
 *   and under FSDP1 get_fsdp_wrap_policy adds a lambda policy that makes each leaf with a
 *   trainable weight (the LoRA matrices) a unit of its own (trainer "verl" in the plan);
 * - the rollout engine, the reference policy and the critic are separate models that
 *   dtypelint does not simulate: each is reported as not modelled (DT604) at its key.
 *
 * Keys absent from the file take the defaults of _generated_ppo_trainer.yaml at v0.7.0, so a
 * launch script's overrides alone are read as main_ppo reads them.
 */
#include <errno.h>
#include <string.h>

#include "import-framework.h"

#define ACTOR   "actor_rollout_ref.actor."
#define FSDP    ACTOR "fsdp_config."
#define MODEL   "actor_rollout_ref.model."
#define ROLLOUT "actor_rollout_ref.rollout."

static bool detect(const struct dtl_node *root)
{
	const struct dtl_node *arr = dtl_node_get(root, "actor_rollout_ref");
	return arr && arr->type == DTL_NODE_MAP;
}

/* where a key is, or the deepest mapping above it that is there (a default's place) */
static struct dtl_loc at(const struct dtl_fw_config *c, const char *key)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	char buf[128];
	size_t n = strlen(key);

	if (v.node || n >= sizeof(buf))
		return dtl_fw_loc(c, v);
	memcpy(buf, key, n + 1);
	for (char *dot; !v.node && (dot = strrchr(buf, '.'));) {
		*dot = '\0';
		v = dtl_fw_get(c, buf);
	}
	return dtl_fw_loc(c, v);
}

/* OmegaConf's '???' (MISSING): verl cannot read the key, so it never starts */
static int missing(const struct dtl_fw_config *c, struct dtl_fw_value v, const char *key)
{
	if (v.node && v.node->type == DTL_NODE_STRING && strcmp(v.node->string.text, "???") == 0)
		return dtl_schema_fail(v.s, v.node,
		                       "verl refuses this config: 'omegaconf.errors."
		                       "MissingMandatoryValue: Missing mandatory value: %s' (give "
		                       "it as an override: %s=...)",
		                       key, key);
	(void)c;
	return 0;
}

/* a string key, "" when absent or null */
static int text_key(const struct dtl_fw_config *c, const char *key, const char *dflt,
                    const char **ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	int r;

	*ret = dflt;
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	if ((r = missing(c, v, key)) < 0)
		return r;
	return dtl_schema_string(v.s, v.node, key, ret);
}

/* PrecisionType.to_dtype (utils/torch_dtypes.py): 16 "16" fp16 float16, 32 "32" fp32
 * float32, bf16 bfloat16; anything else "RuntimeError: unexpected precision: X" */
static int precision(const struct dtl_fw_config *c, const char *key, enum dtl_dtype dflt,
                     enum dtl_dtype *ret, struct dtl_loc *ret_loc)
{
	static const struct {
		const char *name;
		enum dtl_dtype dtype;
	} names[] = {{"16", DTL_DTYPE_F16},      {"fp16", DTL_DTYPE_F16},
	             {"float16", DTL_DTYPE_F16}, {"32", DTL_DTYPE_F32},
	             {"fp32", DTL_DTYPE_F32},    {"float32", DTL_DTYPE_F32},
	             {"bf16", DTL_DTYPE_BF16},   {"bfloat16", DTL_DTYPE_BF16}};
	struct dtl_fw_value v = dtl_fw_get(c, key);
	int r;

	*ret = dflt;
	*ret_loc = at(c, key);
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	if ((r = missing(c, v, key)) < 0)
		return r;
	const char *text = v.node->raw ? v.node->raw : "";
	if (v.node->type == DTL_NODE_STRING)
		text = v.node->string.text;
	else if (v.node->type != DTL_NODE_INT)
		text = NULL;
	for (size_t i = 0; text && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(text, names[i].name) == 0) {
			*ret = names[i].dtype;
			return 0;
		}
	return dtl_schema_fail(v.s, v.node,
	                       "verl refuses this dtype: 'RuntimeError: unexpected precision: "
	                       "%s' (PrecisionType: fp16, bf16, fp32 and their spellings)",
	                       text ? text : "?");
}

static int unmodelled(struct dtl_fw_config *c, const char *key, const char *what,
                      const char *touches)
{
	return dtl_fw_unmodelled(c, at(c, key), what, touches);
}

/* whether the file or an override gives anything under prefix ("...mixed_precision") */
static bool given(const struct dtl_fw_config *c, const char *prefix)
{
	size_t n = strlen(prefix);
	struct dtl_fw_value v = dtl_fw_get(c, prefix);

	if (v.node && v.node->type != DTL_NODE_NULL)
		return true;
	for (size_t i = 0; i < c->override_count; i++)
		if (!c->overrides[i].removed && !c->overrides[i].ignored &&
		    strncmp(c->overrides[i].key, prefix, n) == 0 && c->overrides[i].key[n] == '.')
			return true;
	return false;
}

/* fsdp_workers._build_model_optimizer: MixedPrecision from fsdp_config */
static int mixed_precision(struct dtl_fw_config *c, bool fsdp2)
{
	struct dtl_plan_fsdp *f = &c->m->plan.fsdp;
	int r;

	if (given(c, FSDP "mixed_precision")) {
		if ((r = precision(c, FSDP "mixed_precision.param_dtype", DTL_DTYPE_BF16,
		                   &f->param_dtype, &f->param_dtype_loc)) < 0 ||
		    (r = precision(c, FSDP "mixed_precision.reduce_dtype", DTL_DTYPE_F32,
		                   &f->reduce_dtype, &f->reduce_dtype_loc)) < 0 ||
		    (r = precision(c, FSDP "mixed_precision.buffer_dtype", DTL_DTYPE_F32,
		                   &f->buffer_dtype, &f->buffer_dtype_loc)) < 0)
			return r;
	} else {
		if ((r = precision(c, FSDP "dtype", DTL_DTYPE_BF16, &f->param_dtype,
		                   &f->param_dtype_loc)) < 0)
			return r;
		f->reduce_dtype = f->buffer_dtype = DTL_DTYPE_F32;
		f->reduce_dtype_loc = f->buffer_dtype_loc = at(c, FSDP "mixed_precision");
	}
	if (fsdp2) /* MixedPrecisionPolicy(param_dtype, reduce_dtype): no buffer dtype */
		f->buffer_dtype = DTL_DTYPE_NONE;
	return 0;
}

/* wrap_policy.transformer_layer_cls_to_wrap (a list or one name); default _no_split_modules */
static int wrap_policy(struct dtl_fw_config *c)
{
	struct dtl_patterns *w = &c->m->plan.fsdp.wrap;
	struct dtl_fw_value v = dtl_fw_get(c, FSDP "wrap_policy.transformer_layer_cls_to_wrap");
	struct dtl_fw_value minp = dtl_fw_get(c, FSDP "wrap_policy.min_num_params");
	bool disable;
	int r;

	if ((r = dtl_fw_bool(c, FSDP "wrap_policy.disable", false, &disable)) < 0)
		return r;
	if (disable) {
		/* get_fsdp_wrap_policy returns None before any policy, LoRA's lambda included:
		 * the root is the only unit */
		*w = (struct dtl_patterns){.present = true,
		                           .loc = at(c, FSDP "wrap_policy.disable")};
		c->m->plan.trainer = "none";
		c->m->plan.trainer_loc = w->loc;
		return 0;
	}
	if (minp.node && minp.node->type == DTL_NODE_INT && minp.node->integer > 0)
		dtl_fw_warn(c, dtl_fw_loc(c, minp),
		            "verl's size-based wrap policy (wrap_policy.min_num_params) is not "
		            "simulated: units are taken at the model's _no_split_modules");
	if (!v.node || v.node->type == DTL_NODE_NULL || (minp.node && minp.node->integer > 0))
		return 0;
	size_t n = v.node->type == DTL_NODE_SEQ ? v.node->seq.count : 1;
	struct dtl_pattern *items = dtl_arena_calloc(c->arena, n, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct dtl_node *item =
		    v.node->type == DTL_NODE_SEQ ? &v.node->seq.items[i] : v.node;
		const char *name;
		if ((r = dtl_schema_string(v.s, item, "transformer_layer_cls_to_wrap", &name)) < 0)
			return r;
		items[i] =
		    (struct dtl_pattern){name, (uint32_t)strlen(name), dtl_schema_loc(v.s, item)};
	}
	*w = (struct dtl_patterns){items, n, true, dtl_fw_loc(c, v)};
	return 0;
}

/* the actor's dtype: from_pretrained(torch_dtype=model_dtype), then .to(model_dtype) */
static int model_dtype(struct dtl_fw_config *c)
{
	struct dtl_manifest *m = c->m;
	int r;

	m->model.load_mode = DTL_LOAD_DTYPE;
	if ((r = precision(c, FSDP "model_dtype", DTL_DTYPE_F32, &m->model.load_dtype,
	                   &m->model.load_dtype_loc)) < 0)
		return r;
	if (m->model.keep_in_fp32.count || m->model.keep_in_fp32_strict.count)
		return unmodelled(
		    c, FSDP "model_dtype",
		    "verl's actor_module.to(model_dtype) after loading (fsdp_workers.py)",
		    "the model's keep-in-fp32 modules, which the move casts to model_dtype; "
		    "the simulation keeps them as from_pretrained leaves them");
	return 0;
}

/* the actor under FSDP1 / FSDP2 (actor_rollout_ref.actor.strategy) */
static int fsdp(struct dtl_fw_config *c, bool fsdp2)
{
	struct dtl_plan *plan = &c->m->plan;
	bool flag;
	int r;

	plan->strategy = fsdp2 ? DTL_STRATEGY_FSDP2 : DTL_STRATEGY_FSDP1;
	plan->strategy_loc = at(c, ACTOR "strategy");
	if ((r = model_dtype(c)) < 0 || (r = mixed_precision(c, fsdp2)) < 0 ||
	    (r = wrap_policy(c)) < 0)
		return r;
	if (!fsdp2) {
		/* FSDP(use_orig_params=fsdp_config.use_orig_params), False in engine/fsdp.yaml */
		if ((r = dtl_fw_bool(c, FSDP "use_orig_params", false, &flag)) < 0)
			return r;
		plan->fsdp.use_orig_params = flag ? DTL_TRUE : DTL_FALSE;
		plan->fsdp.use_orig_params_loc = at(c, FSDP "use_orig_params");
		/* the actor's FSDP1 has cpu_offload=None: param_offload moves it between phases */
		return 0;
	}
	/* fsdp2: CPUOffloadPolicy for the actor only with fsdp_config.offload_policy */
	if ((r = dtl_fw_bool(c, FSDP "offload_policy", false, &flag)) < 0)
		return r;
	if (flag) {
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = at(c, FSDP "offload_policy");
	}
	return 0;
}

/* model.target_modules: "all-linear" (verl's default), another string, or a list */
static int lora_targets(struct dtl_fw_config *c, struct dtl_adapter *a)
{
	struct dtl_fw_value v = dtl_fw_get(c, MODEL "target_modules");
	int r;

	a->target_modules.loc = at(c, MODEL "target_modules");
	if (!v.node || v.node->type == DTL_NODE_NULL) {
		a->target_modules_string = "all-linear";
		a->target_modules.present = true;
		return 0;
	}
	if (v.node->type == DTL_NODE_STRING) {
		a->target_modules_string = v.node->string.text;
		a->target_modules.present = true;
		return 0;
	}
	if (v.node->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(v.s, v.node, "target_modules", "a string or a list");
	struct dtl_pattern *items =
	    dtl_arena_calloc(c->arena, v.node->seq.count + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < v.node->seq.count; i++) {
		const char *name;
		if ((r = dtl_schema_string(v.s, &v.node->seq.items[i], "target_modules", &name)) <
		    0)
			return r;
		items[i] = (struct dtl_pattern){name, (uint32_t)strlen(name),
		                                dtl_schema_loc(v.s, &v.node->seq.items[i])};
	}
	a->target_modules.items = items;
	a->target_modules.count = v.node->seq.count;
	a->target_modules.present = true;
	return 0;
}

/* model.lora_rank > 0 or model.lora_adapter_path: LoRA on the actor (fsdp_workers.py) */
static int lora(struct dtl_fw_config *c, bool *ret_lora)
{
	struct dtl_fw_value rank = dtl_fw_get(c, MODEL "lora_rank");
	struct dtl_fw_value path = dtl_fw_get(c, MODEL "lora_adapter_path");
	struct dtl_fw_value exclude = dtl_fw_get(c, MODEL "exclude_modules");
	struct dtl_adapter *a = &c->m->adapter;
	int64_t r64 = 0;
	int r;

	*ret_lora = false;
	if (rank.node && rank.node->type != DTL_NODE_NULL &&
	    (r = dtl_schema_int(rank.s, rank.node, "lora_rank", 0, 1 << 20, &r64)) < 0)
		return r;
	bool from_path = path.node && path.node->type != DTL_NODE_NULL;
	if (r64 == 0 && !from_path)
		return 0;
	*ret_lora = true;
	dtl_adapter_init(a, at(c, from_path ? MODEL "lora_adapter_path" : MODEL "lora_rank"));
	a->added_with = DTL_ADDED_GET_PEFT_MODEL;
	a->added_with_loc = a->loc;
	if (r64)
		a->r = r64;
	if ((r = lora_targets(c, a)) < 0)
		return r;
	if (from_path)
		dtl_fw_warn(c, dtl_fw_loc(c, path),
		            "verl loads this adapter with PeftModel.from_pretrained: its "
		            "adapter_config.json is not read here (give it with --peft)");
	if (exclude.node && exclude.node->type != DTL_NODE_NULL)
		dtl_fw_warn(c, dtl_fw_loc(c, exclude),
		            "model.exclude_modules is not read: the LoRA targets shown include "
		            "the excluded modules");
	/* get_fsdp_wrap_policy(is_lora=True): each trainable leaf its own FSDP1 unit (the
	 * sim's trainer "verl") */
	return 0;
}

/* The rollout engine (vLLM, SGLang, HF): its own copy of the actor's weights in rollout.dtype */
static int rollout(struct dtl_fw_config *c)
{
	struct dtl_fw_value v = dtl_fw_get(c, ROLLOUT "name");
	const char *name, *dtype;
	int r;

	if (!v.node)
		return unmodelled(c, ROLLOUT "name",
		                  "the rollout engine (actor_rollout_ref.rollout.name is not "
		                  "given: verl refuses to start without it)",
		                  "the actor's weights, copied into the engine each step");
	if ((r = text_key(c, ROLLOUT "name", "", &name)) < 0 ||
	    (r = text_key(c, ROLLOUT "dtype", "bfloat16", &dtype)) < 0)
		return r;
	return unmodelled(c, ROLLOUT "name",
	                  dtl_arena_sprintf(c->arena,
	                                    "the %s rollout engine (actor_rollout_ref.rollout."
	                                    "name, dtype %s)",
	                                    name, dtype),
	                  dtl_arena_sprintf(c->arena,
	                                    "the actor's weights, synced to the engine in %s "
	                                    "each step; generation runs there",
	                                    dtype));
}

/* The reference policy: a second actor (FSDP, CPU offload, forward only), built when a KL
 * term needs it and the actor has no LoRA (then the actor without its adapter is the
 * reference: ref_in_actor) */
static int reference(struct dtl_fw_config *c, bool has_lora)
{
	bool kl_loss, kl_reward;
	enum dtl_dtype d;
	struct dtl_loc loc;
	int r;

	if ((r = dtl_fw_bool(c, ACTOR "use_kl_loss", false, &kl_loss)) < 0 ||
	    (r = dtl_fw_bool(c, "algorithm.use_kl_in_reward", false, &kl_reward)) < 0)
		return r;
	if (has_lora || (!kl_loss && !kl_reward))
		return 0;
	if ((r = precision(c, "actor_rollout_ref.ref.fsdp_config.model_dtype", DTL_DTYPE_F32, &d,
	                   &loc)) < 0)
		return r;
	const char *what =
	    c->m->plan.strategy == DTL_STRATEGY_UNSET
	        ? "verl's reference policy (actor_rollout_ref.ref)"
	        : dtl_arena_sprintf(c->arena,
	                            "verl's reference policy (actor_rollout_ref.ref, model_dtype "
	                            "%s, FSDP with CPU offload)",
	                            dtl_dtype_name(d));
	return unmodelled(c, kl_loss ? ACTOR "use_kl_loss" : "algorithm.use_kl_in_reward", what,
	                  "a second copy of every parameter, forward only; dtypelint simulates "
	                  "the actor");
}

/* need_critic: critic.enable, else algorithm.adv_estimator == gae (the default) */
static int critic(struct dtl_fw_config *c)
{
	struct dtl_fw_value enable = dtl_fw_get(c, "critic.enable");
	const char *estimator;
	bool on;
	int r;

	if ((r = text_key(c, "algorithm.adv_estimator", "gae", &estimator)) < 0)
		return r;
	on = strcmp(estimator, "gae") == 0;
	if (enable.node && enable.node->type != DTL_NODE_NULL &&
	    (r = dtl_schema_bool(enable.s, enable.node, "critic.enable", &on)) < 0)
		return r;
	if (!on)
		return 0;
	return unmodelled(c,
	                  enable.node && enable.node->type != DTL_NODE_NULL
	                      ? "critic.enable"
	                      : "algorithm.adv_estimator",
	                  "verl's critic (critic.model.path, a value model of its own)",
	                  "every parameter of the critic, a second model trained beside the "
	                  "actor; dtypelint simulates the actor");
}

/* actor_rollout_ref.actor.strategy: main_ppo's worker classes */
static int strategy(struct dtl_fw_config *c)
{
	struct dtl_fw_value v = dtl_fw_get(c, ACTOR "strategy");
	const char *s;
	int r;

	if ((r = text_key(c, ACTOR "strategy", "fsdp", &s)) < 0)
		return r;
	if (strcmp(s, "fsdp") == 0 || strcmp(s, "fsdp2") == 0)
		return fsdp(c, strcmp(s, "fsdp2") == 0);
	if (strcmp(s, "megatron") == 0)
		return unmodelled(c, ACTOR "strategy",
		                  "Megatron-Core (actor_rollout_ref.actor.strategy megatron: "
		                  "tensor, pipeline and expert parallelism, its distributed "
		                  "optimizer)",
		                  "every parameter of the actor, which Megatron shards and casts "
		                  "by its own config; the fsdp_config keys are not read");
	return dtl_schema_fail(v.s, v.node,
	                       "verl has no actor strategy '%s': 'NotImplementedError' "
	                       "(main_ppo: fsdp, fsdp2, megatron)",
	                       s);
}

static int import(struct dtl_fw_config *c)
{
	const char *impl;
	bool has_lora = false;
	int r;

	c->m->recipe.kind = "verl main_ppo (the actor)";
	/* verl's own workers build the model: no HF Trainer, no TRL */
	c->m->plan.trainer = "verl";
	c->m->plan.trainer_loc = at(c, ACTOR "strategy");
	if ((r = text_key(c, "trainer.use_legacy_worker_impl", "auto", &impl)) < 0 ||
	    (r = strategy(c)) < 0)
		return r;
	if (c->m->plan.strategy != DTL_STRATEGY_UNSET && (r = lora(c, &has_lora)) < 0)
		return r;
	if (strcmp(impl, "disable") == 0 &&
	    (r = unmodelled(c, "trainer.use_legacy_worker_impl",
	                    "verl's new model engine (trainer.use_legacy_worker_impl disable)",
	                    "every parameter of the actor: read here as the legacy FSDP workers "
	                    "build it")) < 0)
		return r;
	if ((r = rollout(c)) < 0 || (r = reference(c, has_lora)) < 0 || (r = critic(c)) < 0)
		return r;
	return 0;
}

/* the keys this importer reads (prefixes end in '.'): docs/frameworks.md lists them */
static bool reads(const char *key)
{
	static const char *const keys[] = {ACTOR "strategy",
	                                   FSDP "model_dtype",
	                                   FSDP "dtype",
	                                   FSDP "mixed_precision",
	                                   FSDP "mixed_precision.",
	                                   FSDP "use_orig_params",
	                                   FSDP "offload_policy",
	                                   FSDP "wrap_policy.",
	                                   MODEL "lora_rank",
	                                   MODEL "lora_adapter_path",
	                                   MODEL "target_modules",
	                                   MODEL "exclude_modules",
	                                   ROLLOUT "name",
	                                   ROLLOUT "dtype",
	                                   ACTOR "use_kl_loss",
	                                   "actor_rollout_ref.ref.fsdp_config.model_dtype",
	                                   "algorithm.use_kl_in_reward",
	                                   "algorithm.adv_estimator",
	                                   "critic.enable",
	                                   "trainer.use_legacy_worker_impl",
	                                   NULL};
	for (const char *const *k = keys; *k; k++) {
		size_t n = strlen(*k);
		if ((*k)[n - 1] == '.' ? strncmp(key, *k, n) == 0 : strcmp(key, *k) == 0)
			return true;
	}
	return false;
}

const struct dtl_framework_importer dtl_importer_verl = {
    .kind = "verl trainer config",
    .id = "verl",
    .reads = reads,
    .detect = detect,
    .import = import,
};
