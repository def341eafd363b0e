/* SPDX-License-Identifier: MIT */
/*
 * A torchtune recipe config (YAML) and `tune run` overrides, read the way torchtune 0.6.1's
 * recipes build the model (rules/versions.yaml recipes: torchtune-*):
 *
 * - the recipe (named by the config's own "tune run ... RECIPE --config" comment line) decides
 *   the strategy: a *_distributed recipe shards with FSDP2 (training.shard_model: fully_shard
 *   on every "layers.N" and every custom_sharded_layers name, then the root, no mixed
 *   precision policy), a *_single_device one does not shard;
 * - `dtype` (training.get_dtype: fp16, bf16, fp32, fp64; none is float32) is the dtype of every
 *   parameter: the model is built under set_default_dtype(dtype) and the checkpoint is copied
 *   into it, LoRA matrices included (they are created under the same default dtype);
 * - every training recipe refuses fp16 in its constructor, with its own message;
 * - a lora_* / qlora_* model builder puts LoRA on the attention projections named in
 *   lora_attn_modules, the MLP (apply_lora_to_mlp) and the output (apply_lora_to_output);
 *   only the adapters train.
 *
 * The tensor table is the Hugging Face checkpoint given as INPUT (FullModelHFCheckpointer
 * reads it), so torchtune's module names are mapped to the checkpoint's
 * (models/convert_weights.py _FROM_HF). torchao NF4 base weights (QLoRA) are not simulated.
 */
#include <errno.h>
#include <string.h>

#include "import-framework.h"

#define TT_ERROR_FULL                                                                              \
	"full fp16 training is not supported with this recipe. Please use bf16 or fp32 "           \
	"instead."
#define TT_ERROR_PRECISION                                                                         \
	"fp16 precision is not supported in this recipe. Please use fp32 or bf16."

/* The recipes torchtune 0.6.1 ships (recipes/, one .py each) that train, with their fp16 refusal.
 */
static const struct tt_recipe {
	const char *name;
	bool distributed;
	const char *fp16_error;
} recipes[] = {
    {"full_dpo_distributed", true, "ValueError: " TT_ERROR_FULL},
    {"full_finetune_distributed", true, "ValueError: " TT_ERROR_FULL},
    {"full_finetune_single_device", false, "ValueError: " TT_ERROR_FULL},
    {"knowledge_distillation_distributed", true, "ValueError: " TT_ERROR_PRECISION},
    {"knowledge_distillation_single_device", false, "ValueError: " TT_ERROR_PRECISION},
    {"lora_dpo_distributed", true, "ValueError: " TT_ERROR_FULL},
    {"lora_dpo_single_device", false, "ValueError: " TT_ERROR_PRECISION},
    {"lora_finetune_distributed", true, "ValueError: " TT_ERROR_FULL},
    {"lora_finetune_single_device", false, "ValueError: " TT_ERROR_PRECISION},
    {"ppo_full_finetune_single_device", false, "RuntimeError: " TT_ERROR_FULL},
    {"qat_distributed", true, "ValueError: " TT_ERROR_FULL},
    {"qat_lora_finetune_distributed", true, "ValueError: " TT_ERROR_FULL},
};

/* torchtune's module names and the Hugging Face checkpoint's (convert_weights.py _FROM_HF) */
static const struct {
	const char *torchtune, *hf;
} names[] = {
    {"q_proj", "q_proj"},      {"k_proj", "k_proj"},  {"v_proj", "v_proj"},
    {"output_proj", "o_proj"}, {"w1", "gate_proj"},   {"w2", "down_proj"},
    {"w3", "up_proj"},         {"output", "lm_head"}, {"tok_embeddings", "model.embed_tokens"},
    {"norm", "model.norm"},
};

struct tt {
	struct dtl_fw_config *c;
	const struct tt_recipe *recipe;
	const char *recipe_name;
	struct dtl_loc recipe_loc;
	enum dtl_dtype dtype;
	struct dtl_loc dtype_loc;
};

static const char *hf_name(const char *torchtune)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i].torchtune, torchtune) == 0)
			return names[i].hf;
	return NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool torchtune_component(const struct dtl_node *map)
{
	const struct dtl_node *v = map ? dtl_node_get(map, "_component_") : NULL;
	return v && v->type == DTL_NODE_STRING && starts_with(v->string.text, "torchtune.");
}

static bool detect(const struct dtl_node *root)
{
	return root && root->type == DTL_NODE_MAP &&
	       (torchtune_component(dtl_node_get(root, "model")) ||
	        torchtune_component(dtl_node_get(root, "checkpointer")));
}

/* needle in the n bytes at hay, or NULL */
static const char *find(const char *hay, size_t n, const char *needle)
{
	size_t len = strlen(needle);
	for (size_t i = 0; i + len <= n; i++)
		if (memcmp(hay + i, needle, len) == 0)
			return hay + i;
	return NULL;
}

/* The recipe named by a "tune run ... RECIPE --config ..." line of the file (its header
 * comment, as every torchtune config has one): the word before --config. */
static void recipe_from_comment(struct tt *t)
{
	const struct dtl_source *src = &t->c->l->source;
	const char *text = src->data, *end = text + src->size;

	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;
		const char *run = find(line, (size_t)(eol - line), "tune run ");
		const char *cfg = run ? find(run, (size_t)(eol - run), " --config") : NULL;
		if (cfg) {
			const char *w_end = cfg, *w = cfg;
			while (w > run && w[-1] != ' ')
				w--;
			if (w < w_end && w[0] != '-') {
				t->recipe_name =
				    dtl_arena_strndup(t->c->arena, w, (size_t)(w_end - w));
				t->recipe_loc = dtl_source_loc_at(src, (size_t)(w - text));
				t->recipe_loc.file = t->c->l->s.file;
				return;
			}
		}
		line = eol + 1;
	}
}

static void find_recipe(struct tt *t)
{
	recipe_from_comment(t);
	if (!t->recipe_name) {
		/* no "tune run" line: the file's name says which kind of recipe it is for */
		bool single = strstr(t->c->path, "single_device") != NULL;
		t->recipe_name =
		    single ? "lora_finetune_single_device" : "lora_finetune_distributed";
		t->recipe_loc = dtl_schema_loc(&t->c->l->s, t->c->l->root);
		dtl_fw_warn(t->c, t->recipe_loc,
		            single ? "no 'tune run ... RECIPE --config' line names the recipe: "
		                     "taken as a single-device recipe (the file's name)"
		                   : "no 'tune run ... RECIPE --config' line names the recipe: "
		                     "taken as a distributed (FSDP2) recipe");
	}
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++)
		if (t->recipe_name && strcmp(recipes[i].name, t->recipe_name) == 0)
			t->recipe = &recipes[i];
	if (!t->recipe && t->recipe_name)
		dtl_fw_warn(
		    t->c, t->recipe_loc,
		    dtl_arena_sprintf(t->c->arena,
		                      "'%s' is not a training recipe torchtune 0.6.1 ships: "
		                      "read as one (FSDP2 when its name says distributed)",
		                      t->recipe_name));
}

/* training.get_dtype: fp16 bf16 fp32 fp64, none: float32; anything else is refused */
static int dtype_key(struct tt *t)
{
	struct dtl_fw_value v = dtl_fw_get(t->c, "dtype");
	const char *text;
	int r;

	t->dtype = DTL_DTYPE_F32;
	t->dtype_loc = dtl_fw_loc(t->c, v);
	if (!v.node || v.node->type == DTL_NODE_NULL)
		return 0;
	if ((r = dtl_schema_string(v.s, v.node, "dtype", &text)) < 0)
		return r;
	if (strcmp(text, "fp16") == 0)
		t->dtype = DTL_DTYPE_F16;
	else if (strcmp(text, "bf16") == 0)
		t->dtype = DTL_DTYPE_BF16;
	else if (strcmp(text, "fp32") == 0)
		t->dtype = DTL_DTYPE_F32;
	else if (strcmp(text, "fp64") == 0)
		t->dtype = DTL_DTYPE_F64;
	else
		return dtl_schema_fail(
		    v.s, v.node,
		    "torchtune refuses this dtype: 'ValueError: Dtype %s must be "
		    "one of fp16, bf16, fp32, fp64 for finetuning.'",
		    text);
	if (t->dtype == DTL_DTYPE_F16) {
		const char *error =
		    t->recipe ? t->recipe->fp16_error : "ValueError: " TT_ERROR_FULL;
		return dtl_schema_fail(v.s, v.node, "torchtune's %s refuses dtype fp16: '%s'",
		                       t->recipe_name, error);
	}
	return 0;
}

static int add_target(struct tt *t, struct dtl_patterns *p, const char *name, struct dtl_loc loc)
{
	struct dtl_pattern *items = dtl_arena_calloc(t->c->arena, p->count + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	if (p->count)
		memcpy(items, p->items, p->count * sizeof(*items));
	items[p->count] = (struct dtl_pattern){name, (uint32_t)strlen(name), loc};
	p->items = items;
	p->count++;
	p->present = true;
	return 0;
}

static int bool_arg(struct tt *t, const char *key, bool *ret)
{
	struct dtl_fw_value v = dtl_fw_get(t->c, key);
	*ret = false;
	return v.node ? dtl_schema_bool(v.s, v.node, key, ret) : 0;
}

/* lora_attn_modules (torchtune's names), apply_lora_to_mlp, apply_lora_to_output */
static int lora_targets(struct tt *t, struct dtl_adapter *a)
{
	struct dtl_fw_value v = dtl_fw_get(t->c, "model.lora_attn_modules");
	bool mlp, out;
	int r;

	for (size_t i = 0; v.node && v.node->type == DTL_NODE_SEQ && i < v.node->seq.count; i++) {
		const struct dtl_node *item = &v.node->seq.items[i];
		const char *name, *hf;
		if ((r = dtl_schema_string(v.s, item, "lora_attn_modules", &name)) < 0)
			return r;
		if (!(hf = hf_name(name)) || strchr(hf, '.'))
			return dtl_schema_fail(
			    v.s, item,
			    "%s is not one of torchtune's LoRA attention modules "
			    "(q_proj, k_proj, v_proj, output_proj)",
			    dtl_schema_describe(v.s, item));
		if ((r = add_target(t, &a->target_modules, hf, dtl_schema_loc(v.s, item))) < 0)
			return r;
	}
	if (v.node && v.node->type != DTL_NODE_SEQ && v.node->type != DTL_NODE_NULL)
		return dtl_schema_type_error(v.s, v.node, "lora_attn_modules", "a list");
	if ((r = bool_arg(t, "model.apply_lora_to_mlp", &mlp)) < 0 ||
	    (r = bool_arg(t, "model.apply_lora_to_output", &out)) < 0)
		return r;
	struct dtl_loc mlp_loc = dtl_fw_loc(t->c, dtl_fw_get(t->c, "model.apply_lora_to_mlp"));
	static const char *const mlp_names[] = {"gate_proj", "down_proj", "up_proj"};
	for (size_t i = 0; mlp && i < 3; i++)
		if ((r = add_target(t, &a->target_modules, mlp_names[i], mlp_loc)) < 0)
			return r;
	if (out &&
	    (r = add_target(t, &a->target_modules, "lm_head",
	                    dtl_fw_loc(t->c, dtl_fw_get(t->c, "model.apply_lora_to_output")))) < 0)
		return r;
	a->target_modules.present = true;
	return 0;
}

static int lora(struct tt *t, struct dtl_fw_value component, const char *builder)
{
	struct dtl_adapter *a = &t->c->m->adapter;
	struct dtl_loc loc = dtl_fw_loc(t->c, component);
	struct dtl_fw_value v;
	bool quantize = starts_with(builder, "qlora_"), dora;
	int r;

	dtl_adapter_init(a, loc);
	/* LoRALinear's matrices are created under set_default_dtype(dtype): the base dtype */
	a->autocast_adapter_dtype = DTL_FALSE;
	a->autocast_adapter_dtype_loc = t->dtype_loc;
	a->created_as = "torchtune's LoRALinear, created under set_default_dtype(dtype): the "
	                "recipe's dtype";
	a->created_as_fact = "https://github.com/pytorch/torchtune/blob/v0.6.1/recipes/"
	                     "lora_finetune_distributed.py#L497-L510";
	a->target_modules.loc = loc;
	if ((r = lora_targets(t, a)) < 0)
		return r;
	if ((v = dtl_fw_get(t->c, "model.lora_rank")).node &&
	    (r = dtl_schema_int(v.s, v.node, "lora_rank", 1, 1 << 20, &a->r)) < 0)
		return r;
	if ((r = bool_arg(t, "model.use_dora", &dora)) < 0)
		return r;
	if (dora)
		a->use_dora = DTL_TRUE;
	v = dtl_fw_get(t->c, "model.quantize_base");
	if (v.node && (r = dtl_schema_bool(v.s, v.node, "quantize_base", &quantize)) < 0)
		return r;
	if (quantize)
		dtl_fw_warn(
		    t->c, dtl_fw_loc(t->c, v.node ? v : component),
		    "torchtune's QLoRA stores the base weights as torchao NF4 tensors, which "
		    "dtypelint does not simulate: they are taken at the recipe's dtype");
	return 0;
}

/* whether the checkpoint ties lm_head.weight to another tensor (the embedding) */
static bool lm_head_tied(const struct dtl_manifest *m)
{
	for (size_t g = 0; g < m->model.tied_count; g++)
		for (size_t i = 0; i < m->model.tied[g].count; i++)
			if (strcmp(m->model.tied[g].names[i].text, "lm_head.weight") == 0)
				return true;
	return false;
}

/* fully_shard on every "layers.N" (get_shard_conditions) and each custom_sharded_layers name,
 * in the checkpoint's names */
static int shard(struct tt *t, bool tied)
{
	struct dtl_plan *plan = &t->c->m->plan;
	struct dtl_fw_value v = dtl_fw_get(t->c, "custom_sharded_layers");
	bool offload;
	int r;

	plan->strategy = DTL_STRATEGY_FSDP2;
	plan->strategy_loc = t->recipe_loc;
	plan->fsdp.wrap = (struct dtl_patterns){0};
	if ((r = add_target(t, &plan->fsdp.wrap, "**.layers.*", t->recipe_loc)) < 0)
		return r;
	plan->fsdp.wrap.loc = t->recipe_loc;
	for (size_t i = 0; v.node && v.node->type == DTL_NODE_SEQ && i < v.node->seq.count; i++) {
		const struct dtl_node *item = &v.node->seq.items[i];
		const char *name, *hf;
		if ((r = dtl_schema_string(v.s, item, "custom_sharded_layers", &name)) < 0)
			return r;
		if (!(hf = hf_name(name)) || (!strchr(hf, '.') && strcmp(hf, "lm_head") != 0)) {
			dtl_fw_warn(
			    t->c, dtl_schema_loc(v.s, item),
			    "this custom_sharded_layers name has no Hugging Face counterpart "
			    "dtypelint knows (tok_embeddings, output, norm): not sharded");
			continue;
		}
		if (strcmp(hf, "lm_head") == 0 && tied) {
			/* a tied output is a TiedLinear, no nn.Module: no name matches 'output' */
			dtl_fw_warn(t->c, dtl_schema_loc(v.s, item),
			            "the checkpoint ties the output to the embedding: torchtune's "
			            "TiedLinear is no module, so 'output' shards nothing");
			continue;
		}
		if ((r = add_target(t, &plan->fsdp.wrap, hf, dtl_schema_loc(v.s, item))) < 0)
			return r;
	}
	if (v.node && v.node->type != DTL_NODE_SEQ && v.node->type != DTL_NODE_NULL)
		return dtl_schema_type_error(v.s, v.node, "custom_sharded_layers", "a list");
	if ((r = bool_arg(t, "fsdp_cpu_offload", &offload)) < 0)
		return r;
	if (offload) {
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = dtl_fw_loc(t->c, dtl_fw_get(t->c, "fsdp_cpu_offload"));
	}
	return 0;
}

static int import(struct dtl_fw_config *c)
{
	struct tt t = {.c = c};
	struct dtl_manifest *m = c->m;
	const char *component = NULL;
	int r;

	find_recipe(&t);
	if (!t.recipe_name)
		return -ENOMEM;
	if ((r = dtype_key(&t)) < 0)
		return r;
	m->recipe.kind = dtl_arena_sprintf(c->arena, "torchtune %s", t.recipe_name);
	if (!m->recipe.kind)
		return -ENOMEM;
	/* built under set_default_dtype(dtype), the checkpoint copied in */
	m->model.load_mode = DTL_LOAD_DTYPE;
	m->model.load_dtype = t.dtype;
	m->model.load_dtype_loc = t.dtype_loc;
	struct dtl_fw_value v = dtl_fw_get(c, "model._component_");
	if (v.node && (r = dtl_schema_string(v.s, v.node, "model._component_", &component)) < 0)
		return r;
	const char *builder = component ? strrchr(component, '.') : NULL;
	builder = builder ? builder + 1 : component;
	if (builder && (starts_with(builder, "lora_") || starts_with(builder, "qlora_")) &&
	    (r = lora(&t, v, builder)) < 0)
		return r;
	/* a tied output is TiedLinear (modules/tied_linear.py), no nn.Module: the weight is one
	 * parameter, the embedding's, never in two FSDP groups; lm_head.weight stays in the
	 * table as its own tensor (the memory counts it twice) */
	bool tied = lm_head_tied(m);
	if (tied)
		m->model.tied_count = 0;
	bool distributed =
	    t.recipe ? t.recipe->distributed : strstr(t.recipe_name, "distributed") != NULL;
	if (distributed)
		return shard(&t, tied);
	m->plan.strategy = DTL_STRATEGY_SINGLE;
	m->plan.strategy_loc = t.recipe_loc;
	return 0;
}

const struct dtl_framework_importer dtl_importer_torchtune = {
    .kind = "torchtune recipe",
    .detect = detect,
    .import = import,
};
