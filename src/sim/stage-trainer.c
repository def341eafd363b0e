/* SPDX-License-Identifier: MIT */
/*
 * The trainer stage: what TRL does to dtypes after get_peft_model
 * (rules/versions.yaml: trl-qlora-bf16-cast, trl-qlora-skips-dora-magnitude,
 * trl-zero3-no-autocast). TRL >= 0.26's core trainers cast every trainable parameter of a
 * quantized model to bfloat16 (from 1.15 but DoRA's magnitude vector, `if
 * "lora_magnitude_vector" not in name`). (TRL >= 1.7's
 * autocast_adapter_dtype=False under ZeRO-3 is applied in the peft stage, where it acts.)
 * A recipe's own casts (LLaMA-Factory) come first: they run inside its model loader.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim-private.h"

bool dtl_sim_trl_core_trainer(const struct dtl_sim *sim)
{
	static const char *const core[] = {"trl-sft",    "trl-dpo", "trl-grpo", "trl-rloo",
	                                   "trl-reward", "trl-kto", NULL};
	const char *trainer = sim->rp.plan.trainer;

	for (const char *const *t = core; trainer && *t; t++)
		if (strcmp(*t, trainer) == 0)
			return true;
	return false;
}

/*
 * LLaMA-Factory's composite models (model_utils/visual.py at v0.9.5, _register_composite_model;
 * rules/versions.yaml recipes: llama-factory-finetuning, llama-factory-lora-targets): the keys
 * of its vision tower, projector and language model, matched as substrings of parameter
 * names. NULL lists are the defaults: vision_tower, multi_modal_projector, language_model +
 * lm_head. conflict: lora_conflict_keys, never given LoRA (default none).
 */
struct lf_composite {
	const char *model_type;
	const char *projector[3], *vision[5], *language[3];
	const char *conflict[2];
};

static const struct lf_composite lf_composites[] = {
    {"gemma3", {NULL}, {NULL}, {NULL}, {NULL}},
    {"glm4v",
     {"visual.merger"},
     {"visual.patch_embed", "visual.blocks"},
     {"language_model", "lm_head"},
     {"patch_embed"}},
    {"internvl", {NULL}, {NULL}, {NULL}, {NULL}},
    {"llama4", {NULL}, {"vision_model"}, {NULL}, {NULL}},
    {"llava", {NULL}, {NULL}, {NULL}, {NULL}},
    {"llava_next", {NULL}, {NULL}, {NULL}, {NULL}},
    {"llava_next_video", {NULL}, {NULL}, {NULL}, {NULL}},
    {"mistral3", {"model.multi_modal_projector"}, {NULL}, {NULL}, {NULL}},
    {"mllama", {NULL}, {"vision_model"}, {NULL}, {NULL}},
    {"paligemma", {NULL}, {NULL}, {NULL}, {NULL}},
    {"qwen2_vl",
     {"visual.merger"},
     {"visual.patch_embed", "visual.blocks"},
     {"language_model", "lm_head"},
     {"patch_embed"}},
    {"qwen2_5_vl",
     {"visual.merger"},
     {"visual.patch_embed", "visual.blocks"},
     {"language_model", "lm_head"},
     {"patch_embed"}},
    {"qwen3_vl",
     {"visual.merger"},
     {"visual.pos_embed", "visual.patch_embed", "visual.blocks", "visual.deepstack_merger_list"},
     {"language_model", "lm_head"},
     {"patch_embed"}},
    {"qwen3_vl_moe",
     {"visual.merger"},
     {"visual.pos_embed", "visual.patch_embed", "visual.blocks", "visual.deepstack_merger_list"},
     {"language_model", "lm_head"},
     {"patch_embed"}},
};

static const char *const lf_no_keys[] = {NULL};
static const char *const lf_default_projector[] = {"multi_modal_projector", NULL};
static const char *const lf_default_vision[] = {"vision_tower", NULL};
static const char *const lf_default_language[] = {"language_model", "lm_head", NULL};

static bool lf_hits(const char *name, const char *const *keys, const char *const *dflt)
{
	for (const char *const *k = keys[0] ? keys : dflt; *k; k++)
		if (strstr(name, *k))
			return true;
	return false;
}

/* get_forbidden_modules: the parts of composite model c that the flags freeze */
static bool lf_forbidden(const struct dtl_recipe *rc, const struct lf_composite *c,
                         const char *name)
{
	return c && (((rc->lf_full_frozen & DTL_LF_VISION) &&
	              lf_hits(name, c->vision, lf_default_vision)) ||
	             ((rc->lf_full_frozen & DTL_LF_PROJECTOR) &&
	              lf_hits(name, c->projector, lf_default_projector)) ||
	             ((rc->lf_full_frozen & DTL_LF_LANGUAGE) &&
	              lf_hits(name, c->language, lf_default_language)));
}

/* The model's layer count, as LLaMA-Factory reads config.num_hidden_layers: one past the
 * highest N of a "layers.N." in the tensor names (the text decoder's, in a composite model) */
static int64_t lf_num_layers(const struct dtl_sim *sim)
{
	int64_t n = 0;

	for (uint32_t t = 0; t < sim->t.count; t++)
		for (const char *p = strstr(sim->t.name[t], "layers."); p;
		     p = strstr(p + 1, "layers.")) {
			char *end;
			long long i = strtoll(p + 7, &end, 10);
			if (end != p + 7 && *end == '.' && i + 1 > n)
				n = i + 1;
		}
	return n;
}

/* _setup_freeze_tuning: trains a parameter whose name holds ".<idx>.<module>" for a trainable
 * layer idx and module ("all": ""), or an extra module, or (freeze_multi_modal_projector
 * false) a projector key */
static bool lf_freeze_trains(const struct dtl_recipe *rc, const struct lf_composite *c, int64_t lo,
                             int64_t hi, const char *name)
{
	const struct dtl_patterns *mods = &rc->lf_freeze_modules, *extra = &rc->lf_freeze_extra;
	char key[160];

	for (int64_t idx = lo; idx < hi; idx++)
		for (size_t m = 0; m < mods->count; m++) {
			bool all = strcmp(mods->items[m].text, "all") == 0;
			snprintf(key, sizeof(key), ".%lld.%s", (long long)idx,
			         all ? "" : mods->items[m].text);
			if (strstr(name, key))
				return true;
		}
	for (size_t e = 0; e < extra->count; e++)
		if (strstr(name, extra->items[e].text))
			return true;
	return c && !(rc->lf_full_frozen & DTL_LF_PROJECTOR) &&
	       lf_hits(name, c->projector, lf_default_projector);
}

/* The composite model LLaMA-Factory registers under the model's config.model_type: the
 * architecture profile's, else the folder's config.json's (Qwen2-VL, LLaVA and others have
 * no profile; tests/oracle/DISAGREEMENTS.md L2); NULL when it registers none. */
static const struct lf_composite *lf_composite(const struct dtl_sim *sim)
{
	const struct dtl_profile *profile = sim->model.profile;
	const char *type =
	    profile && profile->model_type ? profile->model_type : sim->manifest->model.model_type;

	for (size_t i = 0; type && i < sizeof(lf_composites) / sizeof(lf_composites[0]); i++)
		if (strcmp(lf_composites[i].model_type, type) == 0)
			return &lf_composites[i];
	return NULL;
}

/* find_all_linear_modules (model_utils/misc.py at v0.9.5): lora_target all leaves out the
 * output layer by name and a composite model's projector, and its vision tower under
 * freeze_vision_tower (the flag, not the default of get_forbidden_modules' other flags) */
static bool lf_all_forbidden(const struct dtl_sim *sim, const struct lf_composite *c,
                             const char *name)
{
	const struct dtl_profile *profile = sim->model.profile;
	const char *type =
	    profile && profile->model_type ? profile->model_type : sim->manifest->model.model_type;
	const char *output = !type                            ? NULL
	                     : strcmp(type, "chatglm") == 0   ? "output_layer"
	                     : strcmp(type, "internlm2") == 0 ? "output"
	                                                      : NULL;

	return strstr(name, "lm_head") || (output && strstr(name, output)) ||
	       (c && (lf_hits(name, c->projector, lf_default_projector) ||
	              ((sim->manifest->recipe.lf_full_frozen & DTL_LF_VISION) &&
	               lf_hits(name, c->vision, lf_default_vision))));
}

bool dtl_sim_lf_lora_excluded(const struct dtl_sim *sim, const char *path, size_t len, bool all)
{
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	const struct lf_composite *c;
	char name[4096];

	if (!rc->lf_lora || len >= sizeof(name))
		return false;
	memcpy(name, path, len);
	name[len] = '\0';
	c = lf_composite(sim);
	if (all && lf_all_forbidden(sim, c, name))
		return true;
	/* patch_target_modules: a composite model's targets lose get_forbidden_modules' parts
	 * and the lora_conflict_keys */
	return c && (lf_forbidden(rc, c, name) || lf_hits(name, c->conflict, lf_no_keys));
}

/* finetuning_type full or freeze: the parameters LLaMA-Factory freezes keep the load dtype
 * and lose requires_grad before the cast (rules/versions.yaml recipes:
 * llama-factory-finetuning). */
static int lf_freeze_params(struct dtl_sim *sim)
{
	static const char *fact = "https://github.com/hiyouga/LLaMA-Factory/blob/v0.9.5/src/"
	                          "llamafactory/model/adapter.py#L306-L336";
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	const struct lf_composite *c = lf_composite(sim);
	int64_t lo = 0, hi = 0;

	if (!rc->lf_full && !rc->lf_freeze)
		return 0;
	if (rc->lf_freeze) {
		int64_t n = lf_num_layers(sim), k = rc->lf_freeze_layers;
		lo = k > 0 ? (n - k > 0 ? n - k : 0) : 0;
		hi = k > 0 ? n : (-k < n ? -k : n);
	}
	for (uint32_t t = 0; t < sim->t.count; t++) {
		const char *name = sim->t.name[t];
		if (sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		if (!lf_forbidden(rc, c, name) &&
		    !(rc->lf_freeze && !lf_freeze_trains(rc, c, lo, hi, name)))
			continue;
		sim->t.flags[t] &= ~DTL_TF_TRAINABLE;
		/* the history says why a frozen tensor kept its dtype beside cast ones */
		int r =
		    dtl_sim_note(sim, t, DTL_STAGE_TRAINER,
		                 rc->lf_full ? "LLaMA-Factory's full tuning freezes it "
		                               "(get_forbidden_modules: freeze_vision_tower, "
		                               "freeze_multi_modal_projector, "
		                               "freeze_language_model) and does not cast it"
		                             : "LLaMA-Factory's freeze tuning freezes it (not in "
		                               "freeze_trainable_layers / freeze_trainable_modules "
		                               "/ freeze_extra_modules) and does not cast it",
		                 fact, rc->lf_full_loc);
		if (r < 0)
			return r;
	}
	return 0;
}

/* get_linear_embedding_layers (axolotl v0.19.0 loaders/utils.py#L306-L316): the embedding
 * modules of the config's model_type */
static void axolotl_embedding_names(const struct dtl_sim *sim, const char *names[2])
{
	const char *type = sim->manifest->model.model_type;

	names[0] = "embed_tokens";
	names[1] = "lm_head";
	if (type && strcmp(type, "gpt_neox") == 0) {
		names[0] = "embed_in";
		names[1] = "embed_out";
	} else if (type && (strcmp(type, "falcon") == 0 || strcmp(type, "bailing_hybrid") == 0)) {
		names[0] = "word_embeddings";
	} else if (type && strcmp(type, "nemotron_h") == 0) {
		names[0] = "embeddings";
	}
}

/* the module path of a tensor (its name without the last component) contains word */
static bool module_has(const char *name, const char *word)
{
	const char *last = strrchr(name, '.');
	const char *hit = strstr(name, word);
	return hit && last && hit + strlen(word) <= last;
}

/* axolotl's _configure_embedding_dtypes: every floating tensor of a module whose name holds
 * "norm", and of the embedding modules, goes to dtype `to` (parameters and buffers alike),
 * but for the tensors with a flag in `skip` */
static int axolotl_cast_norms_embeddings(struct dtl_sim *sim, enum dtl_dtype to, uint32_t skip,
                                         const char *reason, const char *fact, struct dtl_loc loc)
{
	const char *embed[2];

	axolotl_embedding_names(sim, embed);
	for (uint32_t t = 0; t < sim->t.count; t++) {
		const char *name = sim->t.name[t];
		if (!dtl_dtype_is_floating(sim->t.dtype[t]) || sim->t.dtype[t] == to ||
		    (sim->t.flags[t] & skip) ||
		    (!module_has(name, "norm") && !module_has(name, embed[0]) &&
		     !module_has(name, embed[1])))
			continue;
		int r = dtl_sim_set_dtype(sim, t, DTL_STAGE_TRAINER, to, reason, fact, loc);
		if (r < 0)
			return r;
	}
	return 0;
}

/* axolotl's full fine-tuning without FSDP: module.to(float32) for every module whose name
 * holds "norm" and every embedding module, parameters and floating buffers alike
 * (rules/versions.yaml recipes: axolotl-embedding-upcast) */
static int axolotl_upcast(struct dtl_sim *sim)
{
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	enum dtl_strategy st = sim->rp.plan.strategy;

	if (!rc->axolotl_upcast || st == DTL_STRATEGY_FSDP1 || st == DTL_STRATEGY_FSDP2)
		return 0;
	return axolotl_cast_norms_embeddings(
	    sim, DTL_DTYPE_F32, 0,
	    "axolotl's full fine-tuning casts the norm and embedding modules to float32 "
	    "(_configure_embedding_dtypes; no adapter casts them back)",
	    "https://github.com/axolotl-ai-cloud/axolotl/blob/v0.19.0/src/axolotl/loaders/"
	    "model.py#L435-L490",
	    rc->axolotl_upcast_loc);
}

/* axolotl's LoRA / QLoRA on a quantized model: after prepare_model_for_kbit_training (the
 * kbit stage), the norm and embedding modules go back to torch_dtype, before the adapters
 * are added (rules/versions.yaml recipes: axolotl-kbit) */
static int axolotl_kbit_restore(struct dtl_sim *sim)
{
	const struct dtl_manifest *m = sim->manifest;
	enum dtl_dtype to = m->model.load_dtype;

	if (!m->recipe.axolotl_kbit_restore || m->model.load_mode != DTL_LOAD_DTYPE ||
	    !dtl_dtype_is_floating(to))
		return 0;
	return axolotl_cast_norms_embeddings(
	    sim, to, DTL_TF_ADAPTER | DTL_TF_QUANTIZED,
	    "axolotl casts the norm and embedding modules back to torch_dtype after "
	    "prepare_model_for_kbit_training (_configure_embedding_dtypes)",
	    "https://github.com/axolotl-ai-cloud/axolotl/blob/v0.19.0/src/axolotl/loaders/"
	    "model.py#L466-L490",
	    m->recipe.axolotl_kbit_restore_loc);
}

/* LLaMA-Factory's own casts (rules/versions.yaml recipes: llama-factory): upcast_layernorm
 * (1-D weights named like a norm, LAYERNORM_NAMES = {"norm", "ln"}) and, after
 * get_peft_model, every trainable parameter to float32 (adapter.py). */
static int recipe_casts(struct dtl_sim *sim)
{
	static const char *fact =
	    "https://github.com/hiyouga/LLaMA-Factory/blob/"
	    "ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30/src/llamafactory/model/adapter.py#L337-L349";
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	int r;

	for (uint32_t t = 0; rc->upcast_layernorm && t < sim->t.count; t++) {
		uint32_t decl = sim->t.decl[t];
		if (sim->t.kind[t] != DTL_KIND_PARAM || decl == DTL_NONE_INDEX ||
		    sim->manifest->tensors[decl].rank != 1 ||
		    !dtl_dtype_is_floating(sim->t.dtype[t]) || sim->t.dtype[t] == DTL_DTYPE_F32 ||
		    (!strstr(sim->t.name[t], "norm") && !strstr(sim->t.name[t], "ln")))
			continue;
		r = dtl_sim_set_dtype(sim, t, DTL_STAGE_TRAINER, DTL_DTYPE_F32,
		                      "LLaMA-Factory upcast_layernorm casts 1-D norm weights to "
		                      "float32",
		                      fact, rc->upcast_layernorm_loc);
		if (r < 0)
			return r;
	}
	if ((r = axolotl_upcast(sim)) < 0 || (r = axolotl_kbit_restore(sim)) < 0 ||
	    (r = lf_freeze_params(sim)) < 0)
		return r;
	for (uint32_t t = 0; rc->cast_trainable != DTL_DTYPE_NONE && t < sim->t.count; t++) {
		if (!(sim->t.flags[t] & DTL_TF_TRAINABLE) || sim->t.kind[t] != DTL_KIND_PARAM ||
		    sim->t.dtype[t] == rc->cast_trainable)
			continue;
		r = dtl_sim_set_dtype(sim, t, DTL_STAGE_TRAINER, rc->cast_trainable,
		                      "LLaMA-Factory casts every trainable param to float32 after "
		                      "get_peft_model (not with pure_bf16)",
		                      fact, rc->cast_trainable_loc);
		if (r < 0)
			return r;
	}
	return 0;
}

bool dtl_sim_hf_peft_fsdp(const struct dtl_sim *sim)
{
	const char *trainer = sim->rp.plan.trainer;
	bool peft = sim->manifest->adapter.present;

	if (sim->rp.plan.strategy != DTL_STRATEGY_FSDP1 || !trainer)
		return false;
	/* verl's get_fsdp_wrap_policy(is_lora=True) has the same lambda policy, in every
	 * release (rules/versions.yaml recipes: verl-fsdp-wrap-policy) */
	if (strcmp(trainer, "verl") != 0 &&
	    ((strcmp(trainer, "hf-trainer") != 0 && strncmp(trainer, "trl-", 4) != 0) ||
	     !dtl_sim_behavior(sim, DTL_B_HF_TRAINER_PEFT_FSDP_WRAP)))
		return false;
	for (uint32_t t = 0; t < sim->t.count && !peft; t++)
		peft = (sim->t.flags[t] & DTL_TF_ADAPTER) != 0;
	return peft;
}

/* OpenRLHF's Actor after get_peft_model with load_in_4bit (models/actor.py, rules/versions.yaml
 * recipes: openrlhf-actor): for each named module, a LoraLayer .to(bfloat16), a name with
 * "norm" .to(float32), lm_head / embed_tokens .to(bfloat16). nn.Module.to casts floating
 * tensors only: the packed 4-bit weights stay. */
static int openrlhf_casts(struct dtl_sim *sim)
{
	static const char *fact = "https://github.com/OpenRLHF/OpenRLHF/blob/v0.11.0/openrlhf/"
	                          "models/actor.py#L190-L198";
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	int r;

	for (uint32_t t = 0; rc->openrlhf_kbit_casts && t < sim->t.count; t++) {
		const char *name = sim->t.name[t];
		enum dtl_dtype d = sim->t.dtype[t];
		if (!dtl_dtype_is_floating(d) || (sim->t.flags[t] & DTL_TF_ALIAS) ||
		    sim->t.kind[t] == DTL_KIND_QUANT_STATE)
			continue;
		enum dtl_dtype to = DTL_DTYPE_NONE;
		const char *why = NULL;
		if (sim->t.flags[t] & DTL_TF_ADAPTER) {
			to = DTL_DTYPE_BF16;
			why = "OpenRLHF casts each LoRA layer to bfloat16 (load_in_4bit)";
		}
		if (module_has(name, "norm")) {
			to = DTL_DTYPE_F32;
			why = "OpenRLHF casts each module named like a norm to float32 "
			      "(load_in_4bit)";
		}
		if (module_has(name, "lm_head") || module_has(name, "embed_tokens")) {
			to = DTL_DTYPE_BF16;
			why = "OpenRLHF casts lm_head and embed_tokens to bfloat16 (load_in_4bit)";
		}
		if (to == DTL_DTYPE_NONE || to == d)
			continue;
		if ((r = dtl_sim_set_dtype(sim, t, DTL_STAGE_TRAINER, to, why, fact,
		                           rc->openrlhf_kbit_casts_loc)) < 0)
			return r;
	}
	return 0;
}

/* TRL's GRPO cast_lm_head_to_fp32 (0.25.0 on): lm_head.float() before accelerator.prepare;
 * a tied embedding shares the weight, so it becomes float32 too (rules/versions.yaml
 * trl-grpo-cast-lm-head-fp32). */
static int grpo_lm_head(struct dtl_sim *sim)
{
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	const char *trainer = sim->rp.plan.trainer;

	if (!rc->cast_lm_head_fp32 || !trainer || strcmp(trainer, "trl-grpo") != 0 ||
	    !dtl_sim_behavior(sim, DTL_B_TRL_CAST_LM_HEAD_FP32))
		return 0;
	uint32_t head = dtl_sim_find(sim, "lm_head.weight", 14);
	if (head == DTL_NONE_INDEX)
		return 0;
	if (sim->t.flags[head] & DTL_TF_ALIAS)
		head = sim->t.alias_of[head];
	if (sim->t.dtype[head] == DTL_DTYPE_F32 || !dtl_dtype_is_floating(sim->t.dtype[head]))
		return 0;
	return dtl_sim_set_dtype(sim, head, DTL_STAGE_TRAINER, DTL_DTYPE_F32,
	                         "TRL GRPO cast_lm_head_to_fp32: lm_head.float() (a tied embedding "
	                         "shares the weight)",
	                         "https://github.com/huggingface/trl/pull/4303",
	                         rc->cast_lm_head_fp32_loc);
}

/* The plan's model_cast: the user's model.to(dtype) (or .half(), .bfloat16(),
 * cast_model_to_dtype) before the trainer wraps the model: nn.Module.to casts every floating
 * parameter and buffer, frozen or not; non-floating ones (uint8 Params4bit) stay. */
static int model_cast(struct dtl_sim *sim)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	int r;

	if (plan->model_cast == DTL_DTYPE_NONE)
		return 0;
	const char *reason =
	    dtl_arena_sprintf(sim->arena,
	                      "the plan's model_cast: model.to(torch.%s) casts every "
	                      "floating param and buffer",
	                      dtl_dtype_name(plan->model_cast));
	if (!reason)
		return -ENOMEM;
	for (uint32_t t = 0; t < sim->t.count; t++) {
		enum dtl_dtype d = sim->t.dtype[t];
		if (!dtl_dtype_is_floating(d) || d == plan->model_cast ||
		    (sim->t.flags[t] & DTL_TF_ALIAS) || sim->t.kind[t] == DTL_KIND_QUANT_STATE)
			continue;
		r = dtl_sim_set_dtype(
		    sim, t, DTL_STAGE_TRAINER, plan->model_cast, reason,
		    "https://github.com/pytorch/pytorch/blob/v2.9.0/torch/nn/modules/module.py",
		    plan->model_cast_loc);
		if (r < 0)
			return r;
	}
	return 0;
}

/* the module path of a tensor holds word, in any case (name.lower() in Automodel) */
static bool module_has_nocase(const char *name, const char *word)
{
	const char *last = strrchr(name, '.');
	size_t n = strlen(word);

	for (const char *p = name; last && p + n <= last; p++)
		if (strncasecmp(p, word, n) == 0)
			return true;
	return false;
}

/* NeMo Automodel's freeze_config: apply_parameter_freezing sets requires_grad=False on every
 * parameter of a module whose name (lower-cased) holds one of the words of a flag that is on
 * (components/utils/model_utils.py#L231-L277 at v0.4.0). A module's parameters are those of
 * every module below it, so a parameter is frozen when its module path holds the word. */
static int automodel_freeze(struct dtl_sim *sim)
{
	static const struct {
		unsigned flag;
		const char *words[4];
	} parts[] = {{DTL_AM_FREEZE_VISION, {"vision", "visual", "image_encoder", NULL}},
	             {DTL_AM_FREEZE_AUDIO, {"audio", "audio_encoder", "speech", NULL}},
	             {DTL_AM_FREEZE_LANGUAGE, {"language", "text", "llm", NULL}}};
	const struct dtl_recipe *rc = &sim->manifest->recipe;
	int r;

	if (!rc->am_freeze)
		return 0;
	for (uint32_t t = 0; t < sim->t.count; t++) {
		const char *name = sim->t.name[t];
		if (sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		bool hit = false;
		for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]) && !hit; p++)
			for (size_t w = 0;
			     (rc->am_freeze & parts[p].flag) && parts[p].words[w] && !hit; w++)
				hit = module_has_nocase(name, parts[p].words[w]);
		if (!hit)
			continue;
		sim->t.flags[t] &= ~DTL_TF_TRAINABLE;
		r = dtl_sim_note(
		    sim, t, DTL_STAGE_TRAINER,
		    "NeMo Automodel's freeze_config freezes it (apply_parameter_freezing: "
		    "freeze_vision_tower, freeze_audio_tower, freeze_language_model)",
		    "https://github.com/NVIDIA-NeMo/Automodel/blob/v0.4.0/nemo_automodel/"
		    "components/utils/model_utils.py#L231-L277",
		    rc->am_freeze_loc);
		if (r < 0)
			return r;
	}
	return 0;
}

int dtl_stage_trainer(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	char v[32];
	int r;

	(void)error;
	if ((r = automodel_freeze(sim)) < 0 || (r = model_cast(sim)) < 0 ||
	    (r = recipe_casts(sim)) < 0 || (r = openrlhf_casts(sim)) < 0 ||
	    (r = grpo_lm_head(sim)) < 0)
		return r;
	if (!dtl_sim_trl_core_trainer(sim) ||
	    sim->manifest->quantization.method == DTL_QUANT_NONE ||
	    !dtl_sim_behavior(sim, DTL_B_TRL_QLORA_BF16_CAST))
		return 0;
	dtl_version_format(&plan->versions[DTL_FW_TRL], v, sizeof(v));
	const char *reason = dtl_arena_sprintf(sim->arena,
	                                       "trl %s casts every trainable param of a quantized "
	                                       "model to bfloat16 (%s)",
	                                       v, plan->trainer);
	bool skip_magnitude = dtl_sim_behavior(sim, DTL_B_TRL_QLORA_SKIPS_DORA_MAGNITUDE);
	for (uint32_t t = 0; t < sim->t.count; t++) {
		if (!(sim->t.flags[t] & DTL_TF_TRAINABLE) || sim->t.kind[t] != DTL_KIND_PARAM ||
		    sim->t.dtype[t] == DTL_DTYPE_BF16 ||
		    (skip_magnitude && strstr(sim->t.name[t], "lora_magnitude_vector")))
			continue;
		r = dtl_sim_set_dtype(sim, t, DTL_STAGE_TRAINER, DTL_DTYPE_BF16, reason,
		                      "https://github.com/huggingface/trl/pull/4577",
		                      plan->trainer_loc);
		if (r < 0)
			return r;
	}
	return 0;
}
