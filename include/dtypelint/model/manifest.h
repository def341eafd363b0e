/* SPDX-License-Identifier: MIT */
/*
 * The model manifest (docs/design.md §3, schema version 1), validated into typed structs. All
 * strings and arrays live in the arena passed to dtl_manifest_parse(); nothing here is freed alone.
 */
#ifndef DTYPELINT_MANIFEST_H
#define DTYPELINT_MANIFEST_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/manifest.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/input/doc.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/core/limits.h"
#include "dtypelint/model/plan.h"

enum dtl_tensor_kind {
	DTL_KIND_PARAM,
	DTL_KIND_BUFFER,
	/* set by the simulation only, never parsed: a pre-quantized checkpoint's absmax,
	 * quant_map, quant_state.*, SCB or weight_format entry. It lives in its weight's
	 * quant_state (or Int8Params.SCB), not in named_parameters() or named_buffers(). */
	DTL_KIND_QUANT_STATE,
};

/* The most elements a tensor may have: its bytes in the widest dtype the replay can give it
 * (float64, 8 bytes) still fit in int64, so shape x dtype never wraps anywhere downstream.
 * More is an input error naming the tensor (issue 35, item 5); sums over many tensors
 * saturate instead (memory-estimate.c). */
#define DTL_NUMEL_MAX (INT64_MAX / 8)

struct dtl_tensor_decl {
	const char *name;
	uint32_t name_len;
	enum dtl_tensor_kind kind;
	enum dtl_dtype dtype; /* NONE: inherits model.checkpoint_dtype */
	uint32_t rank;
	int64_t *shape; /* rank entries; NULL when no shape was given */
	int64_t numel;  /* -1 when unknown (no shape); at most DTL_NUMEL_MAX */
	enum dtl_tristate trainable;
	bool persistent;          /* buffers only; default true */
	struct dtl_loc loc;       /* the tensor's entry */
	struct dtl_loc dtype_loc; /* its dtype key, or loc */
	/* why an importer gave this dtype (e.g. "pre-quantized checkpoint: bitsandbytes 4-bit,
	 * uint8 storage"); NULL: the entry declares it */
	const char *dtype_reason;
	/* importers only (an architecture profile's created buffer): 1 + the behaviour (enum
	 * dtl_behavior) in whose versions the tensor exists; 0: always. Such tensors come last. */
	uint16_t gate;
	/* importers only: created under torch's default dtype, so from_pretrained's dtype */
	bool load_dtype;
};

/* a path glob mapped to a name: modules (class), kernels (op) */
struct dtl_glob_map {
	struct dtl_pattern glob;
	const char *value;
};

struct dtl_tied_group {
	struct dtl_pattern *names;
	size_t count;
	struct dtl_loc loc;
};

enum dtl_load_mode {
	DTL_LOAD_AS_IS = 0, /* the dtypes are the dtypes in memory */
	DTL_LOAD_AUTO,      /* from_pretrained(dtype="auto") */
	DTL_LOAD_NONE,      /* from_pretrained(dtype=None): the default dtype, fp32 */
	DTL_LOAD_DTYPE,     /* from_pretrained(dtype=<load_dtype>) */
};

/* The sub-configs of a composite config.json (struct dtl_model_info.subconfig_dtype) */
enum dtl_subconfig {
	DTL_SUBCONFIG_TEXT,
	DTL_SUBCONFIG_VISION,
	DTL_SUBCONFIG_AUDIO,
};

struct dtl_model_info {
	const char *name;
	const char *architecture;
	struct dtl_loc architecture_loc;
	/* importers only: config.json's model_type (a folder); NULL when not known. Trainers
	 * that key their steps on it (LLaMA-Factory's composite models) read it. */
	const char *model_type;
	enum dtl_dtype checkpoint_dtype; /* NONE: unset (float32) */
	struct dtl_loc checkpoint_dtype_loc;
	/* importers only: config.json's text_config.enable_moe_block (Gemma 4's MoE text model,
	 * which NeMo Automodel replaces by its own), and the dtypes its text_config, vision_config
	 * and audio_config name themselves ("dtype", else "torch_dtype"; NONE: none), in which
	 * AutoModel.from_config builds each tower when only the top-level dtype is changed. The
	 * load stage reads them (rules/versions.yaml automodel-subconfig-dtype-not-propagated). */
	bool text_moe_block;
	enum dtl_dtype subconfig_dtype[3]; /* enum dtl_subconfig */
	enum dtl_load_mode load_mode;
	enum dtl_dtype load_dtype;
	struct dtl_loc load_dtype_loc;
	int64_t hidden_size; /* 0: unset */
	struct dtl_loc hidden_size_loc;
	/* config.json's max_position_embeddings, the length of the RoPE cache transformers
	 * <= 4.37 builds at __init__ (0: unset) */
	int64_t max_position_embeddings;
	struct dtl_patterns keep_in_fp32;
	struct dtl_patterns keep_in_fp32_strict;
	struct dtl_patterns no_split_modules;
	struct dtl_glob_map *modules;
	size_t module_count;
	struct dtl_patterns routers;
	struct dtl_tied_group *tied;
	size_t tied_count;
	struct dtl_glob_map *kernels;
	size_t kernel_count;
	struct dtl_loc loc;
	/* a sequence-classification head (score) replaced lm_head: the model TRL's reward trainer
	 * loads (dtl_manifest_reward_head) */
	bool seq_cls_head;
};

enum dtl_quant_method {
	DTL_QUANT_NONE = 0,
	DTL_QUANT_BNB_4BIT,
	DTL_QUANT_BNB_8BIT,
};

struct dtl_quantization {
	enum dtl_quant_method method;
	enum dtl_dtype compute_dtype; /* NONE: unset (float32) */
	enum dtl_dtype quant_storage; /* NONE: unset (uint8) */
	const char *quant_type;       /* "nf4" | "fp4"; NULL: unset */
	struct dtl_patterns skip_modules;
	struct dtl_loc loc, method_loc, compute_dtype_loc, quant_storage_loc;
	/* the checkpoint is already quantized (config.json's quantization_config): its weights
	 * keep the dtype they are stored in, and a recipe's own request does not replace it */
	bool prequantized;
	/* config.json's quantization_config.quant_method, any method ("bitsandbytes", "gptq",
	 * "fp8", ...); NULL: the checkpoint is not quantized */
	const char *checkpoint_method;
	struct dtl_loc checkpoint_method_loc;
	/* a recipe (trainer arguments) asked for this method on a pre-quantized checkpoint;
	 * DTL_QUANT_NONE: it did not. transformers keeps the checkpoint's config. */
	enum dtl_quant_method requested;
	struct dtl_loc requested_loc;
	/* TRL's get_quantization_config up to 0.25 packs 4-bit weights in the model dtype
	 * (ModelConfig.dtype / torch_dtype), from 0.26 in bnb_4bit_quant_storage: the model
	 * dtype a TRL recipe named, used when the plan's TRL version says so (NONE: none) */
	enum dtl_dtype storage_if_trl_follows_dtype;
	struct dtl_loc storage_if_trl_follows_dtype_loc;
};

/* A key a framework importer read: its value as written ("[a, b]" for a list, "{}" for an
 * empty mapping; a section read for its place is not listed, its keys are) and where (an
 * override's place, or the file's); value NULL: absent, the framework's default taken. */
struct dtl_key_read {
	const char *key;
	const char *value;
	struct dtl_loc loc;
};

/* The parts of a composite model LLaMA-Factory's full tuning freezes and its LoRA leaves
 * without adapters (struct dtl_recipe). */
enum {
	DTL_LF_VISION = 1,    /* freeze_vision_tower (default true) */
	DTL_LF_PROJECTOR = 2, /* freeze_multi_modal_projector (default true) */
	DTL_LF_LANGUAGE = 4,  /* freeze_language_model (default false) */
};

/* NeMo Automodel's freeze_config flags (struct dtl_recipe.am_freeze) */
enum {
	DTL_AM_FREEZE_VISION = 1 << 0,
	DTL_AM_FREEZE_AUDIO = 1 << 1,
	DTL_AM_FREEZE_LANGUAGE = 1 << 2,
};

/* What a training recipe (--trainer-args: LLaMA-Factory, TRL / alignment-handbook, axolotl)
 * does to dtypes beyond the plan and the quantization config it sets. */
struct dtl_recipe {
	const char *kind; /* "LLaMA-Factory", "TRL ModelConfig", "axolotl"; NULL: no recipe */
	/* LLaMA-Factory casts every trainable parameter to float32 after get_peft_model
	 * (adapter.py cast_trainable_params_to_fp32): F32, or NONE */
	enum dtl_dtype cast_trainable;
	struct dtl_loc cast_trainable_loc;
	bool upcast_layernorm; /* LLaMA-Factory upcast_layernorm: 1-D norm weights to float32 */
	struct dtl_loc upcast_layernorm_loc;
	/* axolotl's full fine-tuning keeps the modules named like a norm and the embedding
	 * modules in float32 (ModelLoader._configure_embedding_dtypes; not under FSDP) */
	bool axolotl_upcast;
	struct dtl_loc axolotl_upcast_loc;
	/* axolotl's LoRA / QLoRA on a quantized model: after prepare_model_for_kbit_training,
	 * the norm and embedding modules go back to torch_dtype (the load dtype) */
	bool axolotl_kbit_restore;
	struct dtl_loc axolotl_kbit_restore_loc;
	/* LLaMA-Factory finetuning_type full (or freeze): get_forbidden_modules freezes these
	 * parts of a composite (vision-language) model, kept in the load dtype; LoRA: these
	 * parts get no adapter (patch_target_modules). DTL_LF_*; 0: none, or neither kind */
	unsigned lf_full_frozen;
	bool lf_full;
	struct dtl_loc lf_full_loc;
	/* finetuning_type lora: the targets are LLaMA-Factory's (find_all_linear_modules for
	 * lora_target all, then patch_target_modules), not PEFT's alone */
	bool lf_lora;
	/* finetuning_type freeze: only the last freeze_trainable_layers layers (the first ones
	 * when negative), their freeze_trainable_modules ("all": whole layers) and the
	 * freeze_extra_modules train; the rest stays frozen in the load dtype. The forbidden
	 * parts above (lf_full_frozen) apply too. */
	bool lf_freeze;
	int64_t lf_freeze_layers;
	struct dtl_patterns lf_freeze_modules, lf_freeze_extra;
	bool cast_lm_head_fp32; /* TRL GRPOConfig.cast_lm_head_to_fp32 */
	struct dtl_loc cast_lm_head_fp32_loc;
	bool trl_dtype_unset; /* a TRL ModelConfig recipe that names no dtype */
	/* a TrainingArguments recipe (no TRL-only key) that names no dtype: TRL's scripts
	 * still load it in float32 when the plan's trainer is one of TRL's (the sim decides;
	 * the location is trl_dtype_unset_loc) */
	bool args_dtype_unset;
	struct dtl_loc trl_dtype_unset_loc;
	/* OpenRLHF's Actor with --ds.load_in_4bit and LoRA, after get_peft_model: LoRA layers to
	 * bfloat16, modules named like a norm to float32, lm_head / embed_tokens to bfloat16 */
	bool openrlhf_kbit_casts;
	struct dtl_loc openrlhf_kbit_casts_loc;
	/* NeMo Automodel's freeze_config (apply_parameter_freezing): the parts it freezes by
	 * module name, DTL_AM_FREEZE_*; 0: no freeze_config, nothing frozen */
	unsigned am_freeze;
	struct dtl_loc am_freeze_loc;
	/* the arguments a framework importer read, each with its value and place or "(default)",
	 * for --show-plan (OpenRLHF's); NULL: none listed */
	const char *arguments_read;
	/* --trainer-args: the recipe's keys read and those present but not read (fsdp_config's
	 * as "fsdp_config.KEY"), in the file's order, for --show-plan; not a recipe: none */
	const char **keys_read, **keys_not_read;
	size_t keys_read_count, keys_not_read_count;
	/* --framework-config and launch lines: every key the framework importer read (in the
	 * order first read), and the keys the file or the overrides set that it did not read
	 * (dotted, the file's in its order, then the overrides'); framework_keys: a framework
	 * config was imported, so that --show-plan shows the rows even when empty */
	bool framework_keys;
	const struct dtl_key_read *fw_keys_read;
	size_t fw_keys_read_count;
	const char **fw_keys_not_read;
	size_t fw_keys_not_read_count;
};

/* A warning about an input that does not stop the lint (a near-miss key): printed by the
 * command line on standard error as file:line:col: warning: message. */
struct dtl_input_warning {
	struct dtl_loc loc;
	const char *message;
};

/* How the adapter is put on the model: the call decides which PEFT code casts it. */
enum dtl_adapter_added {
	DTL_ADDED_GET_PEFT_MODEL, /* get_peft_model / PeftModel(...) (the default) */
	DTL_ADDED_ADD_ADAPTER,    /* peft_model.add_adapter(name, config, ...) */
	DTL_ADDED_LOAD_ADAPTER,   /* peft_model.load_adapter(path, name, ...) */
};

struct dtl_adapter {
	bool present;
	const char *type;                   /* "lora" */
	const char *name;                   /* adapter name, default "default" */
	struct dtl_patterns target_modules; /* list of suffixes */
	const char *target_modules_string;  /* "all-linear" or a regex; NULL when a list */
	/* TRL's ModelConfig got a lora_target_modules list of one item, which it replaces by
	 * that item, a string PEFT reads as a regular expression (rules/versions.yaml
	 * trl-one-target-is-regex; the peft stage applies it at the plan's TRL version) */
	bool target_one_item_regex;
	int64_t r;
	enum dtl_tristate autocast_adapter_dtype;
	struct dtl_loc autocast_adapter_dtype_loc;
	/* NULL: PEFT makes the matrices. Otherwise another framework does, in its base layer's
	 * dtype and with no autocast (torchtune's LoRALinear under set_default_dtype(dtype)):
	 * how, for the trace, and the source that says so */
	const char *created_as, *created_as_fact;
	struct dtl_patterns modules_to_save;
	enum dtl_tristate prepare_kbit_training;
	enum dtl_tristate use_dora;
	struct dtl_loc use_dora_loc;
	/* LoraConfig.lora_dropout, which ParamWrapper refuses when not 0 (DT412); < 0: not given
	 * (PEFT's default is 0.0, TRL's ModelConfig's 0.05) */
	double lora_dropout;
	struct dtl_loc lora_dropout_loc;
	/* LoRA on nn.Parameters (PEFT >= 0.17, ParamWrapper: MoE experts); the names as given */
	struct dtl_patterns target_parameters;
	/* read from an adapter_config.json (--peft), which PEFT loads with from_pretrained: a
	 * key the release lacks is dropped with a warning from 0.14.0 (rules/versions.yaml
	 * peft-config-drops-unknown-keys), where LoraConfig(key=...) raises TypeError */
	bool from_config_file;
	/* PEFT's TaskType ("SEQ_CLS", "CAUSAL_LM", ...); NULL: none given */
	const char *task_type;
	struct dtl_loc task_type_loc;
	enum dtl_adapter_added added_with;
	struct dtl_loc added_with_loc;
	struct dtl_loc loc;
};

struct dtl_suppression {
	const char *rule;
	struct dtl_pattern tensors; /* text NULL: all tensors */
	const char *reason;
	struct dtl_loc loc;
};

struct dtl_hf_conversion;

struct dtl_manifest {
	const char *file;
	struct dtl_model_info model;
	struct dtl_tensor_decl *tensors;
	size_t tensor_count;
	/* name -> index in tensors, built by the parser while it checks for duplicate names, so
	 * that the simulation need not hash every name again. Empty (count 0) when the manifest
	 * was made otherwise (an import); whoever replaces tensors keeps their names and order. */
	struct dtl_strmap tensor_index;
	struct dtl_patterns frozen;
	struct dtl_quantization quantization;
	struct dtl_adapter adapter;
	struct dtl_recipe recipe;
	struct dtl_vec warnings; /* struct dtl_input_warning */
	bool has_training;
	struct dtl_plan plan;
	struct dtl_suppression *suppress;
	size_t suppress_count;
	/* an HF folder's tensors carry the checkpoint's names: how transformers renames and
	 * merges them at load (hf-conversion.h), applied at the plan's versions; NULL: none */
	const struct dtl_hf_conversion *conversion;
};

/* Validates root (the parsed file) against the schema into *ret_manifest. Unknown keys (except
 * x-*), wrong types, unknown dtypes, duplicate tensor names, bad shapes and bad globs are
 * errors at their line and column. */
int dtl_manifest_parse(const struct dtl_node *root, const char *file, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                       struct dtl_error *error);

/* A `versions:`-shaped mapping (framework: version) into plan->versions, with its positions. */
int dtl_plan_parse_versions(const struct dtl_node *map, const char *file, struct dtl_arena *arena,
                            struct dtl_plan *plan, struct dtl_error *error);
/* Validates a plan: the mapping under `training:` or the top of a --plan file. */
int dtl_plan_parse(const struct dtl_node *map, const char *file, struct dtl_arena *arena,
                   struct dtl_plan *plan, struct dtl_error *error);

/* Reads and parses a manifest file (JSON or YAML) in one call. */
int dtl_manifest_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                      struct dtl_manifest *ret_manifest, struct dtl_error *error);
/* Reads a --plan file (JSON or YAML: the `training:` mapping at top level). */
int dtl_plan_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                  struct dtl_plan *plan, struct dtl_error *error);

#endif
