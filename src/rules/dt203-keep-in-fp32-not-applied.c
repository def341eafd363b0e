/* SPDX-License-Identifier: MIT */
/* DT203 keep-in-fp32-not-applied: a _keep_in_fp32_modules entry is not applied for this dtype (or
 * applied . */

#include <errno.h>

#include "rule-check.h"
#include "keep-set.h"

/* How many tensors each entry of a compiled keep list matches, and the first (arrays in the
 * check's arena). */
static int keep_counts(struct dtl_check *c, const struct dtl_keep_set *set, uint32_t **count,
                       uint32_t **first)
{
	const struct dtl_sim *sim = c->sim;
	*count = dtl_arena_calloc(c->arena, set->entry_count + 1, sizeof(uint32_t));
	*first = dtl_arena_calloc(c->arena, set->entry_count + 1, sizeof(uint32_t));
	if (!*count || !*first)
		return -ENOMEM;
	return dtl_keep_set_count(set, (const char *const *)sim->t.name, sim->t.name_len,
	                          sim->t.count, *count, *first);
}

/* What DT203 says, out of a window where the plain list applies under bfloat16 too, in the
 * 4.50 one and in the v5 one. */
struct dt203_text {
	const char *what, *dtype, *effect, *fix;
};

static const struct dt203_text dt203_texts[3] = {
    {"is not applied under bfloat16", "bfloat16",
     "_keep_in_fp32_modules applies only under float16; use _keep_in_fp32_modules_strict to "
     "keep it float32 under bfloat16",
     "nothing to do if bf16 is intended; to keep them float32 list the entry in "
     "keep_in_fp32_strict"},
    {"is applied under bfloat16 by this transformers (4.50.0 to 4.50.3 apply it under every "
     "dtype)",
     "float32",
     "4.50.x applied the plain list under every load dtype (4.49 and 4.51 under float16 "
     "only); mixed dtypes appear where the model class did not intend them",
     "upgrade transformers to 4.51.0 or later, or expect these tensors in float32"},
    {"is applied under bfloat16 by this transformers (the v5 regression window)", "float32",
     "the plain list was applied under bf16 until PR #43683; mixed dtypes appear where the "
     "model class did not intend them",
     "upgrade transformers past the fix (PR #43683), or expect these tensors in float32"},
};

/* DT203 — a plain keep-in-fp32 entry this transformers does not apply for this dtype. */
static int dt203_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_manifest *m = sim->manifest;
	const struct dtl_patterns *plain = &sim->model.keep_in_fp32;
	enum dtl_dtype target;

	if (m->model.load_mode == DTL_LOAD_AS_IS || m->model.load_mode == DTL_LOAD_NONE)
		return 0;
	target =
	    m->model.load_mode == DTL_LOAD_DTYPE ? m->model.load_dtype : m->model.checkpoint_dtype;
	if (target != DTL_DTYPE_BF16)
		return 0;
	const struct dt203_text *text =
	    &dt203_texts[dtl_sim_behavior(sim, DTL_B_HF_KEEP_450_WINDOW)         ? 1
	                 : dtl_sim_behavior(sim, DTL_B_HF_KEEP_PLAIN_UNDER_BF16) ? 2
	                                                                         : 0];
	uint32_t *count, *first_tensor;
	int r;
	if ((r = keep_counts(c, sim->model.keep_set, &count, &first_tensor)) < 0)
		return r;
	for (size_t k = 0; k < plain->count; k++) {
		const struct dtl_pattern *e = &plain->items[k];
		uint32_t first = first_tensor[k];
		size_t n = count[k];
		if (!n)
			continue;
		/* a profile's entry is reported at the manifest's architecture line */
		struct dtl_loc loc =
		    sim->model.keep_from_profile ? m->model.architecture_loc : e->loc;
		struct dtl_finding *f = dtl_check_report(
		    c, c->rule->severity, loc,
		    "keep_in_fp32 entry '%s'%s %s: %zu tensor(s) load in %s", e->text,
		    sim->model.keep_from_profile ? " (from the architecture profile)" : "",
		    text->what, n, text->dtype);
		if (!f)
			return -ENOMEM;
		f->effect = text->effect;
		f->error_versions = dtl_check_version(c, DTL_FW_TRANSFORMERS);
		f->fix = text->fix;
		if (dtl_check_add_tensor(c, f, first, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

DTL_RULE(dt203) = {
    .id = "DT203",
    .name = "keep-in-fp32-not-applied",
    .severity = DTL_SEVERITY_INFO,
    .summary = "a _keep_in_fp32_modules entry is not applied for this dtype (or applied "
               "unexpectedly)",
    .explanation =
        "transformers applies the plain _keep_in_fp32_modules list only when loading in "
        "float16; under bfloat16 those modules load in bfloat16. 4.50.0 to 4.50.3 applied it "
        "under every load dtype, and the v5 development line under bfloat16 too until PR "
        "#43683 (2026-02-02). The strict list applies "
        "under float16 and bfloat16 (from 4.53.0). Reported only when the manifest asks "
        "dtypelint to replay loading (load_dtype auto or a dtype).",
    .example = "model: {load_dtype: bfloat16, keep_in_fp32: [wo]}",
    .fix = "Use keep_in_fp32_strict for what must stay float32 under bfloat16.",
    .facts = "https://github.com/huggingface/transformers/pull/39058 "
             "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py",
    .check = dt203_check,
};
