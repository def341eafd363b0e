/* SPDX-License-Identifier: MIT */
/* DT401 qlora-storage-mismatch: 4-bit weights are stored in another dtype than the model is sharded
 * in. */

#include <errno.h>

#include "rule-util.h"

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

/* FSDP2 before ~2.8 asserts one original dtype over every parameter of a group at lazy init
 * (rules/versions.yaml fsdp2-trainable-only-check): the first group a 4-bit weight makes fail. */
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

	if (!dtl_rules_sharded(sim))
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
			*slot =
			    dtl_check_report(c, sev, loc,
			                     "4-bit weights are stored as %s but %s shards them "
			                     "beside %s parameters",
			                     dtl_dtype_name(stored), dtl_rules_strategy_label(sim),
			                     dtl_dtype_name(want));
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
			      dtl_rules_fsdp1_error(c, *slot) < 0) ||
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

static int dt401_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	const struct dtl_finding *f = req->finding;
	uint32_t t = f->tensor_count ? f->tensors[0] : DTL_NONE_INDEX;

	if (sim->manifest->quantization.method) {
		enum dtl_dtype want =
		    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_BF16;
		if (!dtl_rules_propose(
		        req, DTL_FIX_QUANT_STORAGE, NULL, want, 1,
		        "set quantization.quant_storage: %s (bnb_4bit_quant_storage)",
		        dtl_dtype_name(want)))
			return -ENOMEM;
	}
	if (sim->rp.plan.strategy == DTL_STRATEGY_FSDP2 && t != DTL_NONE_INDEX &&
	    !dtl_dtype_is_floating(sim->t.dtype[t]) &&
	    (sim->rp.version_assumed[DTL_FW_ACCELERATE] ||
	     !dtl_sim_behavior(sim, DTL_B_ACCELERATE_FSDP2_IGNORE_PARAMS4BIT))) {
		/* accelerate >= 1.14 keeps frozen non-floating Params4bit out of FSDP2 sharding
		 * (PR #3987); the only cure for a checkpoint stored quantized in uint8 */
		if (dtl_rules_propose_version(
		        req, DTL_FW_ACCELERATE, "1.14.0",
		        "launch with accelerate >= 1.14: training.versions.accelerate: "
		        "\"1.14.0\" (keeps non-floating Params4bit out of FSDP2 "
		        "sharding, PR #3987; needs torch >= 2.7)") < 0)
			return -ENOMEM;
	}
	return 0;
}

DTL_RULE(dt401) = {
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
    .propose_fixes = dt401_propose_fixes,
};
