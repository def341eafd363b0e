/* SPDX-License-Identifier: MIT */
/*
 * accelerate's own FSDP2 plan (fsdp2_prepare_model), by version, when the plan names
 * accelerate (the plan does not otherwise say that accelerate launches the run):
 * - 1.6.0 - 1.12.x: after fully_shard, model.to(torch.float32) when mixed precision is on and
 *   the model's dtype (its first floating parameter's) is not float32: every floating
 *   parameter, frozen ones included, and every floating buffer;
 * - 1.14: the untied input embedding gets a fully_shard of its own, and a tail group
 *   fully_shard([final_norm, tail]) takes the output embedding, or, with tied embeddings, the
 *   input embedding (lm_head's shared weight is left to the root group: a tie split that torch
 *   >= 2.12 refuses, DT131);
 * - 1.15: tied embeddings go into one tail group [final_norm, input_embed, output_embed].
 * A PeftModel whose base model is "model" has no final_norm in its tail (tail_norm).
 * Sources: rules/versions.yaml accelerate-fsdp2-*.
 */
#include <errno.h>
#include <string.h>

#include "sim-private.h"

static const char *fact_cast = "https://github.com/huggingface/accelerate/blob/v1.12.0/src/"
                               "accelerate/utils/fsdp_utils.py#L708-L712";

static bool accelerate_named(const struct dtl_sim *sim)
{
	return !sim->rp.version_assumed[DTL_FW_ACCELERATE];
}

int dtl_sim_accelerate_fsdp2_cast(struct dtl_sim *sim)
{
	const struct dtl_resolved_plan *rp = &sim->rp;
	enum dtl_dtype model_dtype = DTL_DTYPE_NONE;
	char v[32];
	int r;

	if (!accelerate_named(sim) || rp->mode_dtype == DTL_DTYPE_NONE ||
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_MODEL_FP32_CAST))
		return 0;
	/* transformers' model.dtype: the first floating parameter's */
	for (size_t k = 0; k < sim->t.count && model_dtype == DTL_DTYPE_NONE; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] == DTL_KIND_PARAM && dtl_dtype_is_floating(sim->t.dtype[t]))
			model_dtype = sim->t.dtype[t];
	}
	if (model_dtype == DTL_DTYPE_F32 || model_dtype == DTL_DTYPE_NONE)
		return 0;
	dtl_version_format(&rp->plan.versions[DTL_FW_ACCELERATE], v, sizeof(v));
	const char *reason = dtl_arena_sprintf(sim->arena,
	                                       "accelerate %s casts the whole model to float32 "
	                                       "after fully_shard (model.to(torch.float32): frozen "
	                                       "params and buffers included)",
	                                       v);
	if (!reason)
		return -ENOMEM;
	for (uint32_t t = 0; t < sim->t.count; t++) {
		enum dtl_dtype d = sim->t.dtype[t];
		if (!dtl_dtype_is_floating(d) || d == DTL_DTYPE_F32 ||
		    (sim->t.flags[t] & DTL_TF_ALIAS) || sim->t.kind[t] == DTL_KIND_QUANT_STATE)
			continue;
		r = dtl_sim_set_dtype(sim, t, DTL_STAGE_ENGINE, DTL_DTYPE_F32, reason, fact_cast,
		                      rp->plan.version_locs[DTL_FW_ACCELERATE]);
		if (r < 0)
			return r;
	}
	return 0;
}

static uint32_t module_named(const struct dtl_sim *sim, const char *path, size_t len)
{
	int64_t m = dtl_module_at(sim, path, len);
	return m < 0 ? DTL_NONE_INDEX : (uint32_t)m;
}

/* The module a tied name's weight belongs to ("lm_head.weight" -> lm_head). */
static uint32_t module_of_name(const struct dtl_sim *sim, const struct dtl_pattern *name)
{
	const char *dot = memrchr(name->text, '.', name->len);
	return dot ? module_named(sim, name->text, (size_t)(dot - name->text)) : DTL_NONE_INDEX;
}

/* accelerate's _find_final_norm: the last direct child of the base model whose class, or else
 * name, says norm. */
static uint32_t final_norm(const struct dtl_sim *sim, uint32_t base)
{
	uint32_t found = DTL_NONE_INDEX;
	for (uint32_t c = sim->modules[base].first_child; c != DTL_NONE_INDEX;
	     c = sim->modules[c].next_sibling) {
		const struct dtl_module *m = &sim->modules[c];
		const char *leaf = memrchr(m->path, '.', m->path_len);
		leaf = leaf ? leaf + 1 : m->path;
		if ((m->class_name && strstr(m->class_name, "Norm")) ||
		    (!m->class_name &&
		     memmem(leaf, m->path_len - (size_t)(leaf - m->path), "norm", 4)))
			found = c;
	}
	return found;
}

/* The final norm _find_final_norm takes into the tail group: among the children of
 * getattr(model, model.base_model_prefix), the top-level module that holds the input
 * embedding (model, gpt_neox); none when the embedding is the root's own child (a bare
 * LlamaModel has no attribute "model"). So none for a vision-language model, whose base
 * model holds language_model, vision_tower and the projector; and none under PEFT when the
 * prefix is "model": PeftModel's __getattr__ passes it to LoraModel, whose own attribute
 * "model" is the causal LM (another prefix, gpt_neox, reaches the base model). The real
 * prepare shows all three: tests/oracle/real_worker.py units, DISAGREEMENTS.md D56, D57. */
static uint32_t tail_norm(const struct dtl_sim *sim, uint32_t input)
{
	uint32_t base = sim->modules[input].parent;

	if (base == 0 || base == DTL_NONE_INDEX)
		return DTL_NONE_INDEX;
	while (sim->modules[base].parent != 0 && sim->modules[base].parent != DTL_NONE_INDEX)
		base = sim->modules[base].parent;
	const struct dtl_module *b = &sim->modules[base];
	if (sim->manifest->adapter.present && b->path_len == 5 && memcmp(b->path, "model", 5) == 0)
		return DTL_NONE_INDEX;
	return final_norm(sim, base);
}

int dtl_sim_accelerate_fsdp2_carve(struct dtl_sim *sim, uint8_t *carve, struct dtl_pattern *why)
{
	const struct dtl_manifest *m = sim->manifest;
	uint32_t input = DTL_NONE_INDEX, output = DTL_NONE_INDEX;
	bool tied = false;

	if (!accelerate_named(sim) ||
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_CARVE_EMBED_TAIL))
		return 0;
	/* the embeddings: the tied pair when the model ties them, else by their usual names */
	for (size_t g = 0; g < m->model.tied_count && !tied; g++) {
		const struct dtl_tied_group *tg = &m->model.tied[g];
		for (size_t k = 0; k < tg->count; k++) {
			uint32_t mod = module_of_name(sim, &tg->names[k]);
			const struct dtl_module *md =
			    mod == DTL_NONE_INDEX ? NULL : &sim->modules[mod];
			if (!md)
				continue;
			if (md->parent == 0 && output == DTL_NONE_INDEX)
				output = mod; /* lm_head sits at the top */
			else if (input == DTL_NONE_INDEX)
				input = mod;
		}
		tied = input != DTL_NONE_INDEX && output != DTL_NONE_INDEX;
	}
	if (!tied) {
		input = output = DTL_NONE_INDEX;
		for (uint32_t mod = 1; mod < sim->module_count; mod++) {
			const struct dtl_module *md = &sim->modules[mod];
			if (input == DTL_NONE_INDEX && md->path_len >= 12 &&
			    memcmp(md->path + md->path_len - 12, "embed_tokens", 12) == 0)
				input = mod;
			if (output == DTL_NONE_INDEX && md->path_len == 7 &&
			    memcmp(md->path, "lm_head", 7) == 0)
				output = mod;
		}
	}
	if (input == DTL_NONE_INDEX)
		return 0;
	uint32_t norm = tail_norm(sim, input);
	bool tied_tail = tied && dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_TIED_TAIL);
	char v[32];
	dtl_version_format(&sim->rp.plan.versions[DTL_FW_ACCELERATE], v, sizeof(v));
	why->text =
	    dtl_arena_sprintf(sim->arena,
	                      "accelerate %s's fsdp2_prepare_model: fully_shard(input "
	                      "embedding) and fully_shard([final_norm, %s])",
	                      v,
	                      !tied       ? "output embedding"
	                      : tied_tail ? "input embedding, output embedding"
	                                  : "input embedding (tied: lm_head stays in the root)");
	if (!why->text)
		return -ENOMEM;
	why->len = (uint32_t)strlen(why->text);
	why->loc = sim->rp.plan.version_locs[DTL_FW_ACCELERATE];
	/* 1: a group of its own; 2: the tail group */
	if (!tied)
		carve[input] = 1;
	if (norm != DTL_NONE_INDEX)
		carve[norm] = 2;
	if (tied)
		carve[input] = 2;
	if (output != DTL_NONE_INDEX && (!tied || tied_tail))
		carve[output] = 2;
	return 0;
}
