/* SPDX-License-Identifier: MIT */
/*
 * --trainer-args: a training recipe's arguments (YAML or JSON), read the way its framework
 * turns them into a model, a quantization config, adapters and a plan. Three families:
 *
 * - LLaMA-Factory (quantization_bit, finetuning_type, lora_target, pure_bf16, ...):
 *   model_utils/quantization.py packs 4-bit weights in compute_dtype ("crucial for
 *   fsdp+qlora"), compute_dtype is bf16 / fp16 from the flags; adapter.py casts every
 *   trainable parameter to float32 after get_peft_model unless pure_bf16 (or, without
 *   quantization, under ZeRO-3). It trains with the HF Trainer.
 * - TRL ModelConfig and the alignment-handbook recipes (load_in_4bit, use_peft, lora_r,
 *   torch_dtype / dtype, bnb_4bit_quant_storage, ...): get_quantization_config packs 4-bit
 *   weights in the model dtype up to TRL 0.25 and in bnb_4bit_quant_storage (default uint8)
 *   from 0.26 (PR #4496); the simulation picks by the plan's TRL version.
 * - axolotl (base_model, adapter: qlora, load_in_4bit, lora_target_linear, ...):
 *   loaders/model.py packs QLoRA weights in bfloat16 whatever the model dtype; its
 *   fsdp_config's wrap classes go to accelerate through FSDP_TRANSFORMER_CLS_TO_WRAP.
 *
 * Keys of the HF TrainingArguments (bf16, fp16, deepspeed, fsdp) are read in all three; the
 * Trainer's fsdp / fsdp_config as transformers' _process_fsdp_args turns them into accelerate's
 * FSDP plugin (versions.yaml recipes: hf-trainer-fsdp-config), axolotl's its own way. Every
 * key read is marked, so that --show-plan lists the keys read and those not read.
 * Sources: rules/versions.yaml `recipes:`. A key that is one or two edits from a
 * dtype-relevant key gets a warning with "did you mean".
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "dtypelint/model/import.h"
#include "import-util.h"

/* One flag per pair of a map the importer reads (the root, fsdp_config): which keys were read,
 * for --show-plan's "keys read" and "not read" rows, so that a partly read recipe never looks
 * fully understood. */
struct read_marks {
	const struct dtl_node *map;
	uint8_t *read;
};

struct recipe {
	const struct dtl_schema *s;
	struct read_marks marks[2]; /* the root, fsdp_config */
	const struct dtl_node *root;
	const char *path;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_manifest *m;
	struct dtl_error *error;
};

/* map's value for name, marked read when the map is tracked */
static const struct dtl_node *get_marked(const struct recipe *r, const struct dtl_node *map,
                                         const char *name)
{
	const struct dtl_node *v = dtl_node_get(map, name);

	for (size_t i = 0; v && i < sizeof(r->marks) / sizeof(r->marks[0]); i++)
		if (r->marks[i].map == map && r->marks[i].read) {
			const struct dtl_pair *pair =
			    (const struct dtl_pair *)((const char *)v -
			                              offsetof(struct dtl_pair, value));
			r->marks[i].read[pair - map->map.pairs] = 1;
		}
	return v;
}

/* a top-level key the importer reads */
static const struct dtl_node *key(const struct recipe *r, const char *name)
{
	return get_marked(r, r->root, name);
}

/* a top-level key looked at only to tell the family (not read for its value) */
static bool has(const struct recipe *r, const char *name)
{
	return dtl_node_get(r->root, name) != NULL;
}

static bool yes(const struct dtl_node *v)
{
	return v && v->type == DTL_NODE_BOOL && v->boolean;
}

/* dtype-relevant keys of the three families, for "did you mean" */
static const char *const known_keys[] = {"bf16",
                                         "fp16",
                                         "pure_bf16",
                                         "deepspeed",
                                         "fsdp",
                                         "fsdp_config",
                                         "fsdp_version",
                                         "quantization_bit",
                                         "quantization_method",
                                         "finetuning_type",
                                         "lora_target",
                                         "lora_rank",
                                         "upcast_layernorm",
                                         "upcast_lmhead_output",
                                         "freeze_vision_tower",
                                         "freeze_multi_modal_projector",
                                         "freeze_language_model",
                                         "freeze_trainable_layers",
                                         "freeze_trainable_modules",
                                         "freeze_extra_modules",
                                         "double_quantization",
                                         "load_in_4bit",
                                         "load_in_8bit",
                                         "use_peft",
                                         "lora_r",
                                         "lora_alpha",
                                         "lora_target_modules",
                                         "lora_modules_to_save",
                                         "lora_target_parameters",
                                         "torch_dtype",
                                         "dtype",
                                         "bnb_4bit_quant_type",
                                         "use_bnb_nested_quant",
                                         "bnb_4bit_quant_storage",
                                         "use_dora",
                                         "adapter",
                                         "lora_target_linear",
                                         "base_model",
                                         "model_name_or_path",
                                         "use_4bit_quantization",
                                         "use_peft_lora",
                                         "bnb_4bit_compute_dtype",
                                         "bnb_4bit_quant_storage_dtype",
                                         "use_nested_quant",
                                         "cast_lm_head_to_fp32",
                                         "model_init_kwargs",
                                         NULL};

/* Keys of the HF TrainingArguments and the recipes' own that dtypelint does not read, but
 * that make a document trainer arguments (not, say, a sweep or an app's config) */
static const char *const trainer_keys[] = {"output_dir",
                                           "learning_rate",
                                           "num_train_epochs",
                                           "max_steps",
                                           "per_device_train_batch_size",
                                           "gradient_accumulation_steps",
                                           "gradient_checkpointing",
                                           "dataset_name",
                                           "dataset",
                                           "datasets",
                                           "stage",
                                           "do_train",
                                           "template",
                                           "sequence_len",
                                           "micro_batch_size",
                                           "max_seq_length",
                                           "logging_steps",
                                           "save_steps",
                                           "warmup_ratio",
                                           "lr_scheduler_type",
                                           "report_to",
                                           NULL};

static bool listed(const char *const *list, const char *key, size_t len)
{
	for (size_t i = 0; list[i]; i++)
		if (strlen(list[i]) == len && memcmp(list[i], key, len) == 0)
			return true;
	return false;
}

bool dtl_recipe_key(const char *key, size_t len)
{
	return listed(known_keys, key, len) || listed(trainer_keys, key, len);
}

/* Edit distance of short ASCII keys (both at most 40 bytes), capped at 3. */
static unsigned distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	unsigned prev[41], cur[41];

	if (n > 40 || m > 40)
		return 3;
	for (size_t j = 0; j <= m; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (m + 1) * sizeof(unsigned));
	}
	return prev[m] < 3 ? prev[m] : 3;
}

static int near_misses(struct recipe *r)
{
	for (size_t i = 0; i < r->root->map.count; i++) {
		const struct dtl_node *k = &r->root->map.pairs[i].key;
		if (k->type != DTL_NODE_STRING) /* a number or null key: no near miss */
			continue;
		const char *text = k->string.text;
		size_t n = k->string.len, best_d = 3;
		const char *best = NULL;
		bool plain = n >= 4 && n <= 40;
		for (size_t c = 0; plain && c < n; c++)
			plain = (text[c] >= 'a' && text[c] <= 'z') ||
			        (text[c] >= 'A' && text[c] <= 'Z') ||
			        (text[c] >= '0' && text[c] <= '9') || text[c] == '_' ||
			        text[c] == '-';
		for (const char *const *kk = known_keys; plain && *kk; kk++) {
			if (strlen(*kk) == n && memcmp(*kk, text, n) == 0) {
				best = NULL;
				break;
			}
			unsigned d = distance(text, n, *kk);
			if (d < best_d && d <= (strlen(*kk) >= 8 ? 2u : 1u)) {
				best_d = d;
				best = *kk;
			}
		}
		if (!best)
			continue;
		struct dtl_input_warning *w = dtl_vec_push(&r->m->warnings, r->arena, sizeof(*w));
		if (!w)
			return -ENOMEM;
		w->loc = dtl_schema_loc(r->s, k);
		w->message = dtl_arena_sprintf(r->arena,
		                               "'%.*s' is not a key dtypelint reads: did you mean "
		                               "'%s'?",
		                               (int)n, text, best);
		if (!w->message)
			return -ENOMEM;
	}
	return 0;
}

/* A warning for the command line to print (an out-of-memory one is dropped: it stops nothing) */
static void warn(struct recipe *r, const struct dtl_node *at, const char *message)
{
	struct dtl_input_warning *w = dtl_vec_push(&r->m->warnings, r->arena, sizeof(*w));
	if (!w)
		return;
	w->loc = dtl_schema_loc(r->s, at);
	w->message = message;
}

/* an adapter another file already described is kept */
static void adapter_init(struct dtl_adapter *a, struct dtl_loc loc)
{
	if (!a->present)
		dtl_adapter_init(a, loc);
}

/* "q_proj,v_proj" or "all" (LLaMA-Factory), "all-linear", or a list */
static int target_modules(struct recipe *r, const struct dtl_node *v, const char *what)
{
	struct dtl_adapter *a = &r->m->adapter;
	const char *text;
	int rc;

	if (!v || v->type == DTL_NODE_NULL)
		return 0;
	a->target_modules.present = true;
	a->target_modules.loc = dtl_schema_loc(r->s, v);
	if (v->type == DTL_NODE_SEQ)
		return dtl_schema_patterns(r->s, v, what, DTL_PATTERN_PLAIN, &a->target_modules);
	if ((rc = dtl_schema_string(r->s, v, what, &text)) < 0)
		return rc;
	if (strcmp(text, "all") == 0 || strcmp(text, "all-linear") == 0) {
		a->target_modules_string = "all-linear";
		return 0;
	}
	size_t n = 1;
	for (const char *p = text; *p; p++)
		n += *p == ',';
	a->target_modules.items = dtl_arena_calloc(r->arena, n, sizeof(struct dtl_pattern));
	if (!a->target_modules.items)
		return -ENOMEM;
	a->target_modules.count = 0;
	for (const char *p = text; *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		while (len && *p == ' ') {
			p++;
			len--;
		}
		while (len && p[len - 1] == ' ')
			len--;
		if (len) {
			struct dtl_pattern *item =
			    &a->target_modules.items[a->target_modules.count++];
			if (!(item->text = dtl_arena_strndup(r->arena, p, len)))
				return -ENOMEM;
			item->len = (uint32_t)len;
			item->loc = a->target_modules.loc;
		}
		p = comma ? comma + 1 : p + strlen(p);
	}
	return 0;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* TrainingArguments.deepspeed: a path the launcher opens from its working directory; a path
 * that is not there is taken relative to the recipe file */
static int deepspeed_key(struct recipe *r)
{
	const struct dtl_node *v = key(r, "deepspeed");
	if (!v || v->type != DTL_NODE_STRING || !v->string.len)
		return 0;
	const char *path = exists(v->string.text)
	                       ? v->string.text
	                       : dtl_path_relative_to(r->arena, r->path, v->string.text);
	if (!path)
		return -ENOMEM;
	int rc = dtl_confine_check(path, r->path, dtl_schema_loc(r->s, v), r->error);
	if (rc < 0)
		return rc;
	return dtl_import_deepspeed(path, r->arena, r->limits, &r->m->plan, r->error);
}

/* TrainingArguments.fsdp as axolotl reads it: "full_shard auto_wrap", a list of those words,
 * or an fsdp_config alone (axolotl sets accelerate's FSDP up from it itself) */
static void axolotl_fsdp_key(struct recipe *r)
{
	const struct dtl_node *v = key(r, "fsdp");
	bool on = false;

	if (v && v->type == DTL_NODE_STRING)
		on = strstr(v->string.text, "shard") != NULL;
	for (size_t i = 0; v && v->type == DTL_NODE_SEQ && i < v->seq.count; i++)
		on |= v->seq.items[i].type == DTL_NODE_STRING &&
		      strstr(v->seq.items[i].string.text, "shard") != NULL;
	const struct dtl_node *cfg = key(r, "fsdp_config");
	if (!on && (!cfg || cfg->type != DTL_NODE_MAP))
		return;
	struct dtl_plan *plan = &r->m->plan;
	plan->strategy = DTL_STRATEGY_FSDP1;
	plan->strategy_loc = dtl_schema_loc(r->s, v ? v : cfg);
	const struct dtl_node *version = NULL;
	if (cfg && cfg->type == DTL_NODE_MAP && !(version = get_marked(r, cfg, "fsdp_version")))
		version = get_marked(r, cfg, "version");
	plan->fsdp_version_from_trainer = false; /* axolotl: 1 unless it says 2 */
	if (version && version->type == DTL_NODE_INT && version->integer == 2) {
		plan->strategy = DTL_STRATEGY_FSDP2;
		plan->strategy_loc = dtl_schema_loc(r->s, version);
	}
}

/*
 * The HF Trainer's own fsdp / fsdp_config (transformers 5.24.0
 * TrainingArguments._process_fsdp_args, rules/versions.yaml recipes: hf-trainer-fsdp-config):
 * fsdp_config is a mapping or the path of a JSON file; its fsdp_-prefixed keys lose the prefix
 * (and win over the bare key); the legacy words of fsdp become fsdp_config entries; the result
 * is the keyword arguments of accelerate's FullyShardedDataParallelPlugin.
 */
struct fsdp_cfg {
	const struct dtl_schema *s;
	const struct dtl_node *map; /* NULL: {} */
};

/* fsdp_config[name] after the Trainer strips the fsdp_ prefixes */
static const struct dtl_node *cfg_get(const struct recipe *r, const struct fsdp_cfg *c,
                                      const char *name)
{
	char prefixed[64];
	const struct dtl_node *v;

	if (!c->map)
		return NULL;
	snprintf(prefixed, sizeof(prefixed), "fsdp_%s", name);
	if ((v = get_marked(r, c->map, prefixed)))
		return v;
	return get_marked(r, c->map, name);
}

/* Python's bool(v): what `if not self.fsdp` and `.get("cpu_offload", False)` test */
static bool py_truthy(const struct dtl_node *v)
{
	if (!v)
		return false;
	switch (v->type) {
	case DTL_NODE_BOOL:
		return v->boolean;
	case DTL_NODE_INT:
		return v->integer != 0;
	case DTL_NODE_STRING:
		return v->string.len != 0;
	case DTL_NODE_SEQ:
		return v->seq.count != 0;
	case DTL_NODE_MAP:
		return v->map.count != 0;
	default:
		return v->type != DTL_NODE_NULL;
	}
}

/* str_to_bool(str(v).lower()): y, yes, t, true, on, 1 or n, no, f, false, off, 0, else the
 * Trainer's 'ValueError: invalid truth value X' */
static int trainer_bool(const struct fsdp_cfg *c, const struct dtl_node *v, const char *what,
                        bool *ret)
{
	static const char *const yes_words[] = {"y", "yes", "t", "true", "on", "1", NULL};
	static const char *const no_words[] = {"n", "no", "f", "false", "off", "0", NULL};
	const char *text = v->type == DTL_NODE_STRING ? v->string.text : v->raw;

	if (v->type == DTL_NODE_BOOL) {
		*ret = v->boolean;
		return 0;
	}
	for (size_t i = 0; text && yes_words[i]; i++)
		if (strcasecmp(text, yes_words[i]) == 0) {
			*ret = true;
			return 0;
		}
	for (size_t i = 0; text && no_words[i]; i++)
		if (strcasecmp(text, no_words[i]) == 0) {
			*ret = false;
			return 0;
		}
	return dtl_schema_fail(c->s, v,
	                       "the HF Trainer refuses fsdp_config.%s: 'ValueError: invalid truth "
	                       "value %s'",
	                       what, dtl_schema_describe(c->s, v));
}

/* int(fsdp_config.get("version", 2)): 1 or 2; 0 when not given (the Trainer's default, which
 * moved in transformers 5.10.1) */
static int trainer_fsdp_version(const struct recipe *r, const struct fsdp_cfg *c, int *ret,
                                const struct dtl_node **ret_node)
{
	const struct dtl_node *v = cfg_get(r, c, "version");
	int version = 0;

	*ret_node = v;
	if (!v) {
		*ret = 0;
		return 0;
	}
	if (v->type == DTL_NODE_INT || v->type == DTL_NODE_BOOL)
		version = v->type == DTL_NODE_BOOL ? v->boolean : (int)v->integer;
	else if (v->type == DTL_NODE_FLOAT || v->type == DTL_NODE_STRING)
		version =
		    (int)strtol(v->type == DTL_NODE_STRING ? v->string.text : v->raw, NULL, 10);
	if (version != 1 && version != 2)
		return dtl_schema_fail(c->s, v,
		                       "fsdp_config.version %s is not an FSDP version dtypelint "
		                       "models (1 or 2)",
		                       dtl_schema_describe(c->s, v));
	*ret = version;
	return 0;
}

/* The legacy words of fsdp (_apply_legacy_fsdp_to_config): a sharding strategy, offload or
 * auto_wrap; under FSDP2 only full_shard and shard_grad_op */
static int legacy_word(struct recipe *r, const struct dtl_node *at, const char *word, size_t len,
                       int version)
{
	static const char *const strategies[] = {"full_shard",   "shard_grad_op",      "no_shard",
	                                         "hybrid_shard", "hybrid_shard_zero2", NULL};
	struct dtl_plan *plan = &r->m->plan;

	for (size_t i = 0; strategies[i]; i++)
		if (strlen(strategies[i]) == len && strncasecmp(word, strategies[i], len) == 0) {
			if (version == 2 && strncmp(word, "full_shard", len) != 0 &&
			    strncmp(word, "shard_grad_op", len) != 0)
				return dtl_schema_fail(
				    r->s, at,
				    "the HF Trainer refuses this: 'ValueError: `fsdp=%.*s` is only "
				    "available with FSDP1. Set `fsdp_config['version'] = 1` to use "
				    "it, but note that FSDP1 is deprecated and will be removed in "
				    "Transformers v5.20.'",
				    (int)len, word);
			return 0;
		}
	if (len == 7 && strncmp(word, "offload", len) == 0) {
		if (plan->fsdp.cpu_offload == DTL_UNSET) {
			plan->fsdp.cpu_offload = DTL_TRUE;
			plan->fsdp.cpu_offload_loc = dtl_schema_loc(r->s, at);
		}
		return 0;
	}
	if (len == 9 && strncmp(word, "auto_wrap", len) == 0)
		return 0;
	return dtl_schema_fail(r->s, at,
	                       "the HF Trainer refuses this: 'ValueError: Unknown `fsdp` option: "
	                       "%.*s'",
	                       (int)len, word);
}

static int legacy_words(struct recipe *r, const struct dtl_node *v, int version)
{
	int rc;

	if (v->type == DTL_NODE_STRING) {
		for (const char *p = v->string.text; *p;) { /* str.split(): on whitespace */
			size_t len = strcspn(p, " \t\n\r\f\v");
			if (len && (rc = legacy_word(r, v, p, len, version)) < 0)
				return rc;
			p += len;
			p += strspn(p, " \t\n\r\f\v");
		}
		return 0;
	}
	for (size_t i = 0; v->type == DTL_NODE_SEQ && i < v->seq.count; i++) {
		const struct dtl_node *w = &v->seq.items[i];
		if (w->type != DTL_NODE_STRING)
			return dtl_schema_type_error(r->s, w, "fsdp", "a string");
		if ((rc = legacy_word(r, w, w->string.text, w->string.len, version)) < 0)
			return rc;
	}
	return 0;
}

/* auto_wrap_policy and transformer_layer_cls_to_wrap: accelerate's TRANSFORMER_BASED_WRAP
 * looks every class up in the model; without classes, the model's _no_split_modules */
static int trainer_wrap(struct recipe *r, const struct fsdp_cfg *c)
{
	struct dtl_plan *plan = &r->m->plan;
	const struct dtl_node *v = cfg_get(r, c, "auto_wrap_policy");
	const char *policy = "TRANSFORMER_BASED_WRAP";
	int rc;

	if (v && (rc = dtl_schema_string(c->s, v, "fsdp_config.auto_wrap_policy", &policy)) < 0)
		return rc;
	if (strcmp(policy, "NO_WRAP") == 0) {
		plan->fsdp.wrap.present = true;
		plan->fsdp.wrap.count = 0;
		plan->fsdp.wrap.loc = dtl_schema_loc(c->s, v);
		return 0;
	}
	if (strcmp(policy, "SIZE_BASED_WRAP") == 0)
		return dtl_schema_fail(c->s, v,
		                       "SIZE_BASED_WRAP is not simulated by dtypelint (units by "
		                       "parameter count); give the wrap classes in a plan "
		                       "(fsdp.wrap) instead");
	if (strcmp(policy, "TRANSFORMER_BASED_WRAP") != 0)
		return dtl_schema_fail(
		    c->s, v,
		    "the HF Trainer refuses this: 'ValueError: `auto_wrap_policy` "
		    "must be one of ['TRANSFORMER_BASED_WRAP', 'SIZE_BASED_WRAP', "
		    "'NO_WRAP'], got %s.'",
		    policy);
	if (!(v = cfg_get(r, c, "transformer_layer_cls_to_wrap")) || v->type == DTL_NODE_NULL)
		return 0;
	if ((rc = dtl_class_list(c->s, v, "fsdp_config.transformer_layer_cls_to_wrap",
	                         &plan->fsdp.wrap)) < 0)
		return rc;
	plan->fsdp.wrap_by_class = true;
	return 0;
}

/* use_orig_params (FSDP1 only, "true" by default), cpu_offload, and the mixed precision the
 * Accelerator gives the plugin from bf16 / fp16 (FSDP1 MixedPrecision(param, reduce,
 * buffer), FSDP2 MixedPrecisionPolicy(param, reduce, output)) */
static int trainer_fsdp_params(struct recipe *r, const struct fsdp_cfg *c, int version,
                               const struct dtl_node *fsdp)
{
	struct dtl_plan *plan = &r->m->plan;
	const struct dtl_node *v;
	bool on = true;
	int rc;

	if ((v = cfg_get(r, c, "use_orig_params")) &&
	    (rc = trainer_bool(c, v, "use_orig_params", &on)) < 0)
		return rc;
	if (version != 2) {
		plan->fsdp.use_orig_params = on ? DTL_TRUE : DTL_FALSE;
		plan->fsdp.use_orig_params_loc = dtl_schema_loc(v ? c->s : r->s, v ? v : fsdp);
	}
	if ((v = cfg_get(r, c, "cpu_offload")) && py_truthy(v)) {
		plan->fsdp.cpu_offload = DTL_TRUE;
		plan->fsdp.cpu_offload_loc = dtl_schema_loc(c->s, v);
	}
	enum dtl_dtype d = dtl_precision_dtype(plan->precision);
	if (plan->precision != DTL_PRECISION_UNSET && plan->precision != DTL_PRECISION_FP32) {
		plan->fsdp.param_dtype = plan->fsdp.reduce_dtype = d;
		plan->fsdp.param_dtype_loc = plan->fsdp.reduce_dtype_loc = plan->precision_loc;
		if (version != 2) { /* FSDP1, or the default (FSDP2 never casts buffers) */
			plan->fsdp.buffer_dtype = d;
			plan->fsdp.buffer_dtype_loc = plan->precision_loc;
		}
	}
	return 0;
}

/* fsdp_config given as a path: the Trainer json.load()s it from the working directory; a path
 * that is not there is taken relative to the recipe file */
static int open_fsdp_file(struct recipe *r, const struct dtl_node *v, struct dtl_loaded *l)
{
	const char *path = exists(v->string.text)
	                       ? v->string.text
	                       : dtl_path_relative_to(r->arena, r->path, v->string.text);
	int rc;

	if (!path)
		return -ENOMEM;
	if ((rc = dtl_confine_check(path, r->path, dtl_schema_loc(r->s, v), r->error)) < 0 ||
	    (rc = dtl_loaded_open(l, path, r->arena, r->limits, r->error)) < 0)
		return rc;
	if ((rc = dtl_schema_map(&l->s, l->root, "fsdp_config")) < 0)
		dtl_loaded_close(l);
	return rc;
}

static int trainer_fsdp_read(struct recipe *r, const struct dtl_node *fsdp,
                             const struct fsdp_cfg *c)
{
	struct dtl_plan *plan = &r->m->plan;
	const struct dtl_node *vnode;
	int version = 0, rc;

	if ((rc = trainer_fsdp_version(r, c, &version, &vnode)) < 0)
		return rc;
	if (fsdp->type == DTL_NODE_STRING || fsdp->type == DTL_NODE_SEQ)
		if ((rc = legacy_words(r, fsdp, version)) < 0)
			return rc;
	plan->strategy = version == 2 ? DTL_STRATEGY_FSDP2 : DTL_STRATEGY_FSDP1;
	plan->strategy_loc = vnode ? dtl_schema_loc(c->s, vnode) : dtl_schema_loc(r->s, fsdp);
	/* no version: FSDP1 up to transformers 5.9, FSDP2 from 5.10.1 (decided in the sim) */
	plan->fsdp_version_from_trainer = version == 0;
	plan->fsdp.loc = dtl_schema_loc(c->map ? c->s : r->s, c->map ? c->map : fsdp);
	if ((rc = trainer_wrap(r, c)) < 0)
		return rc;
	return trainer_fsdp_params(r, c, version, fsdp);
}

static int trainer_fsdp_key(struct recipe *r)
{
	const struct dtl_node *fsdp = key(r, "fsdp"), *cfg = key(r, "fsdp_config");
	struct fsdp_cfg c = {.s = r->s, .map = NULL};
	struct dtl_loaded l;
	bool opened = false;
	int rc;

	/* `if not self.fsdp: return None`: fsdp_config alone does nothing */
	if (!py_truthy(fsdp))
		return 0;
	if (cfg && cfg->type == DTL_NODE_STRING) {
		if ((rc = open_fsdp_file(r, cfg, &l)) < 0)
			return rc;
		opened = true;
		c = (struct fsdp_cfg){.s = &l.s, .map = l.root};
	} else if (cfg && cfg->type == DTL_NODE_MAP) {
		c.map = cfg;
	} else if (cfg && cfg->type != DTL_NODE_NULL) {
		return dtl_schema_type_error(r->s, cfg, "fsdp_config",
		                             "a mapping or the path of a JSON file");
	}
	rc = trainer_fsdp_read(r, fsdp, &c);
	if (opened)
		dtl_loaded_close(&l);
	return rc;
}

static void precision_keys(struct recipe *r)
{
	struct dtl_plan *plan = &r->m->plan;
	const struct dtl_node *v;

	if (yes(v = key(r, "bf16")) || yes(v = key(r, "pure_bf16")) ||
	    ((v = key(r, "bf16")) && v->type == DTL_NODE_STRING &&
	     strcmp(v->string.text, "auto") == 0)) {
		/* axolotl's bf16: auto is bfloat16 on any GPU that has it */
		plan->precision = DTL_PRECISION_BF16;
		plan->precision_loc = dtl_schema_loc(r->s, v);
	} else if (yes(v = key(r, "fp16"))) {
		plan->precision = DTL_PRECISION_FP16;
		plan->precision_loc = dtl_schema_loc(r->s, v);
	}
}

static void set_trainer(struct recipe *r, const char *trainer, const struct dtl_node *at)
{
	struct dtl_plan *plan = &r->m->plan;
	if (plan->trainer)
		return;
	plan->trainer = trainer;
	plan->trainer_loc = dtl_schema_loc(r->s, at ? at : r->root);
}

/* The quantization a recipe asks for. On a checkpoint that is already quantized,
 * transformers keeps the checkpoint's own config (AutoHfQuantizer.merge_quantization_configs,
 * with a warning); the request is recorded for the trace. */
static void request_quantization(struct recipe *r, enum dtl_quant_method method,
                                 const struct dtl_node *at)
{
	struct dtl_quantization *q = &r->m->quantization;
	if (q->prequantized) {
		q->requested = method;
		q->requested_loc = dtl_schema_loc(r->s, at);
		if (method != q->method)
			warn(r, at,
			     method == DTL_QUANT_BNB_8BIT
			         ? "the recipe asks for bitsandbytes 8-bit, but the checkpoint is "
			           "stored 4-bit: transformers keeps the checkpoint's own "
			           "quantization_config"
			         : "the recipe asks for bitsandbytes 4-bit, but the checkpoint is "
			           "stored 8-bit: transformers keeps the checkpoint's own "
			           "quantization_config");
		return;
	}
	q->method = method;
	q->method_loc = q->loc = dtl_schema_loc(r->s, at);
}

static int set_storage(struct recipe *r, enum dtl_dtype d, struct dtl_loc loc)
{
	struct dtl_quantization *q = &r->m->quantization;
	if (q->prequantized || q->method != DTL_QUANT_BNB_4BIT || d == DTL_DTYPE_NONE)
		return 0;
	q->quant_storage = d;
	q->quant_storage_loc = loc;
	return 0;
}

/*
 * finetuning_type (LLaMA-Factory v0.9.5, rules/versions.yaml recipes: llama-factory-finetuning):
 * lora, oft, freeze or full (FinetuningArguments.__post_init__ asserts it); quantization_bit
 * with anything but LoRA or OFT is refused by get_train_args (_verify_model_args), before the
 * model loads and so before init_adapter's own check (tests/oracle/trainer_apps.py showed it:
 * DISAGREEMENTS.md L1); OFT's adapters are not simulated (DT604).
 */
static int finetuning_type(struct recipe *r, const struct dtl_node *ft, const struct dtl_node *bits)
{
	static const char *const kinds[] = {"lora", "oft", "freeze", "full", NULL};
	const char *text;
	int rc;

	if ((rc = dtl_schema_string(r->s, ft, "finetuning_type", &text)) < 0)
		return rc;
	size_t i = 0;
	while (kinds[i] && strcmp(kinds[i], text) != 0)
		i++;
	if (!kinds[i])
		return dtl_schema_fail(r->s, ft,
		                       "LLaMA-Factory refuses finetuning_type %s: 'AssertionError: "
		                       "Invalid fine-tuning method.'",
		                       dtl_schema_describe(r->s, ft));
	if (bits && bits->type != DTL_NODE_NULL &&
	    (strcmp(text, "freeze") == 0 || strcmp(text, "full") == 0))
		return dtl_schema_fail(
		    r->s, ft,
		    "LLaMA-Factory refuses finetuning_type %s with quantization_bit: "
		    "'ValueError: Quantization is only compatible with the LoRA or "
		    "OFT method.'",
		    text);
	if (strcmp(text, "oft") == 0)
		return dtl_plan_unmodelled(
		    &r->m->plan, r->arena,
		    &(struct dtl_unmodelled){
		        .what = "LLaMA-Factory OFT adapters (finetuning_type oft)",
		        .touches = "the target modules, which get PEFT OFT adapters",
		        .loc = dtl_schema_loc(r->s, ft)});
	return 0;
}

/* The parts of a composite model get_forbidden_modules names (model_utils/visual.py at
 * v0.9.5), from the three flags and their defaults: frozen by full and freeze tuning, left
 * without adapters by LoRA (patch_target_modules) */
static int lf_forbidden_flags(struct recipe *r)
{
	static const struct {
		const char *key;
		unsigned bit;
		bool dflt;
	} flags[] = {{"freeze_vision_tower", DTL_LF_VISION, true},
	             {"freeze_multi_modal_projector", DTL_LF_PROJECTOR, true},
	             {"freeze_language_model", DTL_LF_LANGUAGE, false}};
	struct dtl_recipe *rc = &r->m->recipe;
	int e;

	rc->lf_full_frozen = 0;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		const struct dtl_node *v = key(r, flags[i].key);
		enum dtl_tristate on = flags[i].dflt ? DTL_TRUE : DTL_FALSE;
		if (v && (e = dtl_schema_tristate(r->s, v, flags[i].key, &on)) < 0)
			return e;
		if (on == DTL_TRUE)
			rc->lf_full_frozen |= flags[i].bit;
	}
	return 0;
}

/* "a,b" or [a, b] (FinetuningArguments.split_arg), into out; absent: dflt (or none) */
static int lf_list(struct recipe *r, const char *name, const char *dflt, struct dtl_patterns *out)
{
	const struct dtl_node *v = key(r, name);
	static struct dtl_pattern all = {.text = "all", .len = 3};

	if (!v || v->type == DTL_NODE_NULL) {
		*out = (struct dtl_patterns){.items = dflt ? &all : NULL, .count = dflt ? 1 : 0};
		return 0;
	}
	return dtl_class_list(r->s, v, name, out);
}

/* finetuning_type freeze (_setup_freeze_tuning at v0.9.5); use_llama_pro's expanded blocks
 * are not simulated (DT604) */
static int lf_freeze(struct recipe *r)
{
	struct dtl_recipe *rc = &r->m->recipe;
	const struct dtl_node *v;
	int e;

	rc->lf_freeze = true;
	rc->lf_freeze_layers = 2;
	if ((v = key(r, "freeze_trainable_layers")) &&
	    (e = dtl_schema_int(r->s, v, "freeze_trainable_layers", -(1 << 20), 1 << 20,
	                        &rc->lf_freeze_layers)) < 0)
		return e;
	if ((e = lf_list(r, "freeze_trainable_modules", "all", &rc->lf_freeze_modules)) < 0 ||
	    (e = lf_list(r, "freeze_extra_modules", NULL, &rc->lf_freeze_extra)) < 0)
		return e;
	if (yes(v = key(r, "use_llama_pro")))
		return dtl_plan_unmodelled(
		    &r->m->plan, r->arena,
		    &(struct dtl_unmodelled){.what = "LLaMA-Factory LLaMA Pro (use_llama_pro)",
		                             .touches = "the expanded blocks it trains",
		                             .loc = dtl_schema_loc(r->s, v)});
	return 0;
}

static int llama_factory(struct recipe *r)
{
	struct dtl_manifest *m = r->m;
	const struct dtl_node *v, *bits = key(r, "quantization_bit");
	int rc;

	set_trainer(r, "hf-trainer", NULL);
	if ((v = key(r, "quantization_method")) && v->type == DTL_NODE_STRING &&
	    strcmp(v->string.text, "bnb") != 0 && strcmp(v->string.text, "bitsandbytes") != 0)
		return dtl_schema_fail(r->s, v,
		                       "quantization_method %s is not simulated (dtypelint models "
		                       "bitsandbytes)",
		                       dtl_schema_describe(r->s, v));
	enum dtl_dtype compute = r->m->plan.precision == DTL_PRECISION_BF16   ? DTL_DTYPE_BF16
	                         : r->m->plan.precision == DTL_PRECISION_FP16 ? DTL_DTYPE_F16
	                                                                      : DTL_DTYPE_NONE;
	if (bits) {
		int64_t n;
		if ((rc = dtl_schema_int(r->s, bits, "quantization_bit", 2, 8, &n)) < 0)
			return rc;
		if (n != 4 && n != 8)
			return dtl_schema_fail(r->s, bits,
			                       "quantization_bit %lld is not bitsandbytes 4 or 8",
			                       (long long)n);
		request_quantization(r, n == 4 ? DTL_QUANT_BNB_4BIT : DTL_QUANT_BNB_8BIT, bits);
		/* quantization.py: bnb_4bit_compute_dtype = bnb_4bit_quant_storage =
		 * compute_dtype, from bf16 / pure_bf16 / fp16 (parser.py) */
		if (compute != DTL_DTYPE_NONE && !m->quantization.prequantized) {
			m->quantization.compute_dtype = compute;
			m->quantization.compute_dtype_loc = r->m->plan.precision_loc;
		}
		if ((rc = set_storage(r, compute, r->m->plan.precision_loc)) < 0)
			return rc;
	}
	const struct dtl_node *ft = key(r, "finetuning_type");
	bool lora = ft ? ft->type == DTL_NODE_STRING && strcmp(ft->string.text, "lora") == 0
	               : key(r, "lora_target") != NULL;
	if (ft && (rc = finetuning_type(r, ft, bits)) < 0)
		return rc;
	if (lora) {
		adapter_init(&m->adapter, dtl_schema_loc(r->s, ft ? ft : r->root));
		if ((v = key(r, "lora_rank")) &&
		    (rc = dtl_schema_int(r->s, v, "lora_rank", 1, 1 << 20, &m->adapter.r)) < 0)
			return rc;
		if ((rc = target_modules(r, key(r, "lora_target"), "lora_target")) < 0)
			return rc;
		/* adapter.py: find_all_linear_modules, then patch_target_modules */
		m->recipe.lf_lora = true;
		if ((rc = lf_forbidden_flags(r)) < 0)
			return rc;
	}
	/* adapter.py: trainable params to float32 unless pure_bf16 (or badam), or ZeRO-3
	 * without quantization ("zero3 already in fp32") */
	bool pure = yes(key(r, "pure_bf16")) || yes(key(r, "use_badam"));
	bool zero3_plain = !bits && m->plan.strategy == DTL_STRATEGY_ZERO3;
	if (!pure && !zero3_plain) {
		m->recipe.cast_trainable = DTL_DTYPE_F32;
		m->recipe.cast_trainable_loc = dtl_schema_loc(r->s, ft     ? ft
		                                                    : bits ? bits
		                                                           : r->root);
	}
	if (yes(v = key(r, "upcast_layernorm"))) {
		m->recipe.upcast_layernorm = true;
		m->recipe.upcast_layernorm_loc = dtl_schema_loc(r->s, v);
	}
	if (ft && ft->type == DTL_NODE_STRING &&
	    (strcmp(ft->string.text, "full") == 0 || strcmp(ft->string.text, "freeze") == 0)) {
		m->recipe.lf_full = strcmp(ft->string.text, "full") == 0;
		m->recipe.lf_full_loc = dtl_schema_loc(r->s, ft);
		if ((rc = lf_forbidden_flags(r)) < 0)
			return rc;
	}
	if (ft && ft->type == DTL_NODE_STRING && strcmp(ft->string.text, "freeze") == 0 &&
	    (rc = lf_freeze(r)) < 0)
		return rc;
	/* a forward hook that casts lm_head's output to float32: no parameter changes dtype
	 * (model_utils/checkpointing.py#L180-L184 at v0.9.5) */
	(void)key(r, "upcast_lmhead_output");
	return 0;
}

/* SFTConfig's model_init_kwargs (and the other TRL configs'): the trl scripts update the
 * ModelConfig's {dtype: ...} with it, so its dtype is the load dtype (rules/versions.yaml
 * recipes: trl-model-init-kwargs). get_quantization_config reads the ModelConfig's own dtype
 * for the 4-bit compute dtype, which model_init_kwargs does not change (trl_model_config). */
static const struct dtl_node *init_kwargs_dtype(const struct recipe *r)
{
	const struct dtl_node *mik = key(r, "model_init_kwargs"), *dt;

	if (!mik || mik->type != DTL_NODE_MAP)
		return NULL;
	if (!(dt = dtl_node_get(mik, "dtype")))
		dt = dtl_node_get(mik, "torch_dtype");
	return dt;
}

/* The adapter's lora_dropout, which PEFT's ParamWrapper refuses when not 0 (DT412): the
 * recipe's, else, for TRL's use_peft, ModelConfig's default 0.05 (trl/trainer/model_config.py
 * at v1.16.0), where use_peft is set; PEFT's examples (use_peft_lora) are left unset. */
static int lora_dropout(struct recipe *r)
{
	struct dtl_adapter *a = &r->m->adapter;
	const struct dtl_node *v = key(r, "lora_dropout");

	if (v && v->type != DTL_NODE_NULL) {
		a->lora_dropout_loc = dtl_schema_loc(r->s, v);
		return dtl_schema_float(r->s, v, "lora_dropout", 0, 1, &a->lora_dropout);
	}
	if (yes(v = key(r, "use_peft"))) {
		a->lora_dropout = 0.05;
		a->lora_dropout_loc = dtl_schema_loc(r->s, v);
	}
	return 0;
}

static int trl_model_config(struct recipe *r)
{
	struct dtl_manifest *m = r->m;
	const struct dtl_node *v, *dt;
	enum dtl_dtype model_dtype = DTL_DTYPE_NONE;
	int rc;

	/* cast_lm_head_to_fp32 is a GRPOConfig key: a GRPO recipe */
	v = key(r, "cast_lm_head_to_fp32");
	set_trainer(r, yes(v) ? "trl-grpo" : "trl-sft", v);
	/* ModelConfig.dtype itself: the 4-bit compute dtype (and TRL <= 0.25's storage) */
	const struct dtl_node *config_dt = key(r, "dtype");
	enum dtl_dtype config_dtype = DTL_DTYPE_NONE;
	if (!config_dt)
		config_dt = key(r, "torch_dtype");
	if (config_dt && config_dt->type == DTL_NODE_STRING &&
	    strcmp(config_dt->string.text, "auto") != 0 &&
	    (rc = dtl_schema_dtype(r->s, config_dt, "dtype", true, &config_dtype)) < 0)
		return rc;
	if (!(dt = init_kwargs_dtype(r)))
		dt = config_dt;
	if (dt && dt->type == DTL_NODE_STRING && strcmp(dt->string.text, "auto") != 0) {
		if ((rc = dtl_schema_dtype(r->s, dt, "dtype", true, &model_dtype)) < 0)
			return rc;
		/* from_pretrained(dtype=...) */
		m->model.load_mode = DTL_LOAD_DTYPE;
		m->model.load_dtype = model_dtype;
		m->model.load_dtype_loc = dtl_schema_loc(r->s, dt);
	} else if (dt && dt->type == DTL_NODE_STRING) {
		m->model.load_mode = DTL_LOAD_AUTO;
		m->model.load_dtype_loc = dtl_schema_loc(r->s, dt);
	} else if (!dt && !key(r, "use_4bit_quantization")) {
		/* TRL >= 0.27 then loads in float32 (rules/versions.yaml
		 * trl-model-config-dtype-float32); decided with the plan's TRL version */
		m->recipe.trl_dtype_unset = true;
		m->recipe.trl_dtype_unset_loc = dtl_schema_loc(r->s, r->root);
	}
	/* PEFT's examples/sft/train.py: its own names for the same settings; the model loads
	 * in the storage dtype when that is floating, else in float32 (utils.py) */
	const struct dtl_node *peft_storage = key(r, "bnb_4bit_quant_storage_dtype");
	bool peft_example = yes(v = key(r, "use_4bit_quantization"));
	if (peft_example) {
		enum dtl_dtype d = DTL_DTYPE_U8;
		if (peft_storage &&
		    (rc = dtl_schema_dtype(r->s, peft_storage, "bnb_4bit_quant_storage_dtype", true,
		                           &d)) < 0)
			return rc;
		m->model.load_mode = DTL_LOAD_DTYPE;
		m->model.load_dtype = dtl_dtype_is_floating(d) ? d : DTL_DTYPE_F32;
		m->model.load_dtype_loc = dtl_schema_loc(r->s, peft_storage ? peft_storage : v);
		request_quantization(r, DTL_QUANT_BNB_4BIT, v);
		if ((rc = set_storage(r, d,
		                      dtl_schema_loc(r->s, peft_storage ? peft_storage : v))) < 0)
			return rc;
	}
	if ((v = key(r, "bnb_4bit_compute_dtype")) &&
	    m->quantization.method == DTL_QUANT_BNB_4BIT && !m->quantization.prequantized) {
		if ((rc = dtl_schema_dtype(r->s, v, "bnb_4bit_compute_dtype", true,
		                           &m->quantization.compute_dtype)) < 0)
			return rc;
		m->quantization.compute_dtype_loc = dtl_schema_loc(r->s, v);
	}
	if (!peft_example && yes(v = key(r, "load_in_4bit")))
		request_quantization(r, DTL_QUANT_BNB_4BIT, v);
	else if (!peft_example && yes(v = key(r, "load_in_8bit")))
		request_quantization(r, DTL_QUANT_BNB_8BIT, v);
	struct dtl_quantization *q = &m->quantization;
	if (q->method == DTL_QUANT_BNB_4BIT && !q->prequantized) {
		/* get_quantization_config: compute = ModelConfig.dtype, not model_init_kwargs'
		 * (unset: BitsAndBytesConfig's float32; DISAGREEMENTS.md D13) */
		if (config_dtype != DTL_DTYPE_NONE) {
			q->compute_dtype = config_dtype;
			q->compute_dtype_loc = dtl_schema_loc(r->s, config_dt);
			q->storage_if_trl_follows_dtype = config_dtype;
			q->storage_if_trl_follows_dtype_loc = dtl_schema_loc(r->s, config_dt);
		}
		if ((v = key(r, "bnb_4bit_quant_storage")) && v->type != DTL_NODE_NULL) {
			enum dtl_dtype d;
			if ((rc = dtl_schema_dtype(r->s, v, "bnb_4bit_quant_storage", true, &d)) <
			        0 ||
			    (rc = set_storage(r, d, dtl_schema_loc(r->s, v))) < 0)
				return rc;
		}
	}
	if (yes(v = key(r, "cast_lm_head_to_fp32"))) {
		/* GRPOConfig: the GRPO trainer's */
		m->recipe.cast_lm_head_fp32 = true;
		m->recipe.cast_lm_head_fp32_loc = dtl_schema_loc(r->s, v);
	}
	if (yes(v = key(r, "use_peft")) || yes(v = key(r, "use_peft_lora"))) {
		adapter_init(&m->adapter, dtl_schema_loc(r->s, v));
		if ((v = key(r, "lora_r")) &&
		    (rc = dtl_schema_int(r->s, v, "lora_r", 1, 1 << 20, &m->adapter.r)) < 0)
			return rc;
		if ((rc = target_modules(r, key(r, "lora_target_modules"), "lora_target_modules")) <
		    0)
			return rc;
		/* ModelConfig.__post_init__ turns a list of one name into that name, a regular
		 * expression for PEFT (trl-one-target-is-regex, applied in the peft stage) */
		v = key(r, "lora_target_modules");
		m->adapter.target_one_item_regex =
		    v && v->type == DTL_NODE_SEQ && m->adapter.target_modules.count == 1;
		if ((v = key(r, "lora_modules_to_save")) && v->type != DTL_NODE_NULL &&
		    (rc = dtl_schema_patterns(r->s, v, "lora_modules_to_save", DTL_PATTERN_PLAIN,
		                              &m->adapter.modules_to_save)) < 0)
			return rc;
		/* get_peft_config passes it to LoraConfig as target_parameters when set (trl
		 * 1.16.0 trainer/utils.py; peft-lora-target-parameters, DT412 before 0.17.0) */
		if ((v = key(r, "lora_target_parameters")) && v->type != DTL_NODE_NULL &&
		    (rc = dtl_schema_patterns(r->s, v, "lora_target_parameters", DTL_PATTERN_PLAIN,
		                              &m->adapter.target_parameters)) < 0)
			return rc;
		if ((v = key(r, "use_dora")) &&
		    (m->adapter.use_dora_loc = dtl_schema_loc(r->s, v),
		     (rc = dtl_schema_tristate(r->s, v, "use_dora", &m->adapter.use_dora)) < 0))
			return rc;
		if ((rc = lora_dropout(r)) < 0)
			return rc;
		/* get_peft_config's task_type; unset, ModelConfig's CAUSAL_LM (DT411 reads it so)
		 */
		if ((v = key(r, "lora_task_type")) &&
		    (rc = dtl_adapter_task_type(r->s, v, "lora_task_type", &m->adapter)) < 0)
			return rc;
	}
	return 0;
}

/* fsdp_config.NAME, or the deprecated fsdp_NAME that axolotl's validator renames
 * (check_fsdp_config_kwargs_prefix) */
static const struct dtl_node *axolotl_fsdp(const struct recipe *r, const char *name)
{
	const struct dtl_node *cfg = key(r, "fsdp_config"), *v;
	char prefixed[64] = "fsdp_";

	if (!cfg || cfg->type != DTL_NODE_MAP)
		return NULL;
	if ((v = get_marked(r, cfg, name)))
		return v;
	strncat(prefixed, name, sizeof(prefixed) - sizeof("fsdp_"));
	return get_marked(r, cfg, prefixed);
}

/*
 * axolotl's wrap classes: setup_fsdp_envs exports fsdp_config.transformer_layer_cls_to_wrap
 * (a str in its schema) as FSDP_TRANSFORMER_CLS_TO_WRAP, which accelerate splits on commas and
 * looks up in the model (versions.yaml recipes: axolotl-fsdp-wrap). mixed_precision_policy is
 * declared in its schema but read by none of its code: the FSDP dtypes follow bf16 / fp16.
 */
static int axolotl_wrap(struct recipe *r)
{
	struct dtl_plan *plan = &r->m->plan;
	const struct dtl_node *v;
	const char *policy = NULL;
	int rc;

	if ((v = axolotl_fsdp(r, "auto_wrap_policy")) &&
	    (rc = dtl_schema_string(r->s, v, "auto_wrap_policy", &policy)) < 0)
		return rc;
	if (policy && strcmp(policy, "SIZE_BASED_WRAP") == 0)
		return dtl_schema_fail(r->s, v,
		                       "SIZE_BASED_WRAP is not simulated by dtypelint (units by "
		                       "parameter count); give the wrap classes in a plan "
		                       "(fsdp.wrap) instead");
	/* looked at, not read: it stays on --show-plan's "not read" row */
	const struct dtl_node *cfg = key(r, "fsdp_config");
	if ((v = dtl_node_get(cfg, "mixed_precision_policy")) ||
	    (v = dtl_node_get(cfg, "fsdp_mixed_precision_policy")))
		warn(r, v,
		     "fsdp_config.mixed_precision_policy is not read: axolotl v0.18.0 declares "
		     "it but none of its code uses it; the FSDP dtypes here follow bf16 / fp16");
	if (!(v = axolotl_fsdp(r, "transformer_layer_cls_to_wrap")))
		return 0;
	if (v->type != DTL_NODE_STRING)
		return dtl_schema_type_error(r->s, v, "transformer_layer_cls_to_wrap",
		                             "a string (axolotl's schema: str)");
	if ((rc = dtl_class_list(r->s, v, "transformer_layer_cls_to_wrap", &plan->fsdp.wrap)) < 0)
		return rc;
	plan->fsdp.wrap_by_class = true;
	return 0;
}

/* PeftConfig.validate_qlora (axolotl v0.19.0 utils/schemas/peft.py#L201-L224,
 * rules/versions.yaml recipes: axolotl-validation): unless merge_lora, QLoRA in 8-bit and
 * QLoRA without load_in_4bit fail the config's validation, before anything loads */
static int axolotl_qlora_check(struct recipe *r, const struct dtl_node *adapter)
{
	const struct dtl_node *v;

	if (yes(key(r, "merge_lora")))
		return 0;
	if (yes(v = key(r, "load_in_8bit")))
		return dtl_schema_fail(r->s, v,
		                       "axolotl refuses adapter qlora with load_in_8bit: "
		                       "'ValidationError: Value error, Can't load qlora in 8bit'");
	if (!yes(key(r, "load_in_4bit")))
		return dtl_schema_fail(r->s, adapter,
		                       "axolotl refuses adapter qlora without load_in_4bit: "
		                       "'ValidationError: Value error, Require cfg.load_in_4bit to "
		                       "be True for qlora'");
	return 0;
}

/* bf16 unset is axolotl's default "auto" (utils/schemas/config.py), which resolve_dtype
 * turns into bf16 on a GPU that has it, as bf16: auto (rules/versions.yaml recipes:
 * axolotl-validation); a precision another input set stays */
static void axolotl_bf16_auto(struct recipe *r)
{
	const struct dtl_node *bf = key(r, "bf16");
	struct dtl_plan *plan = &r->m->plan;

	if ((bf && bf->type != DTL_NODE_NULL) || yes(key(r, "fp16")) ||
	    plan->precision != DTL_PRECISION_UNSET)
		return;
	plan->precision = DTL_PRECISION_BF16;
	plan->precision_loc = dtl_schema_loc(r->s, r->root);
}

/* ModelLoader._configure_embedding_dtypes (axolotl v0.19.0 loaders/model.py#L435-L490,
 * rules/versions.yaml recipes: axolotl-embedding-upcast): without FSDP (decided in the sim),
 * the modules named like a norm and the embedding modules go to float32, and back to
 * torch_dtype only with an adapter, an attention that needs the cast (any but eager and
 * sdpa: attn_implementation, or a legacy flag such as flash_attention) or cut_cross_entropy */
static void axolotl_embedding_upcast(struct recipe *r, const char *adapter_kind)
{
	static const char *const cast_flags[] = {"xformers_attention", "sage_attention",
	                                         "flex_attention", "flash_attention", NULL};
	enum dtl_strategy st = r->m->plan.strategy;
	const struct dtl_node *v;

	if (adapter_kind || st == DTL_STRATEGY_FSDP1 || st == DTL_STRATEGY_FSDP2 ||
	    yes(key(r, "cut_cross_entropy")))
		return;
	v = key(r, "attn_implementation");
	if (v && v->type == DTL_NODE_STRING && strcmp(v->string.text, "eager") != 0 &&
	    strcmp(v->string.text, "sdpa") != 0)
		return;
	for (size_t i = 0; !v && cast_flags[i]; i++)
		if (yes(key(r, cast_flags[i])))
			return;
	r->m->recipe.axolotl_upcast = true;
	r->m->recipe.axolotl_upcast_loc = dtl_schema_loc(r->s, r->root);
}

/* ModelLoader._prepare_model_for_quantization (axolotl v0.19.0 loaders/model.py#L1116-L1151,
 * rules/versions.yaml recipes: axolotl-kbit): LoRA or QLoRA on a 4-bit or 8-bit model runs
 * PEFT's prepare_model_for_kbit_training (every 16-bit parameter to float32), but not under
 * ZeRO-3 nor QLoRA under FSDP; _configure_embedding_dtypes then casts the norm and embedding
 * modules back to torch_dtype, so the biases and other 16-bit parameters stay float32 */
static void axolotl_kbit(struct recipe *r, const char *kind, bool quantized)
{
	struct dtl_manifest *m = r->m;
	enum dtl_strategy st = m->plan.strategy;

	if (!kind || !quantized || st == DTL_STRATEGY_ZERO3 ||
	    (strcmp(kind, "qlora") == 0 && (st == DTL_STRATEGY_FSDP1 || st == DTL_STRATEGY_FSDP2)))
		return;
	if (m->adapter.prepare_kbit_training == DTL_UNSET)
		m->adapter.prepare_kbit_training = DTL_TRUE;
	m->recipe.axolotl_kbit_restore = true;
	m->recipe.axolotl_kbit_restore_loc = m->adapter.loc;
}

static int axolotl(struct recipe *r)
{
	struct dtl_manifest *m = r->m;
	const struct dtl_node *v, *adapter = key(r, "adapter");
	const char *kind = NULL;
	int rc;
	const struct dtl_node *in8 = key(r, "load_in_8bit");

	set_trainer(r, "hf-trainer", NULL);
	/* axolotl sets up accelerate's FSDP itself: FSDP2 only when fsdp_version (top level or
	 * in fsdp_config) is 2, whatever the Trainer's default (versions.yaml
	 * recipes.axolotl-fsdp-version) */
	if (m->plan.strategy == DTL_STRATEGY_FSDP1 || m->plan.strategy == DTL_STRATEGY_FSDP2) {
		m->plan.fsdp_version_from_trainer = false;
		if ((v = key(r, "fsdp_version")) && v->type == DTL_NODE_INT && v->integer == 2) {
			m->plan.strategy = DTL_STRATEGY_FSDP2;
			m->plan.strategy_loc = dtl_schema_loc(r->s, v);
		}
		if ((rc = axolotl_wrap(r)) < 0)
			return rc;
	}
	if (adapter && adapter->type != DTL_NODE_NULL &&
	    (rc = dtl_schema_string(r->s, adapter, "adapter", &kind)) < 0)
		return rc;
	if (kind && strcmp(kind, "qlora") == 0 && (rc = axolotl_qlora_check(r, adapter)) < 0)
		return rc;
	axolotl_bf16_auto(r);
	axolotl_embedding_upcast(r, kind);
	/* utils/config: torch_dtype is bf16 with bf16, fp16 with fp16 or load_in_8bit, else
	 * float32; the model loads in it */
	enum dtl_dtype model_dtype = m->plan.precision == DTL_PRECISION_BF16 ? DTL_DTYPE_BF16
	                             : m->plan.precision == DTL_PRECISION_FP16 || yes(in8)
	                                 ? DTL_DTYPE_F16
	                                 : DTL_DTYPE_F32;
	m->model.load_mode = DTL_LOAD_DTYPE;
	m->model.load_dtype = model_dtype;
	m->model.load_dtype_loc =
	    m->plan.precision_loc.line ? m->plan.precision_loc : dtl_schema_loc(r->s, r->root);
	if (kind && strcmp(kind, "qlora") == 0 && yes(v = key(r, "load_in_4bit"))) {
		request_quantization(r, DTL_QUANT_BNB_4BIT, v);
		if (!m->quantization.prequantized) {
			/* loaders/model.py: storage bfloat16 for every QLoRA (#1428) */
			m->quantization.compute_dtype = model_dtype;
			m->quantization.compute_dtype_loc = m->model.load_dtype_loc;
			if ((rc = set_storage(r, DTL_DTYPE_BF16, dtl_schema_loc(r->s, adapter))) <
			    0)
				return rc;
		}
	} else if (yes(v = key(r, "load_in_8bit"))) {
		request_quantization(r, DTL_QUANT_BNB_8BIT, v);
	}
	if (kind && (strcmp(kind, "lora") == 0 || strcmp(kind, "qlora") == 0)) {
		adapter_init(&m->adapter, dtl_schema_loc(r->s, adapter));
		if ((v = key(r, "lora_r")) &&
		    (rc = dtl_schema_int(r->s, v, "lora_r", 1, 1 << 20, &m->adapter.r)) < 0)
			return rc;
		if (yes(v = key(r, "lora_target_linear"))) {
			m->adapter.target_modules.present = true;
			m->adapter.target_modules.loc = dtl_schema_loc(r->s, v);
			m->adapter.target_modules_string = "all-linear";
		} else if ((rc = target_modules(r, key(r, "lora_target_modules"),
		                                "lora_target_modules")) < 0) {
			return rc;
		}
		if ((v = key(r, "peft_autocast_adapter_dtype")) &&
		    (rc = dtl_schema_tristate(r->s, v, "peft_autocast_adapter_dtype",
		                              &m->adapter.autocast_adapter_dtype)) < 0)
			return rc;
		axolotl_kbit(r, kind, m->quantization.method != DTL_QUANT_NONE);
	}
	return 0;
}

/*
 * Keys only TRL's argument classes have, so that a recipe holding one is run by a TRL trainer:
 * ModelConfig's PEFT and bitsandbytes keys (trl/trainer/model_config.py, rules/versions.yaml
 * recipes: trl-model-config), SFTConfig's and GRPOConfig's own keys, and PEFT's examples/sft
 * keys (its train.py builds an SFTTrainer). transformers' TrainingArguments and its examples'
 * ModelArguments (model_name_or_path, torch_dtype, dataset_name) have none of them.
 */
static bool trl_keys(struct recipe *r)
{
	static const char *const keys[] = {"use_peft",
	                                   "lora_r",
	                                   "lora_alpha",
	                                   "lora_dropout",
	                                   "lora_target_modules",
	                                   "lora_modules_to_save",
	                                   "lora_task_type",
	                                   "use_rslora",
	                                   "use_dora",
	                                   "load_in_4bit",
	                                   "load_in_8bit",
	                                   "bnb_4bit_quant_type",
	                                   "use_bnb_nested_quant",
	                                   "bnb_4bit_quant_storage",
	                                   "dataset_text_field",
	                                   "max_seq_length",
	                                   "packing",
	                                   "completion_only_loss",
	                                   "assistant_only_loss",
	                                   "padding_free",
	                                   "cast_lm_head_to_fp32",
	                                   "model_init_kwargs",
	                                   "num_generations",
	                                   "use_vllm",
	                                   "dataset_mixture",
	                                   "dataset_mixer",
	                                   "chat_template",
	                                   "use_peft_lora",
	                                   "use_4bit_quantization",
	                                   NULL};
	for (const char *const *k = keys; *k; k++)
		if (has(r, *k))
			return true;
	return false;
}

/* name (prefix "fsdp_config." for fsdp_config's keys) onto the read or the not-read list */
static int list_key(struct recipe *r, const struct dtl_node *k, const char *prefix, bool read)
{
	struct dtl_recipe *info = &r->m->recipe;
	const char *text = k->type == DTL_NODE_STRING ? k->string.text : k->raw;
	const char ***list = read ? &info->keys_read : &info->keys_not_read;
	size_t *count = read ? &info->keys_read_count : &info->keys_not_read_count;
	size_t cap = r->root->map.count +
	             (r->marks[1].map ? r->marks[1].map->map.count : 0); /* every key once */

	if (!text)
		return 0;
	if (!*list && !(*list = dtl_arena_calloc(r->arena, cap, sizeof(**list))))
		return -ENOMEM;
	if (!((*list)[(*count)++] = dtl_arena_sprintf(r->arena, "%s%s", prefix, text)))
		return -ENOMEM;
	return 0;
}

/* Every key of the recipe, read or not: fsdp_config's one by one, as axolotl and the
 * Trainer read only some of them */
static int record_keys(struct recipe *r)
{
	const struct dtl_node *root = r->root, *cfg = r->marks[1].map;
	int rc;

	/* a second recipe (a launch script's) replaces the first's lists */
	r->m->recipe.keys_read = r->m->recipe.keys_not_read = NULL;
	r->m->recipe.keys_read_count = r->m->recipe.keys_not_read_count = 0;
	for (size_t i = 0; i < root->map.count; i++) {
		const struct dtl_pair *pair = &root->map.pairs[i];
		if (cfg && &pair->value == cfg && r->marks[0].read[i]) {
			for (size_t j = 0; j < cfg->map.count; j++)
				if ((rc = list_key(r, &cfg->map.pairs[j].key, "fsdp_config.",
				                   r->marks[1].read[j])) < 0)
					return rc;
		} else if ((rc = list_key(r, &pair->key, "", r->marks[0].read[i])) < 0) {
			return rc;
		}
	}
	return 0;
}

int dtl_import_trainer_args(const char *path, struct dtl_arena *arena,
                            const struct dtl_limits *limits, struct dtl_manifest *m,
                            struct dtl_error *error)
{
	struct dtl_loaded l;
	int rc;

	if ((rc = dtl_loaded_open(&l, path, arena, limits, error)) < 0)
		return rc;
	struct recipe r = {.s = &l.s,
	                   .root = l.root,
	                   .path = path,
	                   .arena = arena,
	                   .limits = limits,
	                   .m = m,
	                   .error = error};
	struct dtl_plan *plan = &m->plan;
	if ((rc = dtl_schema_root_map(&l.s, l.root, "trainer arguments")) < 0)
		goto out;
	if (!plan->file) {
		plan->file = l.s.file;
		plan->loc = dtl_schema_loc(&l.s, l.root);
	}
	const struct dtl_node *cfg = dtl_node_get(l.root, "fsdp_config");
	r.marks[0] = (struct read_marks){l.root, dtl_arena_calloc(arena, l.root->map.count + 1, 1)};
	if (cfg && cfg->type == DTL_NODE_MAP)
		r.marks[1] =
		    (struct read_marks){cfg, dtl_arena_calloc(arena, cfg->map.count + 1, 1)};
	if (!r.marks[0].read || (r.marks[1].map && !r.marks[1].read)) {
		rc = -ENOMEM;
		goto out;
	}
	precision_keys(&r);
	if ((rc = deepspeed_key(&r)) < 0)
		goto out;
	bool lf = has(&r, "quantization_bit") || has(&r, "finetuning_type") ||
	          has(&r, "lora_target") || has(&r, "pure_bf16");
	bool axo =
	    !lf && (has(&r, "base_model") || has(&r, "adapter") || has(&r, "lora_target_linear"));
	/* axolotl sets accelerate's FSDP up itself; the others are TrainingArguments */
	if (axo)
		axolotl_fsdp_key(&r);
	else if ((rc = trainer_fsdp_key(&r)) < 0)
		goto out;
	if (lf) {
		m->recipe.kind = "LLaMA-Factory";
		rc = llama_factory(&r);
	} else if (axo) {
		m->recipe.kind = "axolotl";
		rc = axolotl(&r);
	} else if (trl_keys(&r)) {
		m->recipe.kind = "TRL ModelConfig";
		rc = trl_model_config(&r);
	} else {
		/* generic TrainingArguments run by the HF Trainer: not TRL, whose trainers cast
		 * adapters their own way (issue 33); the model keys are read alike */
		m->recipe.kind = "TrainingArguments";
		set_trainer(&r, "hf-trainer", NULL);
		rc = trl_model_config(&r);
		/* TRL's float32 default is TRL's alone: the HF Trainer's when the plan names
		 * none, TRL's when it names a TRL trainer (the sim decides) */
		m->recipe.args_dtype_unset = m->recipe.trl_dtype_unset;
		m->recipe.trl_dtype_unset = false;
	}
	if (rc >= 0)
		rc = near_misses(&r);
	if (rc >= 0)
		rc = record_keys(&r);
out:
	dtl_loaded_close(&l);
	return rc < 0 ? rc : 0;
}

/* A scalar string node at loc, as the YAML reader would have made it */
static void string_node(struct dtl_node *node, const char *text, struct dtl_loc loc)
{
	node->type = DTL_NODE_STRING;
	node->line = loc.line;
	node->column = loc.column;
	node->raw = node->string.text = text;
	node->raw_len = (uint32_t)strlen(text);
	node->string.len = node->raw_len;
}

int dtl_import_trainer_fsdp(const char *fsdp, struct dtl_loc fsdp_loc, const char *config,
                            struct dtl_loc config_loc, struct dtl_arena *arena,
                            const struct dtl_limits *limits, struct dtl_manifest *m,
                            struct dtl_error *error)
{
	/* the script's words as the tree a recipe file would give: {fsdp: ..., fsdp_config: ...} */
	struct dtl_schema s = {
	    .file = fsdp_loc.file, .arena = arena, .limits = limits, .error = error};
	struct dtl_pair *pairs = dtl_arena_calloc(arena, 2, sizeof(*pairs));
	struct dtl_node root = {
	    .type = DTL_NODE_MAP, .line = fsdp_loc.line, .column = fsdp_loc.column};

	if (!pairs)
		return -ENOMEM;
	string_node(&pairs[0].key, "fsdp", fsdp_loc);
	if (fsdp) {
		string_node(&pairs[0].value, fsdp, fsdp_loc);
	} else { /* a bare --fsdp: True */
		pairs[0].value = (struct dtl_node){.type = DTL_NODE_BOOL,
		                                   .line = fsdp_loc.line,
		                                   .column = fsdp_loc.column,
		                                   .raw = "True",
		                                   .raw_len = 4,
		                                   .boolean = true};
	}
	if (config) {
		string_node(&pairs[1].key, "fsdp_config", config_loc);
		string_node(&pairs[1].value, config, config_loc);
	}
	root.map.pairs = pairs;
	root.map.count = config ? 2 : 1;
	struct recipe r = {.s = &s,
	                   .root = &root,
	                   .path = fsdp_loc.file,
	                   .arena = arena,
	                   .limits = limits,
	                   .m = m,
	                   .error = error};
	int rc = trainer_fsdp_key(&r);
	return rc < 0 ? rc : 0;
}
