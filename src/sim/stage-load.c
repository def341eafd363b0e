/* SPDX-License-Identifier: MIT */
/*
 * The load stage: where each tensor's dtype comes from. With load_dtype as-is (the default) the
 * manifest's dtypes are the dtypes in memory; otherwise they are the checkpoint's and
 * from_pretrained's dtype resolution is replayed.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/core/glob.h"
#include "sim-private.h"
#include "keep-set.h"

static const char *fact_resolve =
    "https://github.com/huggingface/transformers/blob/040ba146759afc625c77f49d04982bb54873995f/src/"
    "transformers/modeling_utils.py";
static const char *fact_final =
    "https://github.com/huggingface/transformers/blob/040ba146759afc625c77f49d04982bb54873995f/src/"
    "transformers/modeling_utils.py";

static const char *fact_towers = "https://github.com/NVIDIA-NeMo/Automodel/issues/2017";

static enum dtl_dtype first_floating(const struct dtl_sim *sim)
{
	for (size_t i = 0; i < sim->t.count; i++)
		if (dtl_dtype_is_floating(sim->t.dtype[i]))
			return sim->t.dtype[i];
	return DTL_DTYPE_F32;
}

/* The three reasons a declared dtype has, per dtype: formatted once per run (into
 * sim->declared_reason), not per tensor. */
enum declared_how { DECLARED, FROM_CHECKPOINT_DTYPE, DEFAULTED };

static const char *format_reason(struct dtl_sim *sim, enum declared_how how, enum dtl_dtype d)
{
	const char *name = dtl_dtype_name(d);
	switch (how) {
	case DECLARED:
		return dtl_arena_sprintf(sim->arena, "declared %s", name);
	case FROM_CHECKPOINT_DTYPE:
		return dtl_arena_sprintf(sim->arena, "%s from model.checkpoint_dtype", name);
	default:
		return dtl_arena_sprintf(sim->arena,
		                         "%s: no dtype and no model.checkpoint_dtype (torch's "
		                         "default dtype)",
		                         name);
	}
}

/* How a declared tensor's entry gives its dtype (dtl_sim_declared_dtype), and where. */
static enum declared_how declared_how(const struct dtl_sim *sim, const struct dtl_tensor_decl *t,
                                      struct dtl_loc *loc)
{
	const struct dtl_manifest *m = sim->manifest;

	if (t->dtype != DTL_DTYPE_NONE) {
		*loc = t->dtype_loc;
		return DECLARED;
	}
	if (m->model.checkpoint_dtype != DTL_DTYPE_NONE) {
		*loc = m->model.checkpoint_dtype_loc;
		return FROM_CHECKPOINT_DTYPE;
	}
	*loc = t->loc;
	return DEFAULTED;
}

bool dtl_sim_declared_step(const struct dtl_sim *sim, uint32_t tensor, struct dtl_event *out)
{
	uint32_t decl = sim->t.decl[tensor];

	if (decl == DTL_NONE_INDEX)
		return false;
	const struct dtl_tensor_decl *t = &sim->manifest->tensors[decl];
	struct dtl_loc loc;
	enum declared_how how = declared_how(sim, t, &loc);
	enum dtl_dtype d = dtl_sim_declared_dtype(sim->manifest, t);
	*out = (struct dtl_event){.tensor = tensor,
	                          .prev = DTL_NONE_INDEX,
	                          .stage = DTL_STAGE_DECLARE,
	                          .from = (uint8_t)d,
	                          .to = (uint8_t)d,
	                          .reason = t->dtype_reason ? t->dtype_reason
	                                                    : sim->declared_reason[how][d],
	                          .loc = loc};
	return true;
}

/* The first step of every tensor: a declared tensor's is read from its entry when asked
 * (dtl_sim_declared_step), only its reason is formatted here, once per kind and dtype; a tied
 * alias the checkpoint leaves out has its step stored. */
static int declare(struct dtl_sim *sim, uint32_t i)
{
	uint32_t decl = sim->t.decl[i];

	if (decl == DTL_NONE_INDEX) {
		uint32_t of = sim->t.alias_of[i];
		const char *reason = dtl_arena_sprintf(
		    sim->arena, "%s: tied to '%s', the same Parameter",
		    dtl_dtype_name(sim->t.dtype[i]), of == DTL_NONE_INDEX ? "?" : sim->t.name[of]);
		return dtl_sim_note(sim, i, DTL_STAGE_DECLARE, reason,
		                    "https://github.com/huggingface/transformers/blob/"
		                    "040ba146759afc625c77f49d04982bb54873995f/src/transformers/"
		                    "modeling_utils.py (tied weights)",
		                    dtl_sim_tensor_loc(sim, i));
	}
	const struct dtl_tensor_decl *t = &sim->manifest->tensors[decl];
	struct dtl_loc loc;
	enum declared_how how = declared_how(sim, t, &loc);
	enum dtl_dtype d = dtl_sim_declared_dtype(sim->manifest, t);
	if (!sim->declared_reason[how][d] &&
	    !(sim->declared_reason[how][d] = format_reason(sim, how, d)))
		return -ENOMEM;
	return 0;
}

enum dtl_keep_matcher dtl_sim_keep_matcher(const struct dtl_sim *sim)
{
	/* 4.50.x searched re.escape'd entries: a substring, as v5's glob without its '*' */
	if (dtl_sim_behavior(sim, DTL_B_HF_KEEP_MATCH_SUBSTRING) ||
	    dtl_sim_behavior(sim, DTL_B_HF_KEEP_450_WINDOW))
		return DTL_KEEP_SUBSTRING;
	if (dtl_sim_behavior(sim, DTL_B_HF_KEEP_MATCH_REGEX))
		return DTL_KEEP_DOT_REGEX;
	return DTL_KEEP_COMPONENT;
}

bool dtl_sim_plain_keep_under_bf16(const struct dtl_sim *sim)
{
	return dtl_sim_behavior(sim, DTL_B_HF_KEEP_PLAIN_UNDER_BF16) ||
	       dtl_sim_behavior(sim, DTL_B_HF_KEEP_450_WINDOW);
}

/* The first entry of a keep-in-fp32 list that matches the tensor name, or NULL. */
const struct dtl_pattern *dtl_sim_keep_entry(const struct dtl_sim *sim,
                                             const struct dtl_keep_set *set, uint32_t tensor)
{
	uint32_t k = dtl_keep_set_first(set, sim->t.name[tensor], sim->t.name_len[tensor]);
	return k == DTL_NONE_INDEX ? NULL : &set->entries[k];
}

/* Which fp32 buffers are on purpose: the profile's list, else the well-known names. */
const struct dtl_buffer_info *dtl_sim_buffer_info(const struct dtl_sim *sim, uint32_t tensor)
{
	static const struct dtl_buffer_info known[] = {
	    /* RoPE inv_freq is explicitly fp32 and its forward upcasts
	     * (https://github.com/huggingface/transformers/blob/v4.57.0/src/transformers/modeling_rope_utils.py);
	     * e_score_correction_bias is added to fp32 scores
	     * (rules/architectures/deepseek_v3.yaml) */
	    {.name = {.text = "**.inv_freq", .len = 11}, .self_casting = true},
	    {.name = {.text = "**.e_score_correction_bias", .len = 26},
	     .persistent = true,
	     .self_casting = true},
	};
	static const char clone[] = "original_inv_freq";
	const struct dtl_profile *p = sim->model.profile;
	const char *name = sim->t.name[tensor];
	uint32_t len = sim->t.name_len[tensor];

	/* transformers 5's copy of inv_freq, a buffer of the same module: every cast that
	 * reaches it reaches inv_freq, whose findings say it; forward reads inv_freq only
	 * (dynamic RoPE copies it back), so it is neither pinned nor reported on its own.
	 * Gemma 3's are per layer type: {layer_type}_original_inv_freq
	 * (rules/versions.yaml transformers-gemma3-rotary-per-layer-type) */
	static const struct dtl_buffer_info copy = {.self_casting = true, .unread = true};
	if (len >= sizeof(clone) &&
	    memcmp(name + len - (sizeof(clone) - 1), clone, sizeof(clone) - 1) == 0 &&
	    (name[len - sizeof(clone)] == '.' || name[len - sizeof(clone)] == '_'))
		return &copy;
	if (p) {
		for (size_t i = 0; i < p->fp32_buffer_count; i++)
			if (dtl_glob_match(p->fp32_buffers[i].name.text,
			                   p->fp32_buffers[i].name.len, name, len))
				return &p->fp32_buffers[i];
		return NULL;
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (dtl_glob_match(known[i].name.text, known[i].name.len, name, len))
			return &known[i];
	return NULL;
}

/* A float32 buffer on purpose, which the later stages must keep float32 */
static bool on_purpose(const struct dtl_sim *sim, uint32_t tensor)
{
	const struct dtl_buffer_info *info = dtl_sim_buffer_info(sim, tensor);
	return info && !info->unread;
}

static const char *keep_reason(struct dtl_sim *sim, const char *list, const struct dtl_pattern *e)
{
	return dtl_arena_sprintf(sim->arena, "%s entry '%s' matches (as %s)", list, e->text,
	                         dtl_keep_matcher_description(dtl_sim_keep_matcher(sim)));
}

/* Pins: tensors the model wants in float32 (keep-in-fp32 matches that are float32, fp32
 * buffers on purpose). With load_dtype as-is nothing is replayed, but the pins still tell the
 * later stages what must stay float32. */
static int pin(struct dtl_sim *sim, uint32_t i, const char *reason, struct dtl_loc loc)
{
	sim->t.flags[i] |= DTL_TF_PINNED;
	return dtl_sim_note(sim, i, DTL_STAGE_LOAD, reason,
	                    "https://github.com/huggingface/transformers/pull/39058", loc);
}

static int pin_as_is(struct dtl_sim *sim)
{
	const struct dtl_model_view *v = &sim->model;
	int r;

	for (uint32_t i = 0; i < sim->t.count; i++) {
		const struct dtl_pattern *e;
		if (sim->t.dtype[i] != DTL_DTYPE_F32 || (sim->t.flags[i] & DTL_TF_ALIAS))
			continue;
		if ((e = dtl_sim_keep_entry(sim, v->strict_set, i)))
			r = pin(sim, i, keep_reason(sim, "keep_in_fp32_strict", e), e->loc);
		else if ((e = dtl_sim_keep_entry(sim, v->keep_set, i)))
			r = pin(sim, i, keep_reason(sim, "keep_in_fp32", e), e->loc);
		else if (sim->t.kind[i] == DTL_KIND_BUFFER && on_purpose(sim, i))
			r = pin(sim, i, "a float32 buffer on purpose", dtl_sim_tensor_loc(sim, i));
		else
			continue;
		if (r < 0)
			return r;
	}
	return 0;
}

/* NeMo Automodel up to 0.4.0 builds its own Gemma 4 under the requested default dtype after
 * setting it on the top-level config alone; transformers' Gemma4Model builds each tower with
 * AutoModel.from_config(sub_config), which takes the sub-config's own dtype when it names one
 * (rules/versions.yaml automodel-subconfig-dtype-not-propagated, NVIDIA-NeMo/Automodel#2017).
 * The towers are the profile's subconfig_towers (rules/architectures/gemma4.yaml); what is
 * outside them (embed_vision, embed_audio, lm_head) takes the requested dtype. Only Gemma 4,
 * of the models Automodel's registry builds with model_cls(hf_config), was read; its MoE text
 * model is Automodel's own. */
static bool automodel_subconfig_towers(const struct dtl_sim *sim)
{
	const struct dtl_manifest *m = sim->manifest;
	const struct dtl_profile *p = sim->model.profile;

	return m->recipe.kind && strcmp(m->recipe.kind, "nemo-automodel") == 0 && p &&
	       p->tower_count && strcmp(p->architecture, "Gemma4ForConditionalGeneration") == 0 &&
	       !m->model.text_moe_block &&
	       dtl_sim_behavior(sim, DTL_B_AUTOMODEL_SUBCONFIG_DTYPE_NOT_PROPAGATED);
}

/* the dtype the sub-config of name's tower names, or NONE (not in a tower, or no dtype) */
static enum dtl_dtype tower_dtype(const struct dtl_sim *sim, const char *name, uint32_t len)
{
	const struct dtl_profile *p = sim->model.profile;

	for (size_t k = 0; k < p->tower_count; k++) {
		const struct dtl_subconfig_tower *t = &p->towers[k];
		if (len > t->module_len && name[t->module_len] == '.' &&
		    memcmp(name, t->module, t->module_len) == 0)
			return sim->manifest->model.subconfig_dtype[t->config];
	}
	return DTL_DTYPE_NONE;
}

/* The dtype from_pretrained(dtype=None) loads in up to transformers 4.57.6: torch's default,
 * float32, whatever the checkpoint holds (load_state_dict's copy_ keeps the model's dtype),
 * but float16 under bitsandbytes, whose quantizers override dtype=None (update_dtype;
 * transformers-bnb-default-fp16) for the layers they do not quantize. */
static enum dtl_dtype none_target(struct dtl_sim *sim, const char **how)
{
	const struct dtl_quantization *q = &sim->manifest->quantization;
	bool bnb = q->method == DTL_QUANT_BNB_4BIT || q->method == DTL_QUANT_BNB_8BIT;

	if (bnb && dtl_sim_behavior(sim, DTL_B_HF_BNB_DEFAULT_FP16)) {
		*how = "from_pretrained(dtype=None) under bitsandbytes: its quantizer sets float16";
		return DTL_DTYPE_F16;
	}
	*how = "from_pretrained(dtype=None) builds the model in float32";
	return DTL_DTYPE_F32;
}

/* Keeps what the model is built under for the rules (sim->load): the key that named the dtype,
 * the checkpoint's dtype when "auto" resolved it from there. */
static void record_request(struct dtl_sim *sim, enum dtl_load_mode mode, enum dtl_dtype target,
                           struct dtl_loc mode_loc)
{
	const struct dtl_model_info *model = &sim->manifest->model;
	bool from_checkpoint = mode == DTL_LOAD_AUTO && model->checkpoint_dtype != DTL_DTYPE_NONE &&
	                       model->checkpoint_dtype_loc.line;

	sim->load.mode = mode;
	sim->load.target = target;
	sim->load.loc = from_checkpoint ? model->checkpoint_dtype_loc : mode_loc;
	if (!sim->load.loc.line)
		sim->load.loc = model->loc;
}

int dtl_stage_load(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_manifest *m = sim->manifest;
	const struct dtl_model_view *v = &sim->model;
	enum dtl_dtype target;
	const char *how;
	int r;

	(void)error;
	for (size_t i = 0; i < sim->t.count; i++)
		if ((r = declare(sim, (uint32_t)i)) < 0)
			return r;
	enum dtl_load_mode mode = m->model.load_mode;
	struct dtl_loc mode_loc = m->model.load_dtype_loc;
	/* a recipe of TrainingArguments alone is TRL's when the plan names a TRL trainer:
	 * the trl/scripts (sft, dpo, grpo, kto, reward) pass model_init_kwargs={dtype:
	 * ModelConfig.dtype} all the same (tests/oracle/DISAGREEMENTS.md D21) */
	bool unset = m->recipe.trl_dtype_unset ||
	             (m->recipe.args_dtype_unset && dtl_sim_trl_core_trainer(sim));
	bool trl_float32 = unset && dtl_sim_behavior(sim, DTL_B_TRL_DTYPE_FLOAT32_DEFAULT);
	if (trl_float32) {
		/* TRL >= 0.27 passes dtype=torch.float32 when the recipe names none */
		mode = DTL_LOAD_DTYPE;
		mode_loc = m->recipe.trl_dtype_unset_loc;
	}
	/* transformers 5 reads dtype=None as "auto" (transformers-v5-dtype-none-auto) */
	bool none_is_auto =
	    mode == DTL_LOAD_NONE && dtl_sim_behavior(sim, DTL_B_HF_V5_DTYPE_NONE_AUTO);
	if (none_is_auto)
		mode = DTL_LOAD_AUTO;
	switch (mode) {
	case DTL_LOAD_AS_IS:
		return pin_as_is(sim);
	case DTL_LOAD_NONE:
		target = none_target(sim, &how);
		break;
	case DTL_LOAD_AUTO:
		/* "auto": config dtype, else the first floating tensor of the checkpoint */
		target = m->model.checkpoint_dtype != DTL_DTYPE_NONE ? m->model.checkpoint_dtype
		                                                     : first_floating(sim);
		how = dtl_arena_sprintf(sim->arena, "from_pretrained(dtype=%s) resolves %s",
		                        none_is_auto ? "None, \"auto\" from transformers 5.0"
		                                     : "\"auto\"",
		                        dtl_dtype_name(target));
		break;
	case DTL_LOAD_DTYPE:
	default:
		target = trl_float32 ? DTL_DTYPE_F32 : m->model.load_dtype;
		how = trl_float32 ? "TRL >= 0.27 loads a recipe that names no dtype in float32 "
		                    "(from_pretrained(dtype=torch.float32))"
		                  : dtl_arena_sprintf(sim->arena, "from_pretrained(dtype=%s)",
		                                      dtl_dtype_torch_name(target));
		break;
	}
	record_request(sim, mode, target, mode_loc);
	/* the plain list applies only under float16 (and, in the 4.50 and v5 regression
	 * windows, under bfloat16 too: rules/versions.yaml transformers-keep-450-window and
	 * transformers-v5-plain-keep-under-bf16); the strict list under float16 and bfloat16 */
	bool plain = target == DTL_DTYPE_F16 ||
	             (target == DTL_DTYPE_BF16 && dtl_sim_plain_keep_under_bf16(sim));
	bool strict = dtl_sim_behavior(sim, DTL_B_HF_KEEP_STRICT) &&
	              (target == DTL_DTYPE_F16 || target == DTL_DTYPE_BF16);
	bool towers = mode == DTL_LOAD_DTYPE && !trl_float32 && automodel_subconfig_towers(sim);
	const char *tower_why[DTL_DTYPE_COUNT] = {0};
	for (uint32_t i = 0; i < sim->t.count; i++) {
		enum dtl_dtype d = sim->t.dtype[i];
		const struct dtl_pattern *e = NULL;
		const char *list = NULL;
		/* non-floating and float8_e4m3fn tensors are not cast; a pre-quantized
		 * weight and its quant state keep the dtype they are stored in (bitsandbytes
		 * Params4bit.from_prequantized: quant_storage = data.dtype) */
		if (!dtl_dtype_is_floating(d) || d == DTL_DTYPE_F8_E4M3FN ||
		    (sim->t.flags[i] & (DTL_TF_ALIAS | DTL_TF_PREQUANTIZED | DTL_TF_QUANT_STATE)))
			continue;
		bool in_checkpoint =
		    sim->t.kind[i] == DTL_KIND_PARAM || (sim->t.flags[i] & DTL_TF_PERSISTENT);
		if (strict && in_checkpoint && (e = dtl_sim_keep_entry(sim, v->strict_set, i)))
			list = "keep_in_fp32_strict";
		else if (plain && in_checkpoint && (e = dtl_sim_keep_entry(sim, v->keep_set, i)))
			list = "keep_in_fp32";
		if (e) {
			const char *reason =
			    dtl_arena_sprintf(sim->arena, "%s: float32", keep_reason(sim, list, e));
			sim->t.flags[i] |= DTL_TF_PINNED;
			r = d == DTL_DTYPE_F32
			        ? dtl_sim_note(sim, i, DTL_STAGE_LOAD, reason, fact_final, e->loc)
			        : dtl_sim_set_dtype(sim, i, DTL_STAGE_LOAD, DTL_DTYPE_F32, reason,
			                            fact_final, e->loc);
			if (r < 0)
				return r;
			continue;
		}
		/* non-persistent buffers are not in the checkpoint and keep the dtype they
		 * were created with: the load dtype for one created under the default dtype
		 * (from_pretrained builds the model under it) */
		if (!in_checkpoint && dtl_sim_created_in_load_dtype(sim, i)) {
			if (d != target &&
			    (r = dtl_sim_set_dtype(sim, i, DTL_STAGE_LOAD, target,
			                           dtl_arena_sprintf(sim->arena,
			                                             "%s: created under the "
			                                             "default dtype it sets",
			                                             how),
			                           fact_final, mode_loc)) < 0)
				return r;
			continue;
		}
		if (!in_checkpoint) {
			if (d == DTL_DTYPE_F32 && on_purpose(sim, i))
				sim->t.flags[i] |= DTL_TF_PINNED;
			continue;
		}
		enum dtl_dtype tower =
		    towers ? tower_dtype(sim, sim->t.name[i], sim->t.name_len[i]) : DTL_DTYPE_NONE;
		if (tower != DTL_DTYPE_NONE && tower != target) {
			/* one reason per dtype, not one per tensor */
			if (!tower_why[tower] && !(tower_why[tower] = dtl_arena_sprintf(
			                               sim->arena,
			                               "NeMo Automodel <= 0.4.0 sets torch_dtype "
			                               "on the top-level config "
			                               "alone: AutoModel.from_config(sub_config) "
			                               "builds this tower in the "
			                               "%s its sub-config names",
			                               dtl_dtype_name(tower))))
				return -ENOMEM;
			const char *why = tower_why[tower];
			r = d == tower
			        ? dtl_sim_note(sim, i, DTL_STAGE_LOAD, why, fact_towers, mode_loc)
			        : dtl_sim_set_dtype(sim, i, DTL_STAGE_LOAD, tower, why, fact_towers,
			                            mode_loc);
			if (r < 0)
				return r;
			continue;
		}
		if (d == target)
			continue;
		r = dtl_sim_set_dtype(sim, i, DTL_STAGE_LOAD, target, how,
		                      mode == DTL_LOAD_AUTO ? fact_resolve : fact_final, mode_loc);
		if (r < 0)
			return r;
	}
	return 0;
}
