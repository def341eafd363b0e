/* SPDX-License-Identifier: MIT */
/* DT403 adapter-dtype-mismatch: adapters are in another dtype than their base weights. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* Has a rule that this mismatch leads to (DT101, DT111, DT121, DT122) reported? They run
 * before DT403 (rules run in id order). */
static bool downstream_fired(const struct dtl_check *c)
{
	static const char *const downstream[] = {"DT101", "DT111", "DT121", "DT122"};
	const struct dtl_finding *f = c->findings->items.items;

	for (size_t i = 0; i < c->findings->items.count; i++)
		for (size_t k = 0; k < sizeof(downstream) / sizeof(downstream[0]); k++)
			if (!strcmp(f[i].rule->id, downstream[k]))
				return true;
	return false;
}

/* DT403 — adapters in another dtype than their base. Alone it predicts nothing wrong (LoRA's
 * forward casts, the math works): it reports when a rule downstream fired, whose fix it
 * explains, or when the selection asks for it by name. */
static int dt403_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *f = NULL;
	size_t n = 0;

	if (!c->asked && !downstream_fired(c))
		return 0;

	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		if (!dtl_rules_is_lora(sim, t))
			continue;
		uint32_t b = dtl_rules_base_of(sim, t);
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

DTL_RULE(dt403) = {
    .id = "DT403",
    .name = "adapter-dtype-mismatch",
    .severity = DTL_SEVERITY_INFO,
    .summary = "adapters are in another dtype than their base weights",
    .explanation = "get_peft_model(autocast_adapter_dtype=True), the default since peft 0.12, "
                   "upcasts float16/bfloat16 adapters to float32. The LoRA math handles it, but "
                   "sharding does not: this is the usual cause of DT101, DT111, DT121 and DT122. "
                   "It reports when one of those fires (it names the setting behind them), or "
                   "when --select names it; alone it predicts nothing wrong.",
    .example = "adapter: {type: lora, target_modules: [q_proj, v_proj]}\n"
               "model: {checkpoint_dtype: bfloat16}",
    .fix = "autocast_adapter_dtype=False, or adapters in their own FSDP groups.",
    .facts = "https://github.com/huggingface/peft/pull/1706",
    .check = dt403_check,
    .propose_fixes = dtl_rules_propose_autocast_off,
};
