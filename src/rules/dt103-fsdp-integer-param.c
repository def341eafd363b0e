/* SPDX-License-Identifier: MIT */
/* DT103 fsdp-integer-param: an FSDP unit or group holds integer parameters. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* QDoRA before peft 0.12 dequantized the live Linear4bit for DoRA's weight norm, and FSDP
 * then failed to flatten (rules/versions.yaml peft-qdora-fsdp-copy). */
static int qdora_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_adapter *a = &sim->manifest->adapter;

	if (sim->rp.plan.strategy != DTL_STRATEGY_FSDP1 || !a->present || a->use_dora != DTL_TRUE ||
	    sim->manifest->quantization.method != DTL_QUANT_BNB_4BIT ||
	    dtl_sim_behavior(sim, DTL_B_PEFT_QDORA_FSDP_COPY))
		return 0;
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, a->loc,
	    "QDoRA (use_dora on 4-bit weights) with this peft dequantizes the live Linear4bit "
	    "for DoRA's weight norm, which FSDP1 then fails to flatten");
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f, "ValueError: Cannot flatten integer dtype tensors",
	    "at wrap time, in the FullyShardedDataParallel constructor", DTL_FW_PEFT,
	    "upgrade peft to >= 0.12.0 (PR #1806 copies the layer before dequantizing)");
	return 0;
}

static int dt103_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);
	bool fsdp2_crash = dtl_sim_behavior(sim, DTL_B_FSDP2_NONFLOAT_PARAM_CRASH);

	if (qdora_check(c) < 0)
		return -ENOMEM;

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->count == 0)
			continue;
		if (g->kind == DTL_GROUP_FSDP1_UNIT) {
			uint32_t first = g->members[0];
			enum dtl_dtype d = sim->t.dtype[first];
			if (dtl_dtype_is_floating(d) || dtl_rules_quantized(sim, first))
				continue; /* a quantized weight first: DT401 / DT402 */
			struct dtl_finding *f = dtl_check_report(
			    c, c->rule->severity, g->loc,
			    "FSDP1 unit '%s' starts with the %s parameter '%s': FSDP1 cannot "
			    "flatten integer tensors",
			    g->name, dtl_dtype_name(d), sim->t.name[first]);
			if (!f)
				return -ENOMEM;
			f->group = g;
			f->group_offset = 0;
			f->error_text = v2 ? "ValueError: Cannot flatten integer dtype tensors"
			                   : "ValueError: Integer parameters are unsupported";
			f->error_when = "at wrap time, in the FullyShardedDataParallel constructor";
			f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
			f->fix =
			    "keep integer tensors out of FSDP units: list them in fsdp.ignored, "
			    "make them buffers, or store 4-bit weights in a floating "
			    "bnb_4bit_quant_storage";
			if (dtl_check_add_tensor(c, f, first, "the unit's first parameter") < 0)
				return -ENOMEM;
		} else if (g->kind == DTL_GROUP_FSDP2_GROUP && fsdp2_crash) {
			for (size_t k = 0; k < g->count; k++) {
				uint32_t t = g->members[k];
				enum dtl_dtype d = sim->t.dtype[t];
				if (dtl_dtype_is_floating(d))
					continue;
				struct dtl_finding *f = dtl_check_report(
				    c, c->rule->severity, g->loc,
				    "FSDP2 group '%s' holds the %s parameter '%s': this torch "
				    "crashes in fully_shard on non-floating parameters",
				    g->name, dtl_dtype_name(d), sim->t.name[t]);
				if (!f)
					return -ENOMEM;
				f->group = g;
				f->group_offset = (uint32_t)k;
				f->error_text =
				    "RuntimeError: only Tensors of floating point dtype "
				    "can require gradients";
				f->error_when = "in fully_shard";
				f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
				f->fix = "upgrade torch, or keep the tensor out of fully_shard "
				         "(ignored_params), or use a floating storage dtype";
				if (dtl_check_add_tensor(c, f, t, NULL) < 0)
					return -ENOMEM;
				break;
			}
		}
	}
	return 0;
}

static int dt103_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;

	if (!strncmp(req->finding->message, "QDoRA", 5)) {
		if (dtl_rules_propose_version(
		        req, DTL_FW_PEFT, "0.12.0",
		        "upgrade peft: training.versions.peft: \"0.12.0\" (PR #1806)") < 0)
			return -ENOMEM;
	} else if (sim->manifest->quantization.method) {
		enum dtl_dtype want =
		    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_BF16;
		if (!dtl_rules_propose(
		        req, DTL_FIX_QUANT_STORAGE, NULL, want, 1,
		        "set quantization.quant_storage: %s (bnb_4bit_quant_storage)",
		        dtl_dtype_name(want)))
			return -ENOMEM;
	}
	return 0;
}

DTL_RULE(dt103) = {
    .id = "DT103",
    .name = "fsdp-integer-param",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP unit or group holds integer parameters",
    .explanation =
        "FSDP1 flattens only floating tensors: a unit whose first parameter is an integer "
        "tensor (e.g. bitsandbytes 4-bit weights in the default uint8 storage) fails at "
        "wrap time with 'ValueError: Cannot flatten integer dtype tensors' (torch >= 2.1; "
        "'Integer parameters are unsupported' before). A later integer parameter fails the "
        "uniform-dtype check instead (DT101). FSDP2 in torch <= 2.5.1 crashes in "
        "fully_shard on non-floating parameters ('only Tensors of floating point dtype can "
        "require gradients'; the exact boundary is unverified). When the integer tensor is "
        "a bitsandbytes weight, DT401 / DT402 report it with its cause. QDoRA (use_dora on "
        "4-bit weights) with peft < 0.12.0 dequantizes the live Linear4bit and FSDP1 then "
        "fails with the same error (PR #1806).",
    .example = "tensors:\n"
               "  - {name: layers.0.q.weight, shape: [32, 1], dtype: uint8, trainable: false}\n"
               "training: {strategy: fsdp1, fsdp: {wrap: [\"layers.*\"]}}",
    .fix = "Keep integer tensors out of FSDP units (fsdp.ignored, buffers), or store 4-bit "
           "weights in a floating bnb_4bit_quant_storage equal to the model dtype.",
    .facts = "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py "
             "https://github.com/pytorch/pytorch/blob/17a7e1e09b3e17825b4cb51d75dab1a764712793/"
             "torch/distributed/fsdp/_fully_shard/_fsdp_param.py; "
             "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
             "95f9af309d4d5793847169c39288dcd3fcbdf564/docs/source/fsdp_qlora.md?plain=1#L12-L17",
    .check = dt103_check,
    .propose_fixes = dt103_propose_fixes,
};
