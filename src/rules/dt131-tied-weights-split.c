/* SPDX-License-Identifier: MIT */
/* DT131 tied-weights-split: tied tensors fall into different FSDP units or groups. */
#include <errno.h>

#include "rule-util.h"

static const char *group_label(const struct dtl_group *g)
{
	return g->kind == DTL_GROUP_FSDP1_UNIT ? "FSDP1 unit" : "FSDP2 group";
}

/* HF ties by sharing one Parameter; when its names fall into different FSDP2 groups, newest
 * main raises (rules/versions.yaml fsdp2-shared-param-check, PyTorch PR #176225); older FSDP2
 * and FSDP1 behaviour is unverified (the tie may silently break). */
static int dt131_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;
	const struct dtl_group *groups = sim->groups.items;

	if (sim->rp.plan.strategy != DTL_STRATEGY_FSDP1 &&
	    sim->rp.plan.strategy != DTL_STRATEGY_FSDP2)
		return 0;
	for (size_t gi = 0; gi < m->model.tied_count; gi++) {
		const struct dtl_tied_group *tg = &m->model.tied[gi];
		uint32_t a = DTL_NONE_INDEX, b = DTL_NONE_INDEX;
		for (size_t k = 0; k < tg->count && b == DTL_NONE_INDEX; k++) {
			uint32_t t = dtl_sim_find(sim, tg->names[k].text, tg->names[k].len);
			if (t == DTL_NONE_INDEX || sim->t.home_group[t] == DTL_NONE_INDEX)
				continue;
			if (a == DTL_NONE_INDEX)
				a = t;
			else if (sim->t.home_group[t] != sim->t.home_group[a])
				b = t;
		}
		if (b == DTL_NONE_INDEX)
			continue;
		const struct dtl_group *ga = &groups[sim->t.home_group[a]];
		const struct dtl_group *gb = &groups[sim->t.home_group[b]];
		bool checked = ga->kind != DTL_GROUP_FSDP2_GROUP ||
		               dtl_sim_behavior(sim, DTL_B_FSDP2_SHARED_PARAM_CHECK);
		struct dtl_finding *f = dtl_check_report(
		    c, checked ? c->rule->severity : DTL_SEVERITY_INFO,
		    gb->loc.line ? gb->loc : tg->loc,
		    "tied tensors '%s' and '%s' fall into different %ss ('%s' and '%s')",
		    sim->t.name[a], sim->t.name[b], group_label(ga), ga->name, gb->name);
		if (!f)
			return -ENOMEM;
		f->group = gb;
		if (ga->kind == DTL_GROUP_FSDP2_GROUP && !checked) {
			f->effect = "torch before 2.12 does not check: two groups manage the one "
			            "shared Parameter (what each then holds is unverified)";
		} else if (ga->kind == DTL_GROUP_FSDP2_GROUP) {
			f->error_text = dtl_arena_sprintf(
			    c->arena,
			    "ValueError: Parameter '%s' is shared with a parameter already managed "
			    "by another FSDP group. For shared/tied parameters, use "
			    "fully_shard([module_a, module_b]) to place them in the same FSDP "
			    "group.",
			    sim->t.name[b]);
			f->error_when = "at the first forward (FSDPState._lazy_init)";
		} else {
			f->effect = "the shared Parameter is flattened into the first unit only; "
			            "the other module reads it outside its unit (behaviour "
			            "unverified)";
		}
		f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
		f->fix = "shard the tied modules together (fully_shard([embed_tokens, lm_head]) "
		         "or leave both in the root), e.g. drop the embedding from fsdp.wrap";
		if (dtl_check_add_tensor(c, f, b, NULL) < 0 ||
		    dtl_check_add_tensor(c, f, a, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int dt131_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	const struct dtl_finding *f = req->finding;

	if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP2 &&
	    !sim->rp.version_assumed[DTL_FW_ACCELERATE] &&
	    dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_CARVE_EMBED_TAIL) &&
	    !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_TIED_TAIL)) {
		/* accelerate 1.15 keeps tied embeddings in one tail group (PR #4171) */
		if (dtl_rules_propose_version(
		        req, DTL_FW_ACCELERATE, "1.15.0",
		        "upgrade accelerate: training.versions.accelerate: \"1.15.0\" "
		        "(PR #4171 shards tied embeddings in one group)") < 0)
			return -ENOMEM;
	}
	/* NeMo Automodel's units come from its ModuleList rule, not a wrap list to edit */
	if (!f->group || f->group->module == DTL_NONE_INDEX || sim->rp.wrap_module_lists)
		return 0;
	const struct dtl_module *gm = &sim->modules[f->group->module];
	for (size_t i = 0; i < sim->rp.wrap.count; i++) {
		const struct dtl_pattern *p = &sim->rp.wrap.items[i];
		if (gm->wrap && p->loc.line == gm->wrap->loc.line &&
		    p->loc.column == gm->wrap->loc.column &&
		    !dtl_rules_propose(
		        req, DTL_FIX_WRAP_REMOVE, dtl_arena_strndup(req->arena, p->text, p->len), 0,
		        1,
		        "remove '%.*s' from training.fsdp.wrap (keep the tied modules "
		        "together)",
		        (int)p->len, p->text))
			return -ENOMEM;
	}
	return 0;
}

DTL_RULE(dt131) = {
    .id = "DT131",
    .name = "tied-weights-split",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "tied tensors fall into different FSDP units or groups",
    .explanation =
        "Hugging Face ties weights by sharing one Parameter. When the tied modules land in "
        "different FSDP2 groups, torch >= 2.12 raises at the first forward 'ValueError: "
        "Parameter ... is shared with a parameter already managed by another FSDP group' "
        "(PR #176225; accelerate's notes say >= 2.13); older releases do not check (info: "
        "what each group then holds is unverified), nor does FSDP1. accelerate 1.14 splits "
        "tied embeddings itself: fully_shard([final_norm, embed_tokens]) leaves lm_head in "
        "the root group (PR #4015); 1.15 keeps them together (PR #4171).",
    .example = "model: {tied: [[lm_head.weight, model.embed_tokens.weight]]}\n"
               "training: {strategy: fsdp2, fsdp: {wrap: [model.embed_tokens]}}",
    .fix = "Shard tied modules together: fully_shard([embed_tokens, lm_head]), or leave both "
           "in the root.",
    .facts = "https://github.com/pytorch/pytorch/pull/176225 "
             "https://github.com/huggingface/accelerate/pull/4015 "
             "https://github.com/huggingface/accelerate/pull/4171 "
             "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py",
    .check = dt131_check,
    .propose_fixes = dt131_propose_fixes,
};
