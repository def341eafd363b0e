/* SPDX-License-Identifier: MIT */
/*
 * Importers: the files users already have, read into the plan and the manifest. Plan fields
 * an importer sets keep the location of the key that set them, so findings point at the
 * `"bf16": {"enabled": true}` line of a DeepSpeed JSON or the `fsdp_transformer_layer_cls_to_wrap:`
 * line of an accelerate YAML.
 */
#ifndef DTYPELINT_IMPORT_H
#define DTYPELINT_IMPORT_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/import.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/model/manifest.h"

/* A DeepSpeed JSON: precision (bf16/bfloat16/fp16, "auto" left unset), zero_optimization (stage 3
 * is zero3; 0-2 keep parameters whole: ddp), stage-3 persistence keys, offload_param,
 * data_types. Sets the fields it finds in *plan. */
int dtl_import_deepspeed(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                         struct dtl_plan *plan, struct dtl_error *error);
/* An accelerate config YAML (distributed_type, mixed_precision, fsdp_config, deepspeed_config
 * with deepspeed_config_file relative to the YAML), with the conflicts accelerate rejects. */
int dtl_import_accelerate(const char *path, struct dtl_arena *arena,
                          const struct dtl_limits *limits, struct dtl_plan *plan,
                          struct dtl_error *error);
/* A PEFT adapter_config.json (LORA): into *adapter; *ret_base_model may be NULL. */
int dtl_import_peft(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                    struct dtl_adapter *adapter, const char **ret_base_model,
                    struct dtl_error *error);
/* Trainer arguments YAML as LLaMA-Factory and TRL write them (bf16, fp16, deepspeed, fsdp,
 * quantization_bit, lora_target, lora_rank, finetuning_type). */
int dtl_import_trainer_args(const char *path, struct dtl_arena *arena,
                            const struct dtl_limits *limits, struct dtl_manifest *manifest,
                            struct dtl_error *error);
/* A training script's own --fsdp (its value, NULL when bare: True) and --fsdp_config (a resolved
 * path, or NULL), each at its word of the launch script, read as the HF Trainer reads its
 * fsdp / fsdp_config into manifest's plan (after the script's --bf16 / --fp16). */
int dtl_import_trainer_fsdp(const char *fsdp, struct dtl_loc fsdp_loc, const char *config,
                            struct dtl_loc config_loc, struct dtl_arena *arena,
                            const struct dtl_limits *limits, struct dtl_manifest *manifest,
                            struct dtl_error *error);
/* A training framework's own config (src/model/import-framework.c lists them: torchtune's
 * recipe YAML, ...), told by its own keys, with the framework's command-line overrides
 * ("key=value", "~key"; n of them, applied in order as the framework applies them) read into
 * the manifest and its plan. A file no framework claims is an error that names the
 * frameworks dtypelint reads. */
int dtl_import_framework_config(const char *path, const char *const *overrides, size_t n,
                                struct dtl_arena *arena, const struct dtl_limits *limits,
                                struct dtl_manifest *manifest, struct dtl_error *error);
/* An override and where it was written: loc.file NULL for --framework-override (the option's
 * own text, column 1), else the word in a launch script (launch.h). */
struct dtl_framework_override {
	const char *text;
	struct dtl_loc loc;
	/* where the value is written when the text is implied by another word (a launch's
	 * --config-name); line 0: inside text, after "key=" */
	struct dtl_loc value_loc;
	/* a launch argument the framework's importer does not read: text is its key alone,
	 * listed by --show-plan as not read */
	bool not_read;
};
/* The same, from a launch command: path may be NULL, when the command names no config file
 * of its own: then the framework (an importer's id, "verl") reads its packaged defaults,
 * located at defaults_at (the command's word). */
int dtl_import_framework(const char *path, const char *framework, struct dtl_loc defaults_at,
                         const struct dtl_framework_override *overrides, size_t n,
                         struct dtl_arena *arena, const struct dtl_limits *limits,
                         struct dtl_manifest *manifest, struct dtl_error *error);
/* Whether the importer of framework ("verl") reads key (a dotted override key) */
bool dtl_framework_reads(const char *framework, const char *key);
/* The framework whose config root looks like ("torchtune recipe", ...), or NULL: for naming a
 * file that is given to the wrong option. */
const char *dtl_framework_config_kind(const struct dtl_node *root);
/* A Hugging Face model folder: config.json plus the safetensors headers (only the headers are
 * read), or model.safetensors.index.json alone (shapes from the architecture profile). */
int dtl_import_hf_folder(const char *dir, struct dtl_arena *arena, const struct dtl_limits *limits,
                         struct dtl_manifest *ret_manifest, struct dtl_error *error);
/* Writes the composed manifest (JSON for .json, YAML otherwise); re-linting it gives the same
 * findings. */
int dtl_export_manifest(const char *path, const struct dtl_manifest *manifest,
                        struct dtl_error *error);

#endif
