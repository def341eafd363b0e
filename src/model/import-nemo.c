/* SPDX-License-Identifier: MIT */
/*
 * A NeMo (1.x-style, Hydra YAML) Megatron training config: examples/nlp/language_modeling/
 * conf/megatron_gpt_config.yaml and the tuning configs, read the way NeMo 2.4.0's
 * MegatronTrainerBuilder reads them (rules/versions.yaml recipes: nemo-*).
 *
 * NeMo trains these models through Megatron-Core (tensor and pipeline parallelism, its own
 * distributed optimizer, its own adapter modules), which dtypelint does not simulate. What
 * can be read is read and said: trainer.precision (the precision plugin),
 * model.megatron_amp_O2, the parallel sizes, model.fsdp and model.peft.peft_scheme; the
 * model itself is reported as not modelled (DT604) with those values in the finding. One
 * refusal is read: megatron_amp_O2 with a float32 precision, which the model's Float16Module
 * wrapper raises on (o2_check).
 */
#include <errno.h>
#include <string.h>

#include "import-framework.h"

static bool detect(const struct dtl_node *root)
{
	const struct dtl_node *trainer = dtl_node_get(root, "trainer");
	const struct dtl_node *model = dtl_node_get(root, "model");
	return trainer && trainer->type == DTL_NODE_MAP && dtl_node_get(trainer, "precision") &&
	       model && model->type == DTL_NODE_MAP &&
	       (dtl_node_get(model, "megatron_amp_O2") || dtl_node_get(model, "mcore_gpt") ||
	        dtl_node_get(model, "tensor_model_parallel_size"));
}

/* a scalar's text as NeMo compares it (16 and '16' alike); NULL when absent or null */
static const char *scalar(const struct dtl_fw_value v)
{
	if (!v.node || v.node->type == DTL_NODE_NULL || v.node->type == DTL_NODE_MAP ||
	    v.node->type == DTL_NODE_SEQ)
		return NULL;
	return v.node->type == DTL_NODE_STRING ? v.node->string.text : v.node->raw;
}

/*
 * MegatronTrainerBuilder._plugins: 16, '16', '16-mixed' are fp16 mixed precision (with a
 * GradScaler unless model.fsdp), 'bf16' and 'bf16-mixed' bf16 mixed precision; with
 * megatron_amp_O2 (and no distributed optimizer) MegatronHalfPrecisionPlugin keeps the
 * parameters in half precision with float32 main copies, otherwise
 * PipelineMixedPrecisionPlugin autocasts. 32 and '32' are float32; other values go to
 * Lightning untouched.
 */
static int precision(struct dtl_fw_config *c, bool o2, const char **ret_plugin)
{
	static const struct {
		const char *text;
		enum dtl_precision p;
	} names[] = {{"16", DTL_PRECISION_FP16},   {"16-mixed", DTL_PRECISION_FP16},
	             {"bf16", DTL_PRECISION_BF16}, {"bf16-mixed", DTL_PRECISION_BF16},
	             {"32", DTL_PRECISION_FP32},   {"32-true", DTL_PRECISION_FP32}};
	struct dtl_fw_value v = dtl_fw_get(c, "trainer.precision");
	const char *text = scalar(v);

	*ret_plugin = "none (Lightning's default, float32)";
	if (!text)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(text, names[i].text) != 0)
			continue;
		c->m->plan.precision = names[i].p;
		c->m->plan.precision_loc = dtl_fw_loc(c, v);
		*ret_plugin = names[i].p == DTL_PRECISION_FP32 ? "none (float32)"
		              : o2 ? "MegatronHalfPrecisionPlugin (half-precision parameters, "
		                     "float32 main copies)"
		                   : "PipelineMixedPrecisionPlugin (autocast)";
		return 0;
	}
	*ret_plugin = dtl_arena_sprintf(c->arena, "Lightning's for '%s' (not read)", text);
	dtl_fw_warn(c, dtl_fw_loc(c, v),
	            dtl_arena_sprintf(c->arena,
	                              "trainer.precision '%s' is left to Lightning by NeMo's "
	                              "trainer builder: not read",
	                              text));
	return *ret_plugin ? 0 : -ENOMEM;
}

/* 32, '32' and '32-true': float32 to NeMo's torch_dtype_from_precision */
static bool fp32_text(const char *text)
{
	return text && (strcmp(text, "32") == 0 || strcmp(text, "32-true") == 0);
}

/*
 * MegatronGPTModel.__init__ wraps the model for megatron_amp_O2 (_wrap_model_for_O2) in a
 * Float16Module, which takes only fp16 and bf16: with mcore_gpt Megatron-Core's (config.fp16
 * and config.bf16 both false for a float32 precision), without it NeMo's own, given
 * cfg.precision: model.precision when set, else trainer.precision as Lightning normalises it
 * ('32-true' for 32, '32' and none). A value Lightning is left to has been warned about and
 * is not judged here.
 */
static int o2_check(struct dtl_fw_config *c, bool mcore)
{
	struct dtl_fw_value own = dtl_fw_get(c, "model.precision");
	struct dtl_fw_value v = dtl_fw_get(c, "trainer.precision");
	const char *shown = "32-true", *key = "trainer.precision";

	if (own.node && own.node->type != DTL_NODE_NULL) {
		if (!fp32_text(scalar(own)))
			return 0;
		v = own;
		shown = scalar(own);
		key = "model.precision";
	} else if (scalar(v)) {
		if (!fp32_text(scalar(v)))
			return 0;
	} else {
		v = dtl_fw_get(c, "model.megatron_amp_O2");
	}
	if (mcore)
		return dtl_schema_fail(
		    v.s, v.node,
		    "NeMo's megatron_amp_O2 wraps the model in Megatron-Core's "
		    "Float16Module, which refuses a float32 precision: 'Exception: "
		    "Either config.fp16 or config.bf16 should be True.' (set %s to bf16 or 16, "
		    "or megatron_amp_O2 to False)",
		    key);
	return dtl_schema_fail(v.s, v.node,
	                       "NeMo's megatron_amp_O2 wraps the model in NeMo's Float16Module, "
	                       "which refuses a float32 precision: 'Exception: precision %s is not "
	                       "supported. Float16Module (megatron_amp_O2) supports only fp16 and "
	                       "bf16.' (set %s to bf16 or 16, or megatron_amp_O2 to False)",
	                       shown, key);
}

static int import(struct dtl_fw_config *c)
{
	struct dtl_fw_value tp = dtl_fw_get(c, "model.tensor_model_parallel_size");
	struct dtl_fw_value pp = dtl_fw_get(c, "model.pipeline_model_parallel_size");
	struct dtl_fw_value peft = dtl_fw_get(c, "model.peft.peft_scheme");
	struct dtl_fw_value model = dtl_fw_get(c, "model");
	const char *plugin, *scheme = scalar(peft);
	bool o2, mcore, fsdp;
	int r;

	c->m->recipe.kind = "NeMo Megatron (not simulated)";
	/* NeMo's own Lightning trainer: no HF Trainer, no TRL */
	c->m->plan.trainer = "none";
	c->m->plan.trainer_loc = dtl_fw_loc(c, dtl_fw_get(c, "trainer"));
	if ((r = dtl_fw_bool(c, "model.megatron_amp_O2", false, &o2)) < 0 ||
	    (r = dtl_fw_bool(c, "model.mcore_gpt", false, &mcore)) < 0 ||
	    (r = dtl_fw_bool(c, "model.fsdp", false, &fsdp)) < 0 ||
	    (r = precision(c, o2, &plugin)) < 0)
		return r;
	if (o2 && (r = o2_check(c, mcore)) < 0)
		return r;
	const char *what = dtl_arena_sprintf(
	    c->arena,
	    "NeMo's Megatron model (read: mcore_gpt %s; trainer.precision plugin %s; "
	    "megatron_amp_O2 %s; tensor parallel %s, pipeline parallel %s; model.fsdp %s; "
	    "peft_scheme %s)",
	    mcore ? "true" : "false", plugin, o2 ? "true" : "false", scalar(tp) ? scalar(tp) : "1",
	    scalar(pp) ? scalar(pp) : "1", fsdp ? "true" : "false", scheme ? scheme : "none");
	if (!what)
		return -ENOMEM;
	return dtl_plan_unmodelled(
	    &c->m->plan, c->arena,
	    &(struct dtl_unmodelled){
	        .what = what,
	        .touches = "every parameter: Megatron builds, shards, casts and adapts the model "
	                   "by its own code, which dtypelint does not simulate; the dtypes shown "
	                   "are the checkpoint's",
	        .loc = dtl_fw_loc(c, model)});
}

/* the keys this importer reads */
static bool reads(const char *key)
{
	static const char *const keys[] = {"trainer.precision",
	                                   "model.precision",
	                                   "model.megatron_amp_O2",
	                                   "model.mcore_gpt",
	                                   "model.fsdp",
	                                   "model.tensor_model_parallel_size",
	                                   "model.pipeline_model_parallel_size",
	                                   "model.peft.peft_scheme",
	                                   NULL};
	for (const char *const *k = keys; *k; k++)
		if (strcmp(key, *k) == 0)
			return true;
	return false;
}

const struct dtl_framework_importer dtl_importer_nemo = {
    .kind = "NeMo Megatron config",
    .id = "nemo",
    .reads = reads,
    .detect = detect,
    .import = import,
};
