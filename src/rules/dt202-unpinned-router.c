/* SPDX-License-Identifier: MIT */
/* DT202 unpinned-router: an MoE router kept in float32 computes its logits in 16-bit and nothing
 * pins it. */

#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* DT202 — router logits computed in 16-bit by a router that does not upcast, with no pin. */
/* The dtype a tensor's manifest entry gives it (docs/design.md §3: its own, else
 * model.checkpoint_dtype, else float32); NONE for a tensor with no entry. */
static enum dtl_dtype declared(const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_manifest *m = sim->manifest;
	uint32_t decl = sim->t.decl[t];

	if (decl == DTL_NONE_INDEX)
		return DTL_DTYPE_NONE;
	return m->tensors[decl].dtype != DTL_DTYPE_NONE      ? m->tensors[decl].dtype
	       : m->model.checkpoint_dtype != DTL_DTYPE_NONE ? m->model.checkpoint_dtype
	                                                     : DTL_DTYPE_F32;
}

/* The model's dtype: model.checkpoint_dtype, else the dtype most of its parameters are declared
 * in. */
static enum dtl_dtype model_dtype(const struct dtl_sim *sim)
{
	size_t count[DTL_DTYPE_COUNT] = {0}, best = 0;
	enum dtl_dtype d = DTL_DTYPE_NONE;

	if (sim->manifest->model.checkpoint_dtype != DTL_DTYPE_NONE)
		return sim->manifest->model.checkpoint_dtype;
	for (uint32_t t = 0; t < sim->t.count; t++)
		if (sim->t.kind[t] == DTL_KIND_PARAM && declared(sim, t) != DTL_DTYPE_NONE)
			count[declared(sim, t)]++;
	for (int i = 0; i < DTL_DTYPE_COUNT; i++)
		if (count[i] > best && dtl_dtype_is_floating((enum dtl_dtype)i)) {
			best = count[i];
			d = (enum dtl_dtype)i;
		}
	return d;
}

/*
 * DT202 — a router the model keeps in float32 (its checkpoint or live model holds it in float32
 * beside 16-bit weights) that the plan makes compute in 16-bit, with no pin that would say so
 * (DT201 reports pinned ones). Stock MoE checkpoints store their routers in the model dtype and
 * their code computes the logits in it (Mixtral, Qwen-MoE, OLMoE, gpt-oss): nothing to report.
 */
static int dt202_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	enum dtl_dtype model = DTL_DTYPE_NONE;
	bool model_known = false;
	struct dtl_rules_grouper g;

	dtl_rules_grouper_init(&g, c);
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_ROUTER) || (sim->t.flags[t] & DTL_TF_PINNED) ||
		    !dtl_dtype_is_half(sim->t.compute_dtype[t]) ||
		    strcmp(dtl_rules_leaf(sim, t), "weight") != 0)
			continue;
		if (declared(sim, t) != DTL_DTYPE_F32)
			continue;
		if (!model_known) {
			model = model_dtype(sim);
			model_known = true;
		}
		if (!dtl_dtype_is_half(model))
			continue; /* a float32 model: the router is cast with everything else */
		const struct dtl_module *md = &sim->modules[sim->t.module[t]];
		const struct dtl_router_rule *rr = dtl_sim_router_rule(sim, sim->t.module[t]);
		if (rr && rr->upcasts)
			continue; /* logits from fp32 operands whatever the storage */
		const char *key = rr ? rr->path.text : "heuristic";
		struct dtl_finding *f = dtl_rules_grouper_get(&g, key);
		if (f) {
			if (dtl_rules_grouper_more(&g, f, t) < 0)
				return -ENOMEM;
			continue;
		}
		f = dtl_check_report(
		    c, c->rule->severity, dtl_sim_tensor_loc(sim, t),
		    "router '%.*s' is kept in float32 beside %s weights but computes "
		    "its logits in %s: no keep-in-fp32 entry or pin covers it",
		    (int)md->path_len, md->path, dtl_dtype_name(model),
		    dtl_dtype_name(sim->t.compute_dtype[t]));
		if (!f)
			return -ENOMEM;
		f->effect =
		    rr && rr->origin == DTL_FROM_PROFILE
		        ? "the router's matmul runs in the hidden dtype (its forward does not "
		          "upcast): expert choice is made from 16-bit logits"
		        : "expert choice is made from 16-bit logits (router found by name; "
		          "dtypelint assumes its forward does not upcast)";
		uint32_t leaf_at = md->path_len;
		while (leaf_at > 0 && md->path[leaf_at - 1] != '.')
			leaf_at--;
		f->fix = dtl_arena_sprintf(
		    c->arena,
		    "pin it: add '%.*s' to model.keep_in_fp32_strict (transformers keeps it fp32 "
		    "at "
		    "load), and under FSDP shard it in an fp32 group; under ZeRO-3 zero.Init "
		    "casts it anyway (DeepSpeed #7747)",
		    (int)(md->path_len - leaf_at), md->path + leaf_at);
		if (dtl_rules_grouper_add(&g, key, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return dtl_rules_grouper_finish(&g);
}

static int dt202_propose_fixes(const struct dtl_fix_request *req)
{
	const char *mod = dtl_rules_fix_module(req);
	if (!mod)
		return 0;
	const char *leaf = strrchr(mod, '.') ? strrchr(mod, '.') + 1 : mod;
	return dtl_rules_propose(req, DTL_FIX_KEEP_STRICT_ADD, leaf, 0, 1,
	                         "pin the router: add '%s' to model.keep_in_fp32_strict", leaf)
	           ? 0
	           : -ENOMEM;
}

DTL_RULE(dt202) = {
    .id = "DT202",
    .name = "unpinned-router",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "an MoE router kept in float32 computes its logits in 16-bit and nothing pins it",
    .explanation =
        "Routers decide which experts see each token. A router whose checkpoint (or live "
        "model) keeps it in float32 beside 16-bit weights was meant to compute in float32; "
        "when the plan casts it (from_pretrained's dtype, zero.Init, a blanket cast, FSDP "
        "param_dtype) and its forward runs the matmul in the weight's dtype (Mixtral, "
        "Qwen-MoE, OLMoE, GraniteMoE, gpt-oss, Llama 4: the softmax or sigmoid may be fp32, "
        "the logits are not), expert choice is made from 16-bit logits. Stock checkpoints "
        "that store their routers in the model dtype are not reported: their code computes "
        "the logits in it by design. Routers that upcast both operands (DeepSeek-V2/V3, "
        "GLM4-MoE) are exempt; pinned routers are DT201's. Nothing raises; load balancing "
        "and expert choice degrade.",
    .example = "model: {architecture: MixtralForCausalLM}\n"
               "training: {strategy: fsdp2, fsdp: {param_dtype: bfloat16}}",
    .fix = "Add the router to keep_in_fp32_strict and shard it in a float32 FSDP group; under "
           "ZeRO-3, zero.Init casts it anyway.",
    .facts =
        "https://github.com/huggingface/transformers/blob/f5a9ec512fa9fe69e51ea0c6388c68d50de567b3/"
        "src/transformers/models/deepseek_v3/modeling_deepseek_v3.py "
        "https://github.com/huggingface/transformers/blob/040ba146759afc625c77f49d04982bb54873995f/"
        "src/transformers/modeling_utils.py; rules/architectures/README.md",
    .check = dt202_check,
    .propose_fixes = dt202_propose_fixes,
};
