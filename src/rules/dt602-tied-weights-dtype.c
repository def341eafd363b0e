/* SPDX-License-Identifier: MIT */
/* DT602 tied-weights-dtype: tied tensors are declared with different dtypes. */
#include <errno.h>

#include "rule-check.h"

/* HF ties by sharing one Parameter (PreTrainedModel._tie_or_clone_weights,
 * https://github.com/huggingface/transformers/blob/040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py),
 * so tied weights always have one dtype; a manifest that says otherwise describes no real model
 * (usually an export that upcast one name, or a hand edit). */

/* The dtype a tied name is declared with (before the stages: a tied alias follows its
 * Parameter's casts in the simulation): its own, else model.checkpoint_dtype, else float32 */
static enum dtl_dtype declared(const struct dtl_sim *sim, uint32_t t)
{
	const struct dtl_manifest *m = sim->manifest;
	enum dtl_dtype d = m->tensors[sim->t.decl[t]].dtype;

	return d != DTL_DTYPE_NONE                           ? d
	       : m->model.checkpoint_dtype != DTL_DTYPE_NONE ? m->model.checkpoint_dtype
	                                                     : DTL_DTYPE_F32;
}

static int dt602_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;

	for (size_t gi = 0; gi < m->model.tied_count; gi++) {
		const struct dtl_tied_group *tg = &m->model.tied[gi];
		uint32_t a = DTL_NONE_INDEX, b = DTL_NONE_INDEX;
		for (size_t k = 0; k < tg->count && b == DTL_NONE_INDEX; k++) {
			uint32_t t = dtl_sim_find(sim, tg->names[k].text, tg->names[k].len);
			if (t == DTL_NONE_INDEX || sim->t.decl[t] == DTL_NONE_INDEX)
				continue;
			if (a == DTL_NONE_INDEX)
				a = t;
			else if (declared(sim, t) != declared(sim, a))
				b = t;
		}
		if (b == DTL_NONE_INDEX)
			continue;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, tg->loc,
		    "tied tensors '%s' (%s) and '%s' (%s) have different dtypes, but a tie is "
		    "one shared Parameter",
		    sim->t.name[a], dtl_dtype_name(declared(sim, a)), sim->t.name[b],
		    dtl_dtype_name(declared(sim, b)));
		if (!f)
			return -ENOMEM;
		f->effect = "the simulation follows the first name's dtype; the manifest describes "
		            "no model transformers can build";
		f->fix = "declare one dtype for all tied names (the dtype of the shared Parameter)";
		if (dtl_check_add_tensor(c, f, b, NULL) < 0 ||
		    dtl_check_add_tensor(c, f, a, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

DTL_RULE(dt602) = {
    .id = "DT602",
    .name = "tied-weights-dtype",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "tied tensors are declared with different dtypes",
    .explanation =
        "Hugging Face ties weights (lm_head and the input embedding) by sharing one "
        "Parameter, so tied names always have one dtype. A manifest giving them different "
        "dtypes cannot describe a real model; every finding that depends on their dtype "
        "would be guesswork.",
    .example = "model: {tied: [[lm_head.weight, model.embed_tokens.weight]]}\n"
               "tensors:\n"
               "  - {name: model.embed_tokens.weight, shape: [8, 4], dtype: bfloat16}\n"
               "  - {name: lm_head.weight, shape: [8, 4], dtype: float32}",
    .fix = "Declare the shared Parameter's dtype for every tied name.",
    .facts = "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py",
    .check = dt602_check,
};
