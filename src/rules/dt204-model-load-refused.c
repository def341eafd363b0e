/* SPDX-License-Identifier: MIT */
/* DT204 model-load-refused: transformers refuses to build or load the model as it is set up:
 * the dtype it is built under, or a keep-in-fp32 entry that names no module. */
#include <errno.h>
#include <string.h>

#include "rule-util.h"

/* The class a transformers error names: the manifest's architecture, else a placeholder. */
static const char *class_name(const struct dtl_check *c)
{
	const char *arch = c->sim->manifest->model.architecture;

	return arch ? arch : "<model class>";
}

/* torch.set_default_dtype refuses a float8 dtype: its storage class is looked up by name and
 * there is none (torch 2.13.0: "couldn't find storage object Float8_e4m3fnStorage", run for
 * real). Both transformers lines let float8 through their is_floating_point check to it:
 * 4.x's _set_default_dtype and 5.x's local_torch_dtype (transformers-local-torch-dtype). */
static int float8_refused(struct dtl_check *c, enum dtl_dtype d)
{
	const char *storage =
	    d == DTL_DTYPE_F8_E4M3FN ? "Float8_e4m3fnStorage" : "Float8_e5m2Storage";
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, c->sim->load.loc,
	    "from_pretrained builds the model under torch.set_default_dtype(%s), which torch "
	    "refuses for a float8 dtype: the model is never built",
	    dtl_dtype_torch_name(d));
	if (!f)
		return -ENOMEM;
	dtl_check_predict(
	    c, f,
	    dtl_arena_sprintf(c->arena, "TypeError: couldn't find storage object %s", storage),
	    "in from_pretrained, before any weight is read (transformers sets the load dtype as "
	    "torch's default to build the model)",
	    DTL_FW_TORCH,
	    "load in bfloat16 (load_dtype: bfloat16) and cast to float8 after from_pretrained, "
	    "or quantize through a quantization_config");
	return f->error_text ? 0 : -ENOMEM;
}

/* A non-floating dtype is refused by transformers itself, in words that changed in 5.0.0
 * (rules/versions.yaml transformers-local-torch-dtype). */
static int integer_refused(struct dtl_check *c, enum dtl_dtype d)
{
	const char *torch_name = dtl_dtype_torch_name(d);
	bool v5 = dtl_sim_behavior(c->sim, DTL_B_HF_LOCAL_TORCH_DTYPE);
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, c->sim->load.loc,
	    "from_pretrained is asked to build the model under %s, which is not a floating dtype: "
	    "transformers refuses it",
	    torch_name);
	if (!f)
		return -ENOMEM;
	const char *text =
	    v5 ? dtl_arena_sprintf(c->arena,
	                           "ValueError: %s cannot be instantiated under `dtype=%s` as it's "
	                           "not a floating-point dtype",
	                           class_name(c), torch_name)
	       : dtl_arena_sprintf(c->arena,
	                           "ValueError: Can't instantiate %s model under dtype=%s since it "
	                           "is not a floating point dtype",
	                           class_name(c), torch_name);
	if (!text)
		return -ENOMEM;
	dtl_check_predict(c, f, text, "in from_pretrained, before any weight is read",
	                  DTL_FW_TRANSFORMERS,
	                  "load in a floating dtype (bfloat16, float16 or float32); integer "
	                  "weights come from a quantization_config, not from the load dtype");
	return 0;
}

/* The dtype the model is built under (sim->load, resolved by the load stage). */
static int check_load_dtype(struct dtl_check *c)
{
	enum dtl_dtype d = c->sim->load.target;

	if (c->sim->load.mode == DTL_LOAD_AS_IS || d == DTL_DTYPE_NONE)
		return 0;
	if (d == DTL_DTYPE_F8_E4M3FN || d == DTL_DTYPE_F8_E5M2)
		return float8_refused(c, d);
	if (!dtl_dtype_is_floating(d))
		return integer_refused(c, d);
	return 0;
}

/* Whether a part of a name is all digits (a ModuleList index: Python's str.isnumeric). */
static bool all_digits(const char *part, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (part[k] < '0' || part[k] > '9')
			return false;
	return true;
}

/* The components post_init compares the keep entries with: every dot-separated part of the
 * name of a parameter the model builds (named_parameters: no tied alias, no adapter, no
 * buffer), numbers, "weight" and "bias" left out. */
static int module_components(struct dtl_check *c, struct dtl_strmap *set)
{
	const struct dtl_sim *sim = c->sim;

	dtl_strmap_init(set, c->arena);
	for (size_t i = 0; i < sim->t.count; i++) {
		if (!dtl_check_is_param(sim, (uint32_t)i) || (sim->t.flags[i] & DTL_TF_ADAPTER))
			continue;
		const char *name = sim->t.name[i];
		size_t len = sim->t.name_len[i], start = 0;
		for (size_t k = 0; k <= len; k++) {
			if (k < len && name[k] != '.')
				continue;
			const char *part = name + start;
			size_t n = k - start;
			start = k + 1;
			if (!n || all_digits(part, n) || (n == 6 && !memcmp(part, "weight", 6)) ||
			    (n == 4 && !memcmp(part, "bias", 4)))
				continue;
			if (dtl_strmap_put(set, part, n, 1) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* One finding for an entry of list that is no component (list: the class attribute). */
static int entry_refused(struct dtl_check *c, const struct dtl_pattern *e, const char *list)
{
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, e->loc,
	    "the %s entry '%.*s' is no whole module name of the model (no dot-separated part of a "
	    "parameter name is '%.*s'): this transformers refuses it when the model is built",
	    list, (int)e->len, e->text, (int)e->len, e->text);
	if (!f)
		return -ENOMEM;
	const char *text = dtl_arena_sprintf(c->arena,
	                                     "ValueError: %.*s was specified in the `%s` list, but "
	                                     "is not part of the modules in %s",
	                                     (int)e->len, e->text, list, class_name(c));
	if (!text)
		return -ENOMEM;
	dtl_check_predict(c, f, text,
	                  "in post_init, when the model is built (from_pretrained, from_config or "
	                  "the class itself), whatever the dtype",
	                  DTL_FW_TRANSFORMERS,
	                  "name a module by one whole component of the parameter names (the "
	                  "module's attribute name), or use transformers 5.0.0 or later, which "
	                  "has no such check");
	return 0;
}

/* Every entry of one keep list that the set of components lacks. */
static int check_list(struct dtl_check *c, const struct dtl_strmap *set,
                      const struct dtl_patterns *entries, const char *list)
{
	int r;

	for (size_t k = 0; k < entries->count; k++) {
		const struct dtl_pattern *e = &entries->items[k];
		if (dtl_strmap_get(set, e->text, e->len) >= 0)
			continue;
		if ((r = entry_refused(c, e, list)) < 0)
			return r;
	}
	return 0;
}

/* rules/versions.yaml transformers-keep-in-fp32-module-check (4.51.0 to 4.57.6; the strict
 * list from 4.53.0, transformers-keep-in-fp32-strict). The lists of an architecture profile
 * are the published classes', which pass the check: only the manifest's own entries are
 * judged, and only against a model whose parameters are listed. */
static int check_keep_entries(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_model_view *v = &sim->model;
	bool plain = !v->keep_from_profile && v->keep_in_fp32.count;
	bool strict = !v->strict_from_profile && v->keep_in_fp32_strict.count &&
	              dtl_sim_behavior(sim, DTL_B_HF_KEEP_STRICT);
	struct dtl_strmap set;
	int r;

	if (!dtl_sim_behavior(sim, DTL_B_HF_KEEP_MODULE_CHECK) || (!plain && !strict))
		return 0;
	if ((r = module_components(c, &set)) < 0)
		return r;
	if (!set.count)
		return 0;
	if (plain && (r = check_list(c, &set, &v->keep_in_fp32, "_keep_in_fp32_modules")) < 0)
		return r;
	if (strict &&
	    (r = check_list(c, &set, &v->keep_in_fp32_strict, "_keep_in_fp32_modules_strict")) < 0)
		return r;
	return 0;
}

static int dt204_check(struct dtl_check *c)
{
	int r;

	if ((r = check_load_dtype(c)) < 0)
		return r;
	return check_keep_entries(c);
}

DTL_RULE(dt204) = {
    .id = "DT204",
    .name = "model-load-refused",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "transformers refuses to build or load the model as it is set up",
    .explanation =
        "from_pretrained builds the model under torch.set_default_dtype(dtype), the dtype it "
        "is asked for (or, with \"auto\", and with None from transformers 5.0, the "
        "checkpoint's). torch refuses a float8 dtype there: 'TypeError: couldn't find storage "
        "object Float8_e4m3fnStorage' (Float8_e5m2Storage for float8_e5m2), so a model is "
        "never loaded in float8 that way, nor a checkpoint saved in float8 with \"auto\". "
        "transformers refuses an integer or bool dtype itself with a ValueError ('LlamaForCausalLM "
        "cannot be instantiated under `dtype=torch.int8` as it's not a floating-point dtype' "
        "from 5.0.0; 'Can't instantiate LlamaForCausalLM model under dtype=torch.int8 since it "
        "is not a floating point dtype' before). transformers 4.51.0 to 4.57.6 also check, in "
        "post_init, that every _keep_in_fp32_modules entry (and _keep_in_fp32_modules_strict "
        "from 4.53.0) is one whole dot-separated part of a parameter name: 'ValueError: Dense "
        "was specified in the `_keep_in_fp32_modules` list, but is not part of the modules in "
        "T5ForConditionalGeneration' for an entry that is only a substring (5.0.0 dropped the "
        "check and matches substrings). The manifest's own keep entries are judged; an "
        "architecture profile's are the published class's, which pass.",
    .example = "model: {architecture: LlamaForCausalLM, checkpoint_dtype: bfloat16,\n"
               "        load_dtype: float8_e4m3fn}",
    .fix = "Load in bfloat16, float16 or float32 and cast (or quantize through a "
           "quantization_config) afterwards; name a keep-in-fp32 module by a whole component "
           "of the parameter names, or use transformers 5.0.0 or later.",
    .facts = "https://github.com/huggingface/transformers/blob/v5.0.0/src/transformers/"
             "modeling_utils.py (local_torch_dtype); https://github.com/huggingface/"
             "transformers/blob/v4.57.6/src/transformers/modeling_utils.py (_set_default_dtype, "
             "post_init's keep check, first in 4.51.0); "
             "https://github.com/pytorch/pytorch/blob/v2.13.0/torch/__init__.py "
             "(set_default_dtype); raised by transformers 4.57.6, 5.0.0 and 5.24.0 with torch "
             "2.13.0 (tests/oracle/DISAGREEMENTS.md D36, D46)",
    .check = dt204_check,
};
