/* SPDX-License-Identifier: MIT */
/* FSDP1 and FSDP2 group rules: DT101, DT102, DT103, DT111, DT131. */
#include <errno.h>
#include <string.h>

#include "check.h"

static const char *group_label(const struct dtl_group *g)
{
	return g->kind == DTL_GROUP_FSDP1_UNIT ? "FSDP1 unit" : "FSDP2 group";
}

static bool quantized(const struct dtl_sim *sim, uint32_t t)
{
	return sim->t.flags[t] & DTL_TF_QUANTIZED;
}

static bool trainable(const struct dtl_sim *sim, uint32_t t)
{
	return sim->t.flags[t] & DTL_TF_TRAINABLE;
}

/*
 * facts/torch-and-transformers.md §1.2, §1.3: FSDP1 validates each unit's parameters in
 * registration order when it flattens them, in the constructor (wrap time), units in
 * post-order. The first tensor must be floating; every later one must have its dtype; with
 * use_orig_params=False (always before 2.0, and in 2.0 in both modes) its requires_grad too.
 * We report each unit's first offence per rule; the group offset says which torch meets first.
 */
static int dt101_check(struct dtl_check *c)
{
	size_t first_finding = c->findings->items.count;
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP1_UNIT || g->count < 2)
			continue;
		uint32_t first = g->members[0];
		enum dtl_dtype d0 = sim->t.dtype[first];
		if (!dtl_dtype_is_floating(d0))
			continue; /* DT103: torch stops at the first tensor */
		for (size_t k = 1; k < g->count; k++) {
			uint32_t t = g->members[k];
			enum dtl_dtype d = sim->t.dtype[t];
			if (d == d0)
				continue;
			/* torch stops here; a quantized weight's storage is the cause, which
			 * DT401 (4-bit) and DT402 (LLM.int8) report with the same error */
			if (quantized(sim, t) || quantized(sim, first))
				break;
			struct dtl_finding *f = dtl_check_report(
			    c, c->rule->severity, g->loc,
			    "FSDP1 unit '%s' mixes %s and %s parameters: one FlatParameter needs "
			    "one dtype",
			    g->name, dtl_dtype_name(d0), dtl_dtype_name(d));
			if (!f)
				return -ENOMEM;
			f->group = g;
			f->group_offset = (uint32_t)k;
			f->error_text =
			    v2 ? dtl_arena_sprintf(c->arena,
			                           "ValueError: Must flatten tensors with uniform "
			                           "dtype but got %s and %s",
			                           dtl_dtype_torch_name(d0),
			                           dtl_dtype_torch_name(d))
			       : dtl_arena_sprintf(c->arena,
			                           "ValueError: `FlatParameter` requires uniform "
			                           "dtype but got %s and %s",
			                           dtl_dtype_torch_name(d0),
			                           dtl_dtype_torch_name(d));
			f->error_when = "at wrap time, in the FullyShardedDataParallel constructor";
			f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
			f->fix = dtl_arena_sprintf(
			    c->arena,
			    "give the unit one dtype: cast '%s' to %s, or make its module a unit "
			    "of its own (add it to fsdp.wrap), or list it in fsdp.ignored",
			    sim->t.name[t], dtl_dtype_name(d0));
			if (dtl_check_add_tensor(c, f, t, NULL) < 0 ||
			    dtl_check_add_tensor(c, f, first, "the unit's first parameter") < 0)
				return -ENOMEM;
			break;
		}
	}
	return dtl_check_merge_groups(c, first_finding, "unit");
}

static int dt102_check(struct dtl_check *c)
{
	size_t first_finding = c->findings->items.count;
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	const struct dtl_plan *plan = &sim->rp.plan;
	bool has_orig = dtl_sim_behavior(sim, DTL_B_FSDP1_HAS_USE_ORIG_PARAMS);
	bool relaxed = dtl_sim_behavior(sim, DTL_B_FSDP1_ORIG_PARAMS_MIXED_GRAD) &&
	               plan->fsdp.use_orig_params == DTL_TRUE;
	bool v2 = dtl_sim_behavior(sim, DTL_B_FSDP1_VALIDATE_V2);

	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP1_UNIT || g->count < 2)
			continue;
		uint32_t first = g->members[0];
		if (!dtl_dtype_is_floating(sim->t.dtype[first]))
			continue;
		for (size_t k = 1; k < g->count; k++) {
			uint32_t t = g->members[k];
			/* torch checks each tensor's dtype before its requires_grad: a dtype
			 * mismatch (DT101, DT401, DT402) stops it first */
			if (sim->t.dtype[t] != sim->t.dtype[first])
				break;
			if (trainable(sim, t) == trainable(sim, first))
				continue;
			struct dtl_finding *f = dtl_check_report(
			    c, relaxed ? DTL_SEVERITY_WARNING : c->rule->severity, g->loc,
			    "FSDP1 unit '%s' mixes trainable and frozen parameters%s", g->name,
			    relaxed ? " (allowed with use_orig_params, at the cost of gradient "
			              "memory for the whole flat parameter)"
			            : "");
			if (!f)
				return -ENOMEM;
			f->group = g;
			f->group_offset = (uint32_t)k;
			if (relaxed) {
				f->effect =
				    "gradients are materialised for the whole FlatParameter, "
				    "frozen members included";
			} else if (v2) {
				f->error_text = "ValueError: Must flatten tensors with uniform "
				                "`requires_grad` when `use_orig_params=False`";
			} else {
				f->error_text = "ValueError: `FlatParameter` requires uniform "
				                "`requires_grad`";
			}
			f->error_when = "at wrap time, in the FullyShardedDataParallel constructor";
			f->error_versions = dtl_check_version(c, DTL_FW_TORCH);
			f->fix = relaxed ? "wrap the frozen parameters in units of their own"
			         : has_orig
			             ? "set fsdp.use_orig_params: true (torch >= 2.1), or wrap "
			               "the frozen parameters in units of their own"
			             : "wrap the frozen parameters in units of their own "
			               "(use_orig_params needs torch >= 2.0, and relaxes this "
			               "from 2.1)";
			if (dtl_check_add_tensor(c, f, t, NULL) < 0 ||
			    dtl_check_add_tensor(c, f, first, "the unit's first parameter") < 0)
				return -ENOMEM;
			break;
		}
	}
	return dtl_check_merge_groups(c, first_finding, "unit");
}

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
			if (dtl_dtype_is_floating(d) || quantized(sim, first))
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

/*
 * facts/torch-and-transformers.md §2.3: FSDPParamGroup._init_mp_dtypes asserts one original
 * dtype, at lazy init (the first forward): over all parameters up to ~2.7, over trainable ones
 * from ~2.8 (PR #154103). param_dtype does not help: the check is on the original dtype.
 */
static int dt111_check(struct dtl_check *c)
{
	size_t first_finding = c->findings->items.count;
	const struct dtl_sim *sim = c->sim;
	const struct dtl_group *groups = sim->groups.items;
	bool trainable_only = dtl_sim_behavior(sim, DTL_B_FSDP2_TRAINABLE_ONLY_CHECK);

	/* torch that splits a group's trainable params by dtype (rules/versions.yaml
	 * fsdp2-split-trainable-by-dtype) raises nothing here */
	if (trainable_only && dtl_sim_behavior(sim, DTL_B_FSDP2_SPLIT_TRAINABLE_BY_DTYPE))
		return 0;
	for (size_t gi = 0; gi < sim->groups.count; gi++) {
		const struct dtl_group *g = &groups[gi];
		if (g->kind != DTL_GROUP_FSDP2_GROUP)
			continue;
		uint32_t *checked =
		    dtl_arena_calloc(c->arena, g->count ? g->count : 1, sizeof(uint32_t));
		size_t n = 0;
		if (!checked)
			return -ENOMEM;
		for (size_t k = 0; k < g->count; k++)
			if (!trainable_only || trainable(sim, g->members[k]))
				checked[n++] = g->members[k];
		if (n < 2)
			continue;
		uint32_t first = checked[0], offender = DTL_NONE_INDEX;
		size_t offset = 0;
		for (size_t k = 1; k < n && offender == DTL_NONE_INDEX; k++)
			if (sim->t.dtype[checked[k]] != sim->t.dtype[first])
				offender = checked[k];
		/* a quantized weight's storage is the cause: DT401 / DT402 report it */
		if (offender == DTL_NONE_INDEX || quantized(sim, offender) || quantized(sim, first))
			continue;
		for (size_t k = 0; k < g->count; k++)
			if (g->members[k] == offender)
				offset = k;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, g->loc, "FSDP2 group '%s' mixes %s %sparameters", g->name,
		    dtl_check_dtype_set(c, checked, n, false), trainable_only ? "trainable " : "");
		if (!f)
			return -ENOMEM;
		f->group = g;
		f->group_offset = (uint32_t)offset;
		dtl_check_predict(
		    c, f,
		    dtl_arena_sprintf(c->arena,
		                      "AssertionError: FSDP expects uniform original "
		                      "parameter dtype but got {%s}",
		                      dtl_check_dtype_set(c, checked, n, true)),
		    "at the first forward (lazy init)", DTL_FW_TORCH,
		    "give each fully_shard group one dtype: cast the odd parameters, or "
		    "fully_shard them separately (one group per dtype)");
		if (dtl_check_add_tensor(c, f, offender, NULL) < 0 ||
		    dtl_check_add_tensor(c, f, first, "the group's first checked parameter") < 0)
			return -ENOMEM;
	}
	return dtl_check_merge_groups(c, first_finding, "group");
}

/* facts/torch-and-transformers.md §4 "Tied weights", §2.7: HF ties by sharing one Parameter;
 * when its names fall into different FSDP2 groups, newest main raises; older FSDP2 and FSDP1
 * behaviour is unverified (the tie may silently break). */
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

const struct dtl_rule dtl_rule_dt101 = {
    .id = "DT101",
    .name = "fsdp1-mixed-dtype-unit",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP1 unit holds parameters of more than one dtype",
    .explanation =
        "FSDP1 flattens the parameters of each wrapped unit into one FlatParameter, which "
        "has one dtype. When it meets a parameter whose dtype differs from the unit's "
        "first, the FullyShardedDataParallel constructor raises, at wrap time:\n"
        "  torch >= 2.1: ValueError: Must flatten tensors with uniform dtype but got "
        "torch.bfloat16 and torch.float32\n"
        "  torch <= 2.0: ValueError: `FlatParameter` requires uniform dtype but got "
        "torch.bfloat16 and torch.float32\n"
        "use_orig_params=True does not relax this. Units are built children first; a unit "
        "owns its subtree's parameters that no nested unit took, and the root takes the "
        "rest. Typical causes: a LoRA adapter PEFT upcast to float32 inside a bfloat16 "
        "layer, an fp32 router, a keep-in-fp32 module.",
    .example = "tensors:\n"
               "  - {name: layers.0.attn.weight, shape: [8, 8], dtype: bfloat16}\n"
               "  - {name: layers.0.gate.weight, shape: [4, 8], dtype: float32}\n"
               "training: {strategy: fsdp1, fsdp: {wrap: [\"layers.*\"]}}",
    .fix = "Give every unit one dtype: cast the odd tensor, wrap its module as a unit of its "
           "own (fsdp.wrap), or list it in fsdp.ignored.",
    .facts = "https://github.com/pytorch/pytorch/blob/39ec502db40696605fd91001e5a0afa23ed62f20/"
             "torch/distributed/fsdp/_init_utils.py "
             "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py",
    .check = dt101_check,
};

const struct dtl_rule dtl_rule_dt102 = {
    .id = "DT102",
    .name = "fsdp1-mixed-requires-grad-unit",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP1 unit mixes trainable and frozen parameters",
    .explanation =
        "A FlatParameter has one requires_grad. With use_orig_params=False (and always on "
        "torch 1.13 and 2.0) a unit that mixes frozen and trainable parameters fails at "
        "wrap time:\n"
        "  torch >= 2.1: ValueError: Must flatten tensors with uniform `requires_grad` when "
        "`use_orig_params=False`\n"
        "  torch <= 2.0: ValueError: `FlatParameter` requires uniform `requires_grad`\n"
        "From torch 2.1, use_orig_params=True allows it; dtypelint then reports a warning: "
        "gradients are materialised for the whole flat parameter.",
    .example = "tensors:\n"
               "  - {name: layers.0.a.weight, shape: [8, 8], trainable: false}\n"
               "  - {name: layers.0.b.weight, shape: [8, 8]}\n"
               "training: {strategy: fsdp1, fsdp: {wrap: [\"layers.*\"]}}",
    .fix = "Set fsdp.use_orig_params: true (torch >= 2.1), or wrap frozen parameters in units "
           "of their own.",
    .facts = "https://github.com/pytorch/pytorch/blob/fe03cf693c7c774a88c01cd0bc52f80402b8437f/"
             "torch/distributed/fsdp/_flat_param.py",
    .check = dt102_check,
};

const struct dtl_rule dtl_rule_dt103 = {
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
};

const struct dtl_rule dtl_rule_dt111 = {
    .id = "DT111",
    .name = "fsdp2-mixed-dtype-group",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "an FSDP2 fully_shard group holds parameters of more than one dtype",
    .explanation =
        "fully_shard builds one FSDPParamGroup per call from the parameters its module "
        "owns that no nested fully_shard took. At the first forward, lazy init asserts one "
        "original dtype:\n"
        "  AssertionError: FSDP expects uniform original parameter dtype but got "
        "{torch.bfloat16, torch.float32}\n"
        "Up to torch ~2.7 every parameter is checked, frozen ones included; from ~2.8 only "
        "trainable ones (PR #154103; the release boundary is unverified). The "
        "MixedPrecisionPolicy's param_dtype does not help: the check is on the original "
        "dtype. accelerate >= 1.14 upcasts trainable parameters to float32 first. torch "
        "2.15 splits a group's trainable parameters by dtype and raises nothing (NVIDIA "
        "Model-Optimizer#2152 reports it on PyTorch main; the release boundary is "
        "unverified).",
    .example = "tensors:\n"
               "  - {name: layers.0.attn.weight, shape: [8, 8], dtype: bfloat16}\n"
               "  - {name: layers.0.router.weight, shape: [4, 8], dtype: float32}\n"
               "training: {strategy: fsdp2, versions: {torch: \"2.8.0\"}, fsdp: {wrap: "
               "[\"layers.*\"]}}",
    .fix = "Give each group one dtype, or fully_shard the odd modules separately (one group "
           "per dtype, e.g. an fp32 group for the router).",
    .facts =
        "https://github.com/pytorch/pytorch/blob/b795ad9c42aec11accd16c94bc0b4d8dc73af07a/torch/"
        "distributed/fsdp/_fully_shard/_fsdp_init.py "
        "https://github.com/pytorch/pytorch/blob/002a76fbfea0ac0f199e4b8e2a0691074796c908/torch/"
        "distributed/fsdp/_fully_shard/_fsdp_param_group.py; "
        "https://github.com/huggingface/accelerate/blob/16cb6eb80dd9aa8b4df1a63ef57863e455d53b83/"
        "src/accelerate/utils/fsdp_utils.py#L773-L817",
    .check = dt111_check,
};

const struct dtl_rule dtl_rule_dt131 = {
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
};
