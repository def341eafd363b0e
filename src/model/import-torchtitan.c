/* SPDX-License-Identifier: MIT */
/*
 * A torchtitan job config (TOML), read the way torchtitan 0.2.2 builds the set-up
 * (rules/versions.yaml recipes: torchtitan-*):
 *
 * - ConfigManager._dict_to_dataclass refuses a key its section does not have, before any
 *   training starts ("Invalid field names in <class ...> data: {...}");
 * - the model is built under set_default_dtype(training.dtype) (float32, or bfloat16 for "full
 *   bf16" training);
 * - FSDP2 is on when data_parallel_shard_degree is -1 (every rank left) or above 1, or
 *   context_parallel_degree is above 1 (ParallelDims.fsdp_enabled): fully_shard on
 *   tok_embeddings, every layer, [norm, output] and the root with
 *   MixedPrecisionPolicy(param_dtype=mixed_precision_param, reduce_dtype=mixed_precision_reduce);
 *   enable_cpu_offload adds CPUOffloadPolicy;
 * - otherwise DDP (data_parallel_replicate_degree above 1) or one device, under
 *   torch.autocast(mixed_precision_param) (maybe_enable_amp).
 *
 * Float8 and MX converters, tensor, pipeline and expert parallelism are not simulated: a
 * warning names each. The tensor table is the Hugging Face checkpoint given as INPUT; the
 * state dict adapter's names (tok_embeddings = model.embed_tokens, layers.N = model.layers.N,
 * norm = model.norm, output = lm_head) place the groups.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "import-framework.h"

/* The fields of the sections dtypelint reads, at v0.2.2 (config/job_config.py) */
static const char *const job_fields[] = {"job",
                                         "profiling",
                                         "metrics",
                                         "model",
                                         "optimizer",
                                         "lr_scheduler",
                                         "training",
                                         "parallelism",
                                         "checkpoint",
                                         "activation_checkpoint",
                                         "compile",
                                         "quantize",
                                         "comm",
                                         "memory_estimation",
                                         "fault_tolerance",
                                         "experimental",
                                         "validation",
                                         "debug",
                                         NULL};
static const char *const training_fields[] = {"dataset",
                                              "dataset_path",
                                              "local_batch_size",
                                              "global_batch_size",
                                              "seq_len",
                                              "max_norm",
                                              "steps",
                                              "enable_cpu_offload",
                                              "dtype",
                                              "mixed_precision_param",
                                              "mixed_precision_reduce",
                                              "gc_freq",
                                              "gc_debug",
                                              "dataloader",
                                              NULL};
static const char *const parallelism_fields[] = {"data_parallel_replicate_degree",
                                                 "data_parallel_shard_degree",
                                                 "fsdp_reshard_after_forward",
                                                 "tensor_parallel_degree",
                                                 "disable_loss_parallel",
                                                 "enable_async_tensor_parallel",
                                                 "pipeline_parallel_degree",
                                                 "module_fqns_per_model_part",
                                                 "pipeline_parallel_first_stage_less_layers",
                                                 "pipeline_parallel_last_stage_less_layers",
                                                 "pipeline_parallel_layers_per_stage",
                                                 "pipeline_parallel_schedule",
                                                 "pipeline_parallel_schedule_csv",
                                                 "pipeline_parallel_microbatch_size",
                                                 "pipeline_parallel_expert_parallel_overlap",
                                                 "context_parallel_degree",
                                                 "context_parallel_load_balancer",
                                                 "context_parallel_rotate_method",
                                                 "expert_parallel_degree",
                                                 "expert_tensor_parallel_degree",
                                                 "expert_parallel_comm_backend",
                                                 NULL};

static bool detect(const struct dtl_node *root)
{
	const struct dtl_node *job = dtl_node_get(root, "job");
	const struct dtl_node *model = dtl_node_get(root, "model");
	return job && job->type == DTL_NODE_MAP && model && model->type == DTL_NODE_MAP &&
	       dtl_node_get(model, "flavor");
}

static bool listed(const char *const *fields, const struct dtl_node *key)
{
	for (; *fields; fields++)
		if (key->type == DTL_NODE_STRING && strcmp(*fields, key->string.text) == 0)
			return true;
	return false;
}

/* _dict_to_dataclass: "Invalid field names in {cls} data: {invalid_fields}." (the first one) */
static int check_fields(struct dtl_fw_config *c, const struct dtl_node *map, const char *cls,
                        const char *const *fields)
{
	for (size_t i = 0; map && map->type == DTL_NODE_MAP && i < map->map.count; i++) {
		const struct dtl_node *k = &map->map.pairs[i].key;
		if (!listed(fields, k))
			return dtl_schema_fail(
			    &c->l->s, k,
			    "torchtitan refuses this config: 'ValueError: Invalid "
			    "field names in <class 'torchtitan.config.job_config.%s'> "
			    "data: {'%s'}.'",
			    cls, k->type == DTL_NODE_STRING ? k->string.text : "?");
	}
	return 0;
}

/* an override's key must name a field too: the command line refuses unknown options */
static int check_override(struct dtl_fw_config *c, const struct dtl_fw_override *o)
{
	static const struct {
		const char *section, *cls;
		const char *const *fields;
	} sections[] = {{"training.", "Training", training_fields},
	                {"parallelism.", "Parallelism", parallelism_fields}};
	const char *dot = strchr(o->key, '.');
	size_t n = dot ? (size_t)(dot - o->key) + 1 : strlen(o->key);
	struct dtl_node key = {.type = DTL_NODE_STRING};

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		if (strncmp(o->key, sections[i].section, n) != 0 ||
		    strlen(sections[i].section) != n)
			continue;
		key.string.text = o->key + n;
		key.string.len = strlen(o->key + n);
		if (!listed(sections[i].fields, &key))
			return dtl_error_set(
			    c->error, (struct dtl_loc){"--framework-override", 1, 1}, -EINVAL,
			    "torchtitan's %s has no field '%s' (its command line "
			    "refuses the option --%s)",
			    sections[i].cls, key.string.text, o->key);
	}
	key.string.len = n - (dot != NULL);
	char section[64];
	snprintf(section, sizeof(section), "%.*s", (int)key.string.len, o->key);
	key.string.text = section;
	if (!listed(job_fields, &key))
		return dtl_error_set(c->error, (struct dtl_loc){"--framework-override", 1, 1},
		                     -EINVAL,
		                     "torchtitan's JobConfig has no section '%s' (its command line "
		                     "refuses the option --%s)",
		                     section, o->key);
	return 0;
}

/* TORCH_DTYPE_MAP: float16, float32, bfloat16 (a KeyError otherwise) */
static int dtype(struct dtl_fw_config *c, const char *key, enum dtl_dtype dflt, enum dtl_dtype *ret,
                 struct dtl_loc *ret_loc)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	const char *text;
	int r;

	*ret = dflt;
	*ret_loc = dtl_fw_loc(c, v);
	if (!v.node)
		return 0;
	if ((r = dtl_schema_string(v.s, v.node, key, &text)) < 0)
		return r;
	if (strcmp(text, "float16") == 0)
		*ret = DTL_DTYPE_F16;
	else if (strcmp(text, "float32") == 0)
		*ret = DTL_DTYPE_F32;
	else if (strcmp(text, "bfloat16") == 0)
		*ret = DTL_DTYPE_BF16;
	else
		return dtl_schema_fail(v.s, v.node,
		                       "torchtitan has no such dtype: 'KeyError: '%s'' "
		                       "(TORCH_DTYPE_MAP: float16, float32, bfloat16)",
		                       text);
	return 0;
}

static int degree(struct dtl_fw_config *c, const char *key, int64_t dflt, int64_t *ret)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	*ret = dflt;
	return v.node ? dtl_schema_int(v.s, v.node, key, -1, INT32_MAX, ret) : 0;
}

static void unmodelled(struct dtl_fw_config *c, const char *key, const char *what)
{
	struct dtl_fw_value v = dtl_fw_get(c, key);
	dtl_fw_warn(
	    c, dtl_fw_loc(c, v),
	    dtl_arena_sprintf(c->arena, "%s is not simulated: the dtypes shown ignore it", what));
}

static int parallel_warnings(struct dtl_fw_config *c)
{
	static const struct {
		const char *key, *what;
	} dims[] = {
	    {"parallelism.tensor_parallel_degree", "tensor parallelism"},
	    {"parallelism.pipeline_parallel_degree", "pipeline parallelism"},
	    {"parallelism.expert_parallel_degree", "expert parallelism"},
	};
	int64_t n;
	int r;

	for (size_t i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		if ((r = degree(c, dims[i].key, 1, &n)) < 0)
			return r;
		if (n > 1)
			unmodelled(c, dims[i].key, dims[i].what);
	}
	struct dtl_fw_value conv = dtl_fw_get(c, "model.converters");
	for (size_t i = 0; conv.node && conv.node->type == DTL_NODE_SEQ && i < conv.node->seq.count;
	     i++) {
		const struct dtl_node *item = &conv.node->seq.items[i];
		if (item->type == DTL_NODE_STRING)
			dtl_fw_warn(
			    c, dtl_schema_loc(conv.s, item),
			    dtl_arena_sprintf(c->arena,
			                      "the '%s' model converter (torchao low-precision "
			                      "linears) is not simulated: the dtypes shown "
			                      "ignore it",
			                      item->string.text));
	}
	return 0;
}

static int add_wrap(struct dtl_fw_config *c, struct dtl_patterns *p, const char *name,
                    struct dtl_loc loc)
{
	struct dtl_pattern *items = dtl_arena_calloc(c->arena, p->count + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	if (p->count)
		memcpy(items, p->items, p->count * sizeof(*items));
	items[p->count++] = (struct dtl_pattern){name, (uint32_t)strlen(name), loc};
	p->items = items;
	p->present = true;
	return 0;
}

/* apply_fsdp: tok_embeddings, each layer, [norm, output] (here two groups), the root */
static int fsdp(struct dtl_fw_config *c, struct dtl_loc at)
{
	struct dtl_plan *plan = &c->m->plan;
	static const char *const groups[] = {"model.embed_tokens", "model.layers.*", "model.norm",
	                                     "lm_head"};
	struct dtl_fw_value v;
	bool offload = false;
	int r;

	plan->strategy = DTL_STRATEGY_FSDP2;
	plan->strategy_loc = at;
	plan->fsdp.wrap = (struct dtl_patterns){0};
	plan->fsdp.wrap.loc = at;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if ((r = add_wrap(c, &plan->fsdp.wrap, groups[i], at)) < 0)
			return r;
	if ((r = dtype(c, "training.mixed_precision_param", DTL_DTYPE_BF16, &plan->fsdp.param_dtype,
	               &plan->fsdp.param_dtype_loc)) < 0 ||
	    (r = dtype(c, "training.mixed_precision_reduce", DTL_DTYPE_F32,
	               &plan->fsdp.reduce_dtype, &plan->fsdp.reduce_dtype_loc)) < 0)
		return r;
	if ((v = dtl_fw_get(c, "training.enable_cpu_offload")).node &&
	    (r = dtl_schema_bool(v.s, v.node, "enable_cpu_offload", &offload)) < 0)
		return r;
	if (offload) {
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = dtl_fw_loc(c, v);
	}
	return 0;
}

static int import(struct dtl_fw_config *c)
{
	struct dtl_manifest *m = c->m;
	const struct dtl_node *root = c->l->root;
	struct dtl_loc loc;
	int64_t shard, replicate, cp;
	int r;

	if ((r = check_fields(c, root, "JobConfig", job_fields)) < 0 ||
	    (r = check_fields(c, dtl_node_get(root, "training"), "Training", training_fields)) <
	        0 ||
	    (r = check_fields(c, dtl_node_get(root, "parallelism"), "Parallelism",
	                      parallelism_fields)) < 0)
		return r;
	for (size_t i = 0; i < c->override_count; i++)
		if ((r = check_override(c, &c->overrides[i])) < 0)
			return r;
	m->recipe.kind = "torchtitan";
	/* built under set_default_dtype(training.dtype) */
	m->model.load_mode = DTL_LOAD_DTYPE;
	if ((r = dtype(c, "training.dtype", DTL_DTYPE_F32, &m->model.load_dtype, &loc)) < 0)
		return r;
	m->model.load_dtype_loc = loc;
	if ((r = degree(c, "parallelism.data_parallel_shard_degree", -1, &shard)) < 0 ||
	    (r = degree(c, "parallelism.data_parallel_replicate_degree", 1, &replicate)) < 0 ||
	    (r = degree(c, "parallelism.context_parallel_degree", 1, &cp)) < 0 ||
	    (r = parallel_warnings(c)) < 0)
		return r;
	struct dtl_fw_value sv = dtl_fw_get(c, "parallelism.data_parallel_shard_degree");
	if (shard == -1 || shard > 1 || cp > 1)
		return fsdp(c, dtl_fw_loc(c, sv));
	/* maybe_enable_amp: autocast in mixed_precision_param under DDP or one device */
	struct dtl_fw_value rv = dtl_fw_get(c, "parallelism.data_parallel_replicate_degree");
	m->plan.strategy = replicate > 1 ? DTL_STRATEGY_DDP : DTL_STRATEGY_SINGLE;
	m->plan.strategy_loc = dtl_fw_loc(c, replicate > 1 ? rv : sv);
	enum dtl_dtype amp;
	if ((r = dtype(c, "training.mixed_precision_param", DTL_DTYPE_BF16, &amp, &loc)) < 0)
		return r;
	m->plan.precision = amp == DTL_DTYPE_BF16  ? DTL_PRECISION_BF16
	                    : amp == DTL_DTYPE_F16 ? DTL_PRECISION_FP16
	                                           : DTL_PRECISION_FP32;
	m->plan.precision_loc = loc;
	return 0;
}

const struct dtl_framework_importer dtl_importer_torchtitan = {
    .kind = "torchtitan job config",
    .detect = detect,
    .import = import,
};
