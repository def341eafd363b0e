/* SPDX-License-Identifier: MIT */
/*
 * A NeMo Automodel recipe YAML, read the way Automodel v0.5.0 builds the set-up
 * (rules/versions.yaml recipes: automodel-*):
 *
 * - the model is NeMoAutoModelForCausalLM.from_pretrained(torch_dtype=model.torch_dtype),
 *   "auto" by default (the checkpoint's dtype); a string goes through dtype_from_str
 *   ("bf16", "bfloat16", "torch.float32", ... case-insensitive; anything else is
 *   "KeyError: Unknown dtype string");
 * - distributed.strategy (default "fsdp2") picks the strategy config (_STRATEGY_MAP: fsdp2,
 *   megatron_fsdp, megatron-fsdp, mfsdp, ddp; else "ValueError: Unknown strategy"); a
 *   distributed._target_ is a Hydra meta key and is dropped;
 * - FSDP2Config's mp_policy defaults to MixedPrecisionPolicy(param_dtype=bfloat16,
 *   reduce_dtype=float32, output_dtype=bfloat16), with reduce_dtype=bfloat16 up to 0.4.0 (the
 *   simulation picks it by the plan's nemo-automodel version); distributed.mp_policy overrides it,
 * its dtype strings through dtype_from_str, the fields left out taking MixedPrecisionPolicy's own
 * defaults (None: the parameter's dtype); distributed.offload_policy adds CPUOffloadPolicy.
 *
 * - freeze_config (apply_parameter_freezing) freezes the vision tower (by default), the audio
 *   tower and the language model by module name, in the trainer stage.
 *
 * Not simulated, each a DT604 entry: tensor, pipeline, context and expert parallelism
 * (tp/pp/cp/ep_size above 1), Megatron-FSDP and DDP, and Automodel's own LoRA
 * (peft: nemo_automodel.components._peft.lora.PeftConfig), which patches the linears itself
 * instead of going through Hugging Face PEFT.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "import-framework.h"

static bool detect(const struct dtl_node *root)
{
	const struct dtl_node *model = dtl_node_get(root, "model");
	const struct dtl_node *target = model ? dtl_node_get(model, "_target_") : NULL;
	return target && target->type == DTL_NODE_STRING &&
	       strncmp(target->string.text, "nemo_automodel.", 15) == 0;
}

/* dtype_from_str's floating entries, "torch." taken off and compared case-insensitively */
static const struct {
	const char *name;
	enum dtl_dtype dtype;
} dtypes[] = {{"float", DTL_DTYPE_F32},     {"float32", DTL_DTYPE_F32}, {"float64", DTL_DTYPE_F64},
              {"double", DTL_DTYPE_F64},    {"float16", DTL_DTYPE_F16}, {"half", DTL_DTYPE_F16},
              {"bfloat16", DTL_DTYPE_BF16}, {"bf16", DTL_DTYPE_BF16}};

static int parse_dtype(struct dtl_fw_value v, const char *key, enum dtl_dtype *ret)
{
	const char *text;
	int r;

	if ((r = dtl_schema_string(v.s, v.node, key, &text)) < 0)
		return r;
	const char *name = strncasecmp(text, "torch.", 6) == 0 ? text + 6 : text;
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (strcasecmp(name, dtypes[i].name) == 0) {
			*ret = dtypes[i].dtype;
			return 0;
		}
	return dtl_schema_fail(v.s, v.node,
	                       "Automodel has no floating dtype '%s': 'KeyError: Unknown dtype "
	                       "string: %s' (dtype_from_str: bf16, bfloat16, float16, half, "
	                       "float32, float, float64, double, each maybe after 'torch.')",
	                       text, text);
}

/* a dtype key: dflt when absent or null */
static int dtype(struct dtl_fw_config *c, const char *key, enum dtl_dtype dflt, enum dtl_dtype *ret,
                 struct dtl_loc *loc)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	*ret = dflt;
	*loc = dtl_fw_loc(c, v);
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	return parse_dtype(v, key, ret);
}

/* model.torch_dtype: "auto" (default) keeps the checkpoint's dtypes */
static int load_dtype(struct dtl_fw_config *c)
{
	struct dtl_model_info *model = &c->m->model;
	struct dtl_fw_value v = dtl_fw_get(c, "model.torch_dtype");

	model->load_mode = DTL_LOAD_AUTO;
	model->load_dtype_loc = dtl_fw_loc(c, v);
	if (!v.node ||
	    (v.node->type == DTL_NODE_STRING && strcmp(v.node->string.text, "auto") == 0))
		return 0;
	model->load_mode = DTL_LOAD_DTYPE;
	return parse_dtype(v, "torch_dtype", &model->load_dtype);
}

/* a size: absent, null or "none" is the default; an integer otherwise */
static int size(struct dtl_fw_config *c, const char *key, int64_t *ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	*ret = 1;
	if (!v.node || v.node->type == DTL_NODE_NULL ||
	    (v.node->type == DTL_NODE_STRING && strcasecmp(v.node->string.text, "none") == 0))
		return 0;
	return dtl_schema_int(v.s, v.node, key, -1, INT32_MAX, ret);
}

static int parallel_unmodelled(struct dtl_fw_config *c)
{
	static const struct {
		const char *key, *what;
	} dims[] = {
	    {"distributed.tp_size", "tensor parallelism (distributed.tp_size)"},
	    {"distributed.pp_size", "pipeline parallelism (distributed.pp_size)"},
	    {"distributed.cp_size", "context parallelism (distributed.cp_size)"},
	    {"distributed.ep_size", "expert parallelism (distributed.ep_size)"},
	};
	int64_t n;
	int r;

	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		if ((r = size(c, dims[i].key, &n)) < 0)
			return r;
		if (n > 1 && (r = dtl_fw_unmodelled(c, dtl_fw_loc(c, dtl_fw_get(c, dims[i].key)),
		                                    dims[i].what, "every parameter")) < 0)
			return r;
	}
	return 0;
}

/* peft: Automodel's own LoRA, not Hugging Face PEFT */
static int peft_unmodelled(struct dtl_fw_config *c)
{
	struct dtl_fw_value v = dtl_fw_get(c, "peft");
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	struct dtl_fw_value target = dtl_fw_get(c, "peft.target_modules");
	const char *targets = target.node && target.node->type == DTL_NODE_STRING
	                          ? target.node->string.text
	                          : "peft.target_modules";
	return dtl_fw_unmodelled(
	    c, dtl_fw_loc(c, v),
	    "Automodel's own LoRA (nemo_automodel.components._peft.lora, not Hugging Face PEFT)",
	    dtl_arena_sprintf(c->arena, "the adapters on the linears matching '%s'", targets));
}

/* FSDP2Config: mp_policy (its default, or distributed.mp_policy) and offload_policy */
static int fsdp2(struct dtl_fw_config *c, struct dtl_loc at)
{
	struct dtl_plan *plan = &c->m->plan;
	struct dtl_fw_value mp = dtl_fw_get(c, "distributed.mp_policy");
	struct dtl_fw_value off = dtl_fw_get(c, "distributed.offload_policy");
	/* an override of one field alone makes a policy of that field too */
	bool given = (mp.node && mp.node->type == DTL_NODE_MAP) ||
	             dtl_fw_get(c, "distributed.mp_policy.param_dtype").node ||
	             dtl_fw_get(c, "distributed.mp_policy.reduce_dtype").node;
	int r;

	plan->strategy = DTL_STRATEGY_FSDP2;
	plan->strategy_loc = at;
	/* MixedPrecisionPolicy's own defaults are None when the YAML names the policy */
	if ((r = dtype(c, "distributed.mp_policy.param_dtype",
	               given ? DTL_DTYPE_NONE : DTL_DTYPE_BF16, &plan->fsdp.param_dtype,
	               &plan->fsdp.param_dtype_loc)) < 0 ||
	    (r = dtype(c, "distributed.mp_policy.reduce_dtype",
	               given ? DTL_DTYPE_NONE : DTL_DTYPE_F32, &plan->fsdp.reduce_dtype,
	               &plan->fsdp.reduce_dtype_loc)) < 0)
		return r;
	/* a default is the policy's: located at mp_policy, or at the strategy without one */
	struct dtl_loc policy = given ? dtl_fw_loc(c, mp) : at;
	if (!dtl_fw_get(c, "distributed.mp_policy.param_dtype").node)
		plan->fsdp.param_dtype_loc = policy;
	if (!dtl_fw_get(c, "distributed.mp_policy.reduce_dtype").node)
		plan->fsdp.reduce_dtype_loc = policy;
	/* FSDP2Config's own policy reduces in float32 since 0.5.0 only: the simulation takes the
	 * version's (rules/versions.yaml automodel-fsdp2-default-reduce-fp32) */
	plan->fsdp.reduce_by_automodel = !given;
	if (off.node && off.node->type == DTL_NODE_MAP) {
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = dtl_fw_loc(c, off);
	}
	return 0;
}

static int strategy(struct dtl_fw_config *c)
{
	struct dtl_fw_value v = dtl_fw_get(c, "distributed.strategy");
	struct dtl_loc at = dtl_fw_loc(c, v.node ? v : dtl_fw_get(c, "distributed"));
	const char *name = "fsdp2";
	int r;

	if (v.node && (r = dtl_schema_string(v.s, v.node, "strategy", &name)) < 0)
		return r;
	if (strcasecmp(name, "fsdp2") == 0)
		return fsdp2(c, at);
	if (strcasecmp(name, "ddp") == 0) {
		c->m->plan.strategy = DTL_STRATEGY_DDP;
		c->m->plan.strategy_loc = at;
		return dtl_fw_unmodelled(c, at, "Automodel's DDP strategy (DDPConfig)",
		                         "every parameter");
	}
	if (strcasecmp(name, "megatron_fsdp") == 0 || strcasecmp(name, "megatron-fsdp") == 0 ||
	    strcasecmp(name, "mfsdp") == 0)
		return dtl_fw_unmodelled(c, at, "Megatron-FSDP (distributed.strategy)",
		                         "every parameter");
	return dtl_schema_fail(
	    v.s, v.node,
	    "Automodel refuses this strategy: 'ValueError: Unknown strategy: %s. "
	    "Valid strategies: ['ddp', 'fsdp2', 'megatron-fsdp', "
	    "'megatron_fsdp', 'mfsdp']'",
	    name);
}

/* freeze_config: apply_parameter_freezing, when the recipe has the section (the VLM recipe
 * passes it through from_pretrained; absent or null freezes nothing). Each flag freezes the
 * modules whose name holds one of its words (components/utils/model_utils.py#L231-L277 at
 * v0.4.0, the same words at v0.5.0); freeze_vision_tower defaults to true, the others to
 * false. freeze_embeddings, which the Gemma 4 recipes set, is read by no release. */
static int freeze(struct dtl_fw_config *c)
{
	static const struct {
		const char *key;
		unsigned flag;
		bool dflt;
	} flags[] = {{"freeze_config.freeze_vision_tower", DTL_AM_FREEZE_VISION, true},
	             {"freeze_config.freeze_audio_tower", DTL_AM_FREEZE_AUDIO, false},
	             {"freeze_config.freeze_language_model", DTL_AM_FREEZE_LANGUAGE, false}};
	struct dtl_fw_value section = dtl_fw_get(c, "freeze_config");
	int r;

	if (!section.node || section.node->type != DTL_NODE_MAP)
		return 0;
	c->m->recipe.am_freeze_loc = dtl_fw_loc(c, section);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct dtl_fw_value v = dtl_fw_get(c, flags[i].key);
		bool on = flags[i].dflt;
		if (v.node && v.node->type != DTL_NODE_NULL &&
		    (r = dtl_schema_bool(v.s, v.node, flags[i].key, &on)) < 0)
			return r;
		if (on)
			c->m->recipe.am_freeze |= flags[i].flag;
	}
	return 0;
}

static int import(struct dtl_fw_config *c)
{
	int r;

	c->m->recipe.kind = "nemo-automodel";
	if ((r = load_dtype(c)) < 0 || (r = strategy(c)) < 0 || (r = parallel_unmodelled(c)) < 0 ||
	    (r = peft_unmodelled(c)) < 0 || (r = freeze(c)) < 0)
		return r;
	return 0;
}

const struct dtl_framework_importer dtl_importer_automodel = {
    .kind = "NeMo Automodel recipe",
    .detect = detect,
    .import = import,
};
