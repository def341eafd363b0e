/* SPDX-License-Identifier: MIT */
/*
 * QLoRA, PEFT and ZeRO-3 access rules: DT401 qlora-storage-mismatch, DT402
 * int8-weights-sharded, DT403 adapter-dtype-mismatch, DT404 quantized-float-cast, DT405
 * merge-requantize, DT406 merge-rounding, DT407 recipe-refuses-prequantized, DT501
 * zero3-direct-access.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dtypelint/glob.h"

static bool sharded(const struct dtl_sim *sim)
{
	enum dtl_strategy s = sim->rp.plan.strategy;
	return s == DTL_STRATEGY_FSDP1 || s == DTL_STRATEGY_FSDP2 || s == DTL_STRATEGY_ZERO3;
}

static const char *strategy_label(const struct dtl_sim *sim)
{
	switch (sim->rp.plan.strategy) {
	case DTL_STRATEGY_FSDP1:
		return "FSDP1";
	case DTL_STRATEGY_FSDP2:
		return "FSDP2";
	default:
		return "ZeRO-3";
	}
}

/* The dtype a 4-bit weight is sharded with: the first other floating parameter of its FSDP
 * unit or group, or ZeRO-3's mode dtype. NONE when nothing is sharded beside it. */
static enum dtl_dtype neighbour_dtype(const struct dtl_sim *sim, uint32_t weight)
{
	const struct dtl_group *groups = sim->groups.items;
	uint32_t g = sim->t.group[weight];

	if (sim->rp.plan.strategy == DTL_STRATEGY_ZERO3)
		return sim->rp.mode_dtype;
	if (g == DTL_NONE_INDEX)
		return DTL_DTYPE_NONE;
	for (size_t k = 0; k < groups[g].count; k++) {
		uint32_t t = groups[g].members[k];
		if (!(sim->t.flags[t] & DTL_TF_QUANTIZED) && dtl_dtype_is_floating(sim->t.dtype[t]))
			return sim->t.dtype[t];
	}
	return DTL_DTYPE_NONE;
}

/* What cures a storage mismatch. A pre-quantized checkpoint keeps the dtype its weights are
 * stored in (Params4bit.from_prequantized: quant_storage = data.dtype), so setting
 * bnb_4bit_quant_storage does not change it: the weights must be quantized at load from the
 * unquantized model, or (FSDP2) kept out of sharding. */
static const char *storage_fix(struct dtl_check *c, uint32_t t, enum dtl_dtype want)
{
	const struct dtl_sim *sim = c->sim;
	const char *name = dtl_dtype_name(want);

	if (!(sim->t.flags[t] & DTL_TF_PREQUANTIZED))
		return dtl_arena_sprintf(
		    c->arena,
		    "set bnb_4bit_quant_storage=%s (quantization.quant_storage: "
		    "%s), the dtype the model is loaded and sharded in",
		    name, name);
	return dtl_arena_sprintf(
	    c->arena,
	    "this checkpoint is stored quantized in %s and loads as stored, whatever "
	    "bnb_4bit_quant_storage says: quantize the unquantized model at load instead "
	    "(BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_storage=%s) with dtype=%s)%s",
	    dtl_dtype_name(sim->t.dtype[t]), name, name,
	    sim->rp.plan.strategy == DTL_STRATEGY_FSDP2
	        ? ", or launch with accelerate >= 1.14 on torch >= 2.7, which keeps "
	          "non-floating Params4bit out of FSDP2 sharding"
	        : "");
}

/* The error FSDP1 raises at the first unit a 4-bit weight makes fail (units in construction
 * order; torch validates each unit's parameters in order, facts/torch-and-transformers.md
 * §1.2): the cause is the storage, the symptom this ValueError. */
static int fsdp1_error(struct dtl_check *c, struct dtl_finding *f)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP1_UNIT || g->count == 0)
			continue;
		uint32_t first = g->members[0];
		enum dtl_dtype d0 = sim->t.dtype[first];
		const char *text = NULL;
		if (!dtl_dtype_is_floating(d0)) {
			if (!(sim->t.flags[first] & DTL_TF_QUANTIZED))
				continue;
			text = v2 ? "ValueError: Cannot flatten integer dtype tensors"
			          : "ValueError: Integer parameters are unsupported";
		} else {
			for (size_t k = 1; k < g->count && !text; k++) {
				uint32_t t = g->members[k];
				if (sim->t.dtype[t] == d0)
					continue;
				if (!(sim->t.flags[t] & DTL_TF_QUANTIZED))
					break;
				text = dtl_arena_sprintf(
				    c->arena,
				    v2 ? "ValueError: Must flatten tensors with uniform dtype but "
				         "got %s and %s"
				       : "ValueError: `FlatParameter` requires uniform dtype but "
				         "got %s and %s",
				    dtl_dtype_torch_name(d0),
				    dtl_dtype_torch_name(sim->t.dtype[t]));
				if (!text)
					return -ENOMEM;
			}
		}
		if (!text)
			continue;
		f->effect = NULL;
		f->error_text = text;
		f->error_when = dtl_arena_sprintf(
		    c->arena,
		    "at wrap time, in the FullyShardedDataParallel constructor (unit '%s')",
		    g->name);
		f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
		return f->error_when ? 0 : -ENOMEM;
	}
	return 0;
}

/* FSDP2 before ~2.8 asserts one original dtype over every parameter of a group at lazy init
 * (facts/torch-and-transformers.md §2.3): the first group a 4-bit weight makes fail. */
static int fsdp2_error(struct dtl_check *c, struct dtl_finding *f)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;

	if (dtl_sim_behavior(sim, DTL_B_FSDP2_TRAINABLE_ONLY_CHECK))
		return 0; /* frozen 4-bit weights are not checked */
	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		bool quant = false, mixed = false;
		if (g->kind != DTL_GROUP_FSDP2_GROUP || g->count < 2)
			continue;
		for (size_t k = 0; k < g->count; k++) {
			quant |= (sim->t.flags[g->members[k]] & DTL_TF_QUANTIZED) != 0;
			mixed |= sim->t.dtype[g->members[k]] != sim->t.dtype[g->members[0]];
		}
		if (!quant || !mixed)
			continue;
		f->effect = NULL;
		f->error_text =
		    dtl_arena_sprintf(c->arena,
		                      "AssertionError: FSDP expects uniform original "
		                      "parameter dtype but got {%s}",
		                      dtl_check_dtype_set(c, g->members, g->count, true));
		f->error_when = dtl_arena_sprintf(
		    c->arena, "at the first forward (lazy init of group '%s')", g->name);
		f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
		return f->error_text && f->error_when ? 0 : -ENOMEM;
	}
	return 0;
}

/* DT401 — 4-bit storage differs from the dtype it is sharded with. Non-floating storage is an
 * error (FSDP shards only floating dtypes); a floating storage that differs from its unit's
 * other parameters is an error for FSDP1 and ZeRO-3, a warning for FSDP2 when torch checks
 * only trainable parameters (the 4-bit weights are frozen). */
static int dt401_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_quantization *q = &sim->manifest->quantization;
	struct dtl_finding *found[3] = {NULL, NULL, NULL}; /* by severity */
	size_t n[3] = {0, 0, 0};
	bool fsdp2_lenient = sim->rp.plan.strategy == DTL_STRATEGY_FSDP2 &&
	                     dtl_sim_behavior(sim, DTL_B_FSDP2_TRAINABLE_ONLY_CHECK);

	if (!sharded(sim))
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		uint32_t fl = sim->t.flags[t];
		if (!(fl & DTL_TF_QUANTIZED) || (fl & DTL_TF_INT8) ||
		    sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		enum dtl_dtype stored = sim->t.dtype[t], want = neighbour_dtype(sim, t);
		bool floating = dtl_dtype_is_floating(stored);
		if (want == DTL_DTYPE_NONE || stored == want)
			continue;
		enum dtl_severity sev = (fl & DTL_TF_IGNORED)         ? DTL_SEVERITY_INFO
		                        : (floating && fsdp2_lenient) ? DTL_SEVERITY_WARNING
		                                                      : c->rule->severity;
		struct dtl_finding **slot = &found[sev];
		if (!*slot) {
			struct dtl_loc loc = q->quant_storage_loc.line ? q->quant_storage_loc
			                     : q->loc.line             ? q->loc
			                                               : dtl_sim_tensor_loc(sim, t);
			*slot = dtl_check_report(
			    c, sev, loc,
			    "4-bit weights are stored as %s but %s shards them "
			    "beside %s parameters",
			    dtl_dtype_name(stored), strategy_label(sim), dtl_dtype_name(want));
			if (!*slot)
				return -ENOMEM;
			(*slot)->effect =
			    (fl & DTL_TF_IGNORED)
			        ? "accelerate leaves these Params4bit out of FSDP2 sharding "
			          "('Found N non-floating frozen Params4bit. Excluding from FSDP2 "
			          "sharding to prevent quant_state corruption'): every rank holds "
			          "all of them"
			    : floating && fsdp2_lenient
			        ? "FSDP2 from ~2.8 checks only trainable parameters, so the frozen "
			          "4-bit weights pass, but one group holds two dtypes"
			        : "FSDP shards one floating dtype per unit ('FSDP only supports "
			          "sharding float data types ... quant_storage [must match] the "
			          "data "
			          "types used throughout the model', bitsandbytes docs); the unit "
			          "fails to wrap (DT101/DT103) or the codes are cast";
			(*slot)->fix = storage_fix(c, t, want);
			(*slot)->error_versions = dtl_check_version(c, DTL_FW_BITSANDBYTES);
			if (sev == DTL_SEVERITY_ERROR &&
			    ((sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 &&
			      fsdp1_error(c, *slot) < 0) ||
			     (sim->rp.plan.strategy == DTL_STRATEGY_FSDP2 &&
			      fsdp2_error(c, *slot) < 0)))
				return -ENOMEM;
		}
		if (++n[sev] <= 3 && dtl_check_add_tensor(c, *slot, t, NULL) < 0)
			return -ENOMEM;
	}
	for (int sev = 0; sev < 3; sev++)
		if (found[sev] && n[sev] > 1 &&
		    !(found[sev]->message = dtl_arena_sprintf(c->arena, "%s (%zu weights)",
		                                              found[sev]->message, n[sev])))
			return -ENOMEM;
	return 0;
}

/* DT402 — LLM.int8 weights under FSDP or ZeRO-3. */
static int dt402_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	if (!sharded(sim))
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_INT8) || sim->t.kind[t] != DTL_KIND_PARAM)
			continue;
		if (!f) {
			f = dtl_check_report(
			    c, c->rule->severity,
			    sim->manifest->quantization.method_loc.line
			        ? sim->manifest->quantization.method_loc
			        : dtl_sim_tensor_loc(sim, t),
			    "LLM.int8 (bitsandbytes 8-bit) weights cannot be sharded "
			    "by %s",
			    strategy_label(sim));
			if (!f)
				return -ENOMEM;
			f->effect =
			    "Int8Params are int8 with row scales beside them: FSDP flattens "
			    "only floating tensors ('Cannot flatten integer dtype tensors' or "
			    "a uniform-dtype error) and sharding would separate the codes from "
			    "their scales";
			f->fix = "use 4-bit QLoRA with bnb_4bit_quant_storage equal to the model "
			         "dtype, or train the 8-bit model without sharding it (DDP)";
			if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP1 && fsdp1_error(c, f) < 0)
				return -ENOMEM;
		}
		if (++n <= 3 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	if (f && n > 1 &&
	    !(f->message = dtl_arena_sprintf(c->arena, "%s (%zu weights)", f->message, n)))
		return -ENOMEM;
	return 0;
}

static bool is_lora(const struct dtl_sim *sim, uint32_t t)
{
	return (sim->t.flags[t] & DTL_TF_ADAPTER) && !strstr(sim->t.name[t], ".modules_to_save.");
}

/* The base weight of an adapter "<module>.lora_A.<name>.weight": "<module>.weight", or the
 * PEFT-exported "<module>.base_layer.weight". */
static uint32_t base_of(const struct dtl_sim *sim, uint32_t t)
{
	const char *name = sim->t.name[t];
	const char *cut = strstr(name, ".lora_");
	char buf[4096];

	if (!cut || (size_t)(cut - name) + 20 >= sizeof(buf))
		return DTL_NONE_INDEX;
	int n = snprintf(buf, sizeof(buf), "%.*s.weight", (int)(cut - name), name);
	uint32_t b = dtl_sim_find(sim, buf, (size_t)n);
	if (b != DTL_NONE_INDEX)
		return b;
	n = snprintf(buf, sizeof(buf), "%.*s.base_layer.weight", (int)(cut - name), name);
	return dtl_sim_find(sim, buf, (size_t)n);
}

/* DT403 — adapters in another dtype than their base. */
static int dt403_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!is_lora(sim, t))
			continue;
		uint32_t b = base_of(sim, t);
		if (b == DTL_NONE_INDEX || (sim->t.flags[b] & DTL_TF_QUANTIZED) ||
		    sim->t.dtype[b] == sim->t.dtype[t])
			continue;
		if (!f) {
			f = dtl_check_report(c, c->rule->severity, dtl_sim_tensor_loc(sim, t),
			                     "adapters are %s while their base weights are %s",
			                     dtl_dtype_name(sim->t.dtype[t]),
			                     dtl_dtype_name(sim->t.dtype[b]));
			if (!f)
				return -ENOMEM;
			f->effect =
			    "LoRA's forward casts the input to the adapter dtype and back, so "
			    "the math works; FSDP groups, ZeRO-3 gathers and the ZeRO-3 "
			    "optimizer see mixed dtypes (DT101, DT111, DT121, DT122)";
			f->fix =
			    "get_peft_model(..., autocast_adapter_dtype=False) keeps adapters in "
			    "the base dtype; or shard adapters in their own groups";
			f->error_versions = dtl_check_version(c, DTL_FW_PEFT);
		}
		if (++n <= 2 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	if (f && n > 1 &&
	    !(f->message = dtl_arena_sprintf(c->arena, "%s (%zu adapter tensors)", f->message, n)))
		return -ENOMEM;
	return 0;
}

/* DT404 — a float-stored 4-bit weight numerically cast after quantization. */
static int dt404_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_event *events = sim->events.items;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!(sim->t.flags[t] & DTL_TF_QUANTIZED) || (sim->t.flags[t] & DTL_TF_INT8))
			continue;
		const struct dtl_event *cast = NULL;
		for (uint32_t e = sim->t.last_event[t]; e != DTL_NONE_INDEX; e = events[e].prev)
			if (events[e].stage > DTL_STAGE_QUANTIZE &&
			    events[e].from != events[e].to && dtl_dtype_is_floating(events[e].from))
				cast = &events[e];
		if (!cast)
			continue;
		if (!f) {
			f = dtl_check_report(c, c->rule->severity, cast->loc,
			                     "4-bit weights stored as %s are cast to %s after "
			                     "quantization: the packed codes are corrupted",
			                     dtl_dtype_name(cast->from), dtl_dtype_name(cast->to));
			if (!f)
				return -ENOMEM;
			f->effect =
			    "Params4bit.to(dtype) converts the packed 4-bit codes as numbers; "
			    "nothing raises, the model computes with garbage weights";
			f->fix =
			    "store 4-bit weights in the dtype the strategy casts to "
			    "(bnb_4bit_quant_storage = the training precision), or keep them in "
			    "uint8 so blanket casts skip them";
		}
		if (++n <= 3 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* DT405 / DT406 — merge_and_unload after training. */
static int merge_check(struct dtl_check *c, bool quantized)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	if (sim->rp.plan.merge != DTL_TRUE)
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!is_lora(sim, t) || !strstr(sim->t.name[t], ".lora_A."))
			continue;
		uint32_t b = base_of(sim, t);
		if (b == DTL_NONE_INDEX)
			continue;
		bool q = sim->t.flags[b] & DTL_TF_QUANTIZED;
		if (quantized != q)
			continue;
		if (!quantized &&
		    (sim->t.dtype[b] == sim->t.dtype[t] || !dtl_dtype_is_half(sim->t.dtype[b])))
			continue;
		if (!f) {
			bool eight = sim->t.flags[b] & DTL_TF_INT8;
			f = quantized
			        ? dtl_check_report(
			              c, c->rule->severity, sim->rp.plan.merge_loc,
			              "merging LoRA into %s-bit weights requantizes them",
			              eight ? "8" : "4")
			        : dtl_check_report(c, c->rule->severity, sim->rp.plan.merge_loc,
			                           "merging %s adapters into %s weights rounds the "
			                           "update to %s",
			                           dtl_dtype_name(sim->t.dtype[t]),
			                           dtl_dtype_name(sim->t.dtype[b]),
			                           dtl_dtype_name(sim->t.dtype[b]));
			if (!f)
				return -ENOMEM;
			f->effect =
			    quantized
			        ? (eight ? "peft warns: 'Merge lora module to 8-bit linear may get "
			                   "different generations due to rounding errors.'"
			                 : "peft warns: 'Merge lora module to 4-bit linear may get "
			                   "different generations due to rounding errors.'")
			        : "merge_and_unload adds delta.to(orig_dtype): the merged weight "
			          "keeps "
			          "the base dtype";
			f->fix = quantized
			             ? "merge into a 16-bit copy of the base model instead"
			             : "keep the adapter separate, or merge into a float32 copy";
		}
		if (++n <= 3 && dtl_check_add_tensor(c, f, t, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int dt405_check(struct dtl_check *c)
{
	return merge_check(c, true);
}

static int dt406_check(struct dtl_check *c)
{
	return merge_check(c, false);
}

/* DT407 — LLaMA-Factory refuses a checkpoint that is already quantized (any method but MXFP4
 * and FP8, which it dequantizes) under ZeRO-3 or FSDP, before transformers loads it
 * (model_utils/quantization.py configure_quantization). */
static int dt407_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;
	const char *method = m->quantization.checkpoint_method;

	if (!m->recipe.kind || strcmp(m->recipe.kind, "LLaMA-Factory") != 0 || !method ||
	    !strcmp(method, "mxfp4") || !strcmp(method, "fp8") || !sharded(sim))
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, m->quantization.checkpoint_method_loc,
	    "LLaMA-Factory refuses a checkpoint already quantized with %s under %s", method,
	    strategy_label(sim));
	if (!f)
		return -ENOMEM;
	f->error_text = "ValueError: DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized "
	                "models.";
	f->error_when = "when LLaMA-Factory configures quantization, before the model loads";
	f->fix = "start from the unquantized model and let LLaMA-Factory quantize it "
	         "(quantization_bit: 4, which packs 4-bit weights in the compute dtype for FSDP "
	         "and ZeRO-3), or train the quantized checkpoint without sharding";
	return 0;
}

/* PEFT's ParamWrapper (LoRA target_parameters) reads the shape of the parameter it wraps in
 * get_peft_model: under zero.Init that is a partitioned parameter of shape torch.Size([])
 * (rules/versions.yaml peft-target-parameters-zero3-shape). Quantized models are not built
 * under zero.Init. */
static int target_parameters_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_adapter *a = &sim->manifest->adapter;

	if (!a->present || !a->target_parameters.count || !sim->rp.zero_init ||
	    sim->manifest->quantization.method != DTL_QUANT_NONE ||
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
 * gathered by the module that owns it, facts §4.3: TRL checks ds_status == AVAILABLE).
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

const struct dtl_rule dtl_rule_dt401 = {
    .id = "DT401",
    .name = "qlora-storage-mismatch",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "4-bit weights are stored in another dtype than the model is sharded in",
    .explanation =
        "bitsandbytes packs 4-bit weights into bnb_4bit_quant_storage, uint8 by default. "
        "FSDP flattens and shards only one floating dtype per unit or group, and the PEFT "
        "and bitsandbytes docs require quant_storage to equal the dtype the model is loaded "
        "in (torch_dtype) for FSDP and ZeRO-3 QLoRA. With uint8 storage beside bfloat16 "
        "layers FSDP1 fails to wrap ('Cannot flatten integer dtype tensors' or 'Must flatten "
        "tensors with uniform dtype'). accelerate >= 1.14 on torch >= 2.7 instead leaves "
        "frozen uint8 Params4bit out of FSDP2 sharding (info: no memory saving). This rule "
        "names the cause: the unit or group error torch raises (DT101, DT103, DT111) is "
        "reported here, not as those rules. A pre-quantized checkpoint (quantization_config "
        "in config.json) keeps the dtype its weights are stored in "
        "(Params4bit.from_prequantized), so bnb_4bit_quant_storage cannot change it: "
        "quantize the unquantized model at load, or under FSDP2 use accelerate >= 1.14. "
        "Recipes set the storage themselves: LLaMA-Factory uses the compute dtype, axolotl "
        "bfloat16, TRL the model dtype up to 0.25 and bnb_4bit_quant_storage (uint8 by "
        "default) from 0.26.",
    .example = "quantization: {method: bnb-4bit, compute_dtype: bfloat16}\n"
               "training: {strategy: fsdp1, precision: bf16}",
    .fix = "Set bnb_4bit_quant_storage to the model dtype (quantization.quant_storage: "
           "bfloat16; in a TRL recipe --bnb_4bit_quant_storage bfloat16). For a "
           "pre-quantized checkpoint, quantize at load from the unquantized model.",
    .facts =
        "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
        "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/modules.py#L213-L484 "
        "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
        "95f9af309d4d5793847169c39288dcd3fcbdf564/docs/source/fsdp_qlora.md?plain=1#L12-L17 "
        "https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/"
        "src/accelerate/utils/fsdp_utils.py#L773-L817; "
        "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/bitsandbytes/nn/"
        "modules.py#L356-L379",
    .check = dt401_check,
};

const struct dtl_rule dtl_rule_dt402 = {
    .id = "DT402",
    .name = "int8-weights-sharded",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "LLM.int8 weights under FSDP or ZeRO-3",
    .explanation = "bitsandbytes 8-bit weights (Int8Params) are int8 codes with row scales. FSDP "
                   "flattens only floating tensors, and neither FSDP nor ZeRO-3 keeps the scales "
                   "with the shards.",
    .example = "quantization: {method: bnb-8bit}\ntraining: {strategy: fsdp2}",
    .fix = "Use 4-bit QLoRA with a floating quant_storage, or DDP.",
    .facts = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
             "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/modules.py#L719-L809; "
             "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py",
    .check = dt402_check,
};

const struct dtl_rule dtl_rule_dt403 = {
    .id = "DT403",
    .name = "adapter-dtype-mismatch",
    .severity = DTL_SEVERITY_INFO,
    .summary = "adapters are in another dtype than their base weights",
    .explanation = "get_peft_model(autocast_adapter_dtype=True), the default since peft 0.12, "
                   "upcasts float16/bfloat16 adapters to float32. The LoRA math handles it, but "
                   "sharding does not: this is the usual cause of DT101, DT111, DT121 and DT122.",
    .example = "adapter: {type: lora, target_modules: [q_proj, v_proj]}\n"
               "model: {checkpoint_dtype: bfloat16}",
    .fix = "autocast_adapter_dtype=False, or adapters in their own FSDP groups.",
    .facts = "https://github.com/huggingface/peft/pull/1706",
    .check = dt403_check,
};

const struct dtl_rule dtl_rule_dt404 = {
    .id = "DT404",
    .name = "quantized-float-cast",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "a blanket float cast of float-stored 4-bit weights corrupts the packed codes",
    .explanation = "Params4bit.to(dtype) on already-quantized weights converts the packed codes "
                   "numerically; nothing guards it. uint8 storage is skipped by module.half() "
                   "and module.bfloat16(), but float storage (bf16, fp32) is cast by DeepSpeed's "
                   "engine cast or prepare_model_for_kbit_training before peft 0.10 when the "
                   "storage differs from the target dtype.",
    .example = "quantization: {method: bnb-4bit, quant_storage: bfloat16}\n"
               "training: {strategy: zero3, precision: fp16}",
    .fix = "Make quant_storage the training precision, or keep uint8 storage.",
    .facts = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
             "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/modules.py#L213-L484 "
             "https://github.com/deepspeedai/DeepSpeed/pull/8066",
    .check = dt404_check,
};

const struct dtl_rule dtl_rule_dt405 = {
    .id = "DT405",
    .name = "merge-requantize",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "merge_and_unload into quantized weights requantizes them",
    .explanation = "Merging LoRA into a 4-bit or 8-bit base dequantizes, adds the delta and "
                   "quantizes again; peft warns that generations may differ.",
    .example = "quantization: {method: bnb-4bit}\ntraining: {merge: true}",
    .fix = "Merge into a 16-bit copy of the base model.",
    .facts = "https://github.com/huggingface/peft/blob/5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40/"
             "src/peft/tuners/lora/layer.py#L915-L980",
    .check = dt405_check,
};

const struct dtl_rule dtl_rule_dt406 = {
    .id = "DT406",
    .name = "merge-rounding",
    .severity = DTL_SEVERITY_INFO,
    .summary = "merging adapters into 16-bit weights rounds the update",
    .explanation = "merge_and_unload adds delta.to(orig_dtype): the merged weight keeps the "
                   "base's 16-bit dtype, so a float32 (or float16) adapter's update is rounded.",
    .example = "training: {merge: true}",
    .fix = "Keep the adapter separate, or merge into a float32 copy.",
    .facts = "https://github.com/huggingface/peft/blob/5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40/"
             "src/peft/tuners/lora/layer.py#L915-L980",
    .check = dt406_check,
};

const struct dtl_rule dtl_rule_dt407 = {
    .id = "DT407",
    .name = "recipe-refuses-prequantized",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the recipe refuses a pre-quantized checkpoint under ZeRO-3 or FSDP",
    .explanation =
        "LLaMA-Factory reads config.json's quantization_config before it loads a model. A "
        "checkpoint that is already quantized (bitsandbytes, GPTQ, AWQ, ...; MXFP4 and FP8 "
        "are dequantized instead) under DeepSpeed ZeRO-3 or FSDP stops there: 'ValueError: "
        "DeepSpeed ZeRO-3 or FSDP is incompatible with PTQ-quantized models.' "
        "(model_utils/quantization.py). quantization_bit does not change it: it only warns "
        "that it has no effect on such models.",
    .example = "an HF folder with quantization_config {quant_method: bitsandbytes}, "
               "--trainer-args with quantization_bit: 4, --accelerate with distributed_type: "
               "FSDP",
    .fix = "Quantize at load from the unquantized model (quantization_bit: 4), or train "
           "without sharding.",
    .facts =
        "https://github.com/hiyouga/LLaMA-Factory/blob/ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30/"
        "src/llamafactory/model/model_utils/quantization.py#L94-L105",
    .check = dt407_check,
};

const struct dtl_rule dtl_rule_dt501 = {
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
};
