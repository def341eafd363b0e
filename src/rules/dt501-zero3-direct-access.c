/* SPDX-License-Identifier: MIT */
/* DT501 zero3-direct-access: a ZeRO-3 partitioned tensor is read outside its module's forward. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"
#include "glob-cursor.h"

/* PEFT's ParamWrapper (LoRA target_parameters) reads the shape of the parameter it wraps in
 * get_peft_model: under zero.Init that is a partitioned parameter of shape torch.Size([])
 * (rules/versions.yaml peft-target-parameters-zero3-shape). Quantized models are not built
 * under zero.Init. */
static int target_parameters_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_adapter *a = &sim->manifest->adapter;

	if (!dtl_rules_target_parameters_partitioned(sim) ||
	    !dtl_sim_behavior(sim, DTL_B_PEFT_TARGET_PARAMETERS_ZERO3_SHAPE))
		return 0;
	const struct dtl_pattern *p = &a->target_parameters.items[0];
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, p->loc.line ? p->loc : a->loc,
	    "LoRA target_parameters ('%s'%s) are read by get_peft_model after zero.Init "
	    "partitioned them: each is a 0-element shard of shape torch.Size([])",
	    p->text, a->target_parameters.count > 1 ? ", ..." : "");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f, "IndexError: tuple index out of range",
	    "in get_peft_model, where ParamWrapper reads param.shape[1]", DTL_FW_PEFT,
	    "use a peft release with PR #3576 (it reads ds_shape), or build the model "
	    "without zero.Init (zero3_init_flag: false), or target the expert modules by "
	    "name instead");
	return 0;
}

/* TRL <= 0.7.1's DPOTrainer prepared its reference model without deepspeed.initialize: built
 * under zero.Init, partitioned, and read with no gather hooks (rules/versions.yaml
 * trl-dpo-ref-model-not-wrapped). */
static int ref_model_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const char *trainer = sim->rp.plan.trainer;

	if (!trainer || strcmp(trainer, "trl-dpo") != 0 || !sim->rp.zero_init ||
	    sim->manifest->quantization.method != DTL_QUANT_NONE ||
	    !dtl_sim_behavior(sim, DTL_B_TRL_REF_MODEL_NOT_WRAPPED))
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity,
	    sim->rp.plan.trainer_loc.line ? sim->rp.plan.trainer_loc : sim->rp.plan.strategy_loc,
	    "the DPO reference model is built under zero.Init but never wrapped by "
	    "deepspeed.initialize: its forward reads 0-element shards");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f, "RuntimeError: 'weight' must be 2-D",
	    "in the reference model's first forward (its embedding)", DTL_FW_TRL,
	    "upgrade trl to >= 0.7.2 (PR #687: the reference model gets its own DeepSpeed "
	    "engine)");
	return 0;
}

/* A direct_access pattern and a tensor it names that ZeRO-3 partitions. */
struct dtl_direct_hit {
	uint32_t pattern, tensor;
};

/*
 * The (pattern, tensor) pairs DT501 reports, by pattern, then in tensor order: a parameter
 * that is neither persistent nor tied (persistent params stay gathered; a tied one is
 * gathered by the module that owns it: TRL checks ds_status == AVAILABLE).
 * Linear in the tensors and the pairs: the tied ones are marked once (a scan of every tensor
 * per matched one took 10 s for `direct_access: ["**"]` and 160k tensors), and each name is
 * matched once against a glob set of the patterns.
 */
static int direct_hits(struct dtl_check *c, const struct dtl_patterns *direct,
                       const struct dtl_direct_hit **ret, size_t *ret_count)
{
	const struct dtl_sim *sim = c->sim;
	uint32_t n = sim->t.count;
	bool *tied = dtl_arena_calloc(c->arena, n ? n : 1, sizeof(bool));
	uint32_t *matched = dtl_arena_calloc(c->arena, direct->count, sizeof(uint32_t));
	size_t *per_pattern = dtl_arena_calloc(c->arena, direct->count + 1, sizeof(size_t));
	struct dtl_vec pairs = {0}; /* struct dtl_direct_hit, in tensor order */
	struct dtl_globset set;

	if (!tied || !matched || !per_pattern)
		return -ENOMEM;
	for (uint32_t a = 0; a < n; a++)
		if (sim->t.alias_of[a] != DTL_NONE_INDEX)
			tied[sim->t.alias_of[a]] = true;
	dtl_globset_init(&set, c->arena);
	for (size_t i = 0; i < direct->count; i++)
		if (dtl_globset_add(&set, direct->items[i].text, direct->items[i].len) < 0)
			return -ENOMEM;
	struct dtl_globset_cursor *cursor = dtl_globset_cursor_new(&set, c->arena);
	if (!cursor)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		uint32_t t = sim->t.order[k];
		if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS) ||
		    (sim->t.flags[t] & DTL_TF_ZERO_PERSIST) || tied[t])
			continue;
		size_t m = dtl_globset_cursor_matches(cursor, sim->t.name[t], sim->t.name_len[t],
		                                      matched, direct->count);
		for (size_t j = 0; j < m; j++) {
			struct dtl_direct_hit *hit = dtl_vec_push(&pairs, c->arena, sizeof(*hit));
			if (!hit)
				return -ENOMEM;
			*hit = (struct dtl_direct_hit){.pattern = matched[j], .tensor = t};
			per_pattern[matched[j] + 1]++;
		}
	}
	/* by pattern, keeping tensor order (a counting sort) */
	struct dtl_direct_hit *sorted =
	    dtl_arena_calloc(c->arena, pairs.count ? pairs.count : 1, sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < direct->count; i++)
		per_pattern[i + 1] += per_pattern[i];
	const struct dtl_direct_hit *from = pairs.items;
	for (size_t h = 0; h < pairs.count; h++)
		sorted[per_pattern[from[h].pattern]++] = from[h];
	*ret = sorted;
	*ret_count = pairs.count;
	return 0;
}

/* DT501 — a ZeRO-3 partitioned tensor read outside its module's forward. */
static int dt501_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_patterns *direct = &sim->rp.plan.direct_access;
	int r;

	if (sim->rp.plan.strategy != DTL_STRATEGY_ZERO3)
		return 0;
	if ((r = target_parameters_check(c)) < 0 || (r = ref_model_check(c)) < 0)
		return r;
	if (direct->count == 0)
		return 0;
	/* which tensors are partitioned and read directly: each tensor once against every
	 * pattern (a glob set), then the findings pattern by pattern, tensors in order */
	const struct dtl_direct_hit *hits;
	size_t hit_count;
	if ((r = direct_hits(c, direct, &hits, &hit_count)) < 0)
		return r;
	for (size_t h = 0; h < hit_count; h++) {
		const struct dtl_pattern *p = &direct->items[hits[h].pattern];
		uint32_t t = hits[h].tensor;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, p->loc,
		    "'%s' is read outside its module's forward, but ZeRO-3 partitions it "
		    "(numel %lld > persistence threshold %lld)",
		    sim->t.name[t], (long long)sim->t.numel[t],
		    (long long)sim->rp.persistence_threshold);
		if (!f)
			return -ENOMEM;
		dtl_check_predict(c, f,
		                  "RuntimeError on a 0-element tensor (e.g. \"size mismatch, got "
		                  "input (2048), mat (2048x128), vec (0)\" or \"'weight' must be "
		                  "2-D\")",
		                  "where the code reads it: outside the pre-forward hooks each "
		                  "rank holds a 0-element shard",
		                  DTL_FW_DEEPSPEED,
		                  "wrap the read in deepspeed.zero.GatheredParameters([param]), or "
		                  "register_external_parameter(module, param); TRL >= 1.6 gathers "
		                  "lm_head for chunked_nll itself");
		if (dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int dt501_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	const struct dtl_finding *f = req->finding;

	if (!strncmp(f->message, "the DPO reference model", 23)) {
		if (dtl_rules_propose_version(
		        req, DTL_FW_TRL, "0.7.2",
		        "upgrade trl: training.versions.trl: \"0.7.2\" (PR #687)") < 0)
			return -ENOMEM;
		return 0;
	}
	if (!f->tensor_count)
		return 0;
	/* deepspeed.zero.GatheredParameters gathers the partitioned tensor for the read; a code
	 * change, proven by taking the read out of direct_access */
	const char *name = sim->t.name[f->tensors[0]];
	return dtl_rules_propose(req, DTL_FIX_GATHER_CONTEXT, name, 0, 3,
	                         "code change: read '%s' inside `with "
	                         "deepspeed.zero.GatheredParameters(%s):`",
	                         name, name)
	           ? 0
	           : -ENOMEM;
}

DTL_RULE(dt501) = {
    .id = "DT501",
    .name = "zero3-direct-access",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "a ZeRO-3 partitioned tensor is read outside its module's forward",
    .explanation =
        "ZeRO-3 gathers a parameter only around its module's forward (pre-forward hooks); "
        "elsewhere each rank holds a 0-element tensor (param.shape == (0,)). Code that reads "
        "lm_head.weight in a custom loss, or an embedding outside its module, fails with a "
        "size or shape error. Persistent parameters (numel <= threshold) stay gathered; a "
        "tied parameter is gathered by the module that owns it. PEFT's LoRA "
        "target_parameters (0.17.0 up to PR #3576) read the shape of the parameters they "
        "wrap in get_peft_model, after zero.Init partitioned them: 'IndexError: tuple index "
        "out of range'. TRL <= 0.7.1's DPO trainer never wrapped its reference model in "
        "deepspeed.initialize, so its forward read 0-element shards: \"RuntimeError: 'weight' "
        "must be 2-D\" (PR #687).",
    .example = "training: {strategy: zero3, direct_access: [lm_head.weight]}",
    .fix = "GatheredParameters([param]) around the read, or register_external_parameter.",
    .facts =
        "https://github.com/deepspeedai/DeepSpeed/blob/edaa7221267243c7be7fb49c5d5f5c4fb97b4641/"
        "deepspeed/runtime/zero/partition_parameters.py#L2307-L2539 "
        "https://github.com/huggingface/trl/blob/f2cd57710ae345ea6428ae95363267fcf38a3dc8/trl/"
        "trainer/sft_trainer.py#L1078-L1131; "
        "https://github.com/huggingface/peft/pull/3576",
    .check = dt501_check,
    .propose_fixes = dt501_propose_fixes,
};
