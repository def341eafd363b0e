/* SPDX-License-Identifier: MIT */
/*
 * Architecture profiles (the YAML files in rules/architectures/, compiled in): what transformers'
 * model classes declare — keep-in-fp32 lists, no-split classes, module classes, routers, fp32
 * buffers, tied weights, Linear modules and shapes. A manifest's own model keys override them.
 * Schema: rules/architectures/README.md.
 */
#ifndef DTYPELINT_PROFILE_H
#define DTYPELINT_PROFILE_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/profile.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>

#include "dtypelint/model/manifest.h"

struct dtl_router_info {
	struct dtl_pattern path; /* glob of the module that owns <path>.weight */
	const char *class_name;
	bool upcasts; /* logits computed from fp32 operands */
	bool verified;
};

struct dtl_buffer_info {
	struct dtl_pattern name; /* glob of tensor names */
	bool persistent;
	bool self_casting; /* its consumer casts it: it never promotes activations */
	bool verified;
	bool unread; /* forward never reads it (original_inv_freq): not pinned, not reported */
};

struct dtl_shape_rule {
	struct dtl_pattern glob;
	const char **dims; /* expressions over config.json keys */
	size_t rank;
};

/* A buffer the modelling code creates at construction and no checkpoint stores (rotary
 * inv_freq): an HF folder gets it, with its shape from expressions over config.json keys. */
/* In a created buffer's name, the layer index: the buffer is one per layer (a rotary module per
 * attention), model.layers.{layer}.self_attn.rotary_emb.inv_freq */
#define DTL_LAYER_PLACEHOLDER "{layer}"

struct dtl_created_buffer {
	struct dtl_pattern name; /* the exact tensor name, or with DTL_LAYER_PLACEHOLDER once */
	bool per_layer;          /* the name holds the placeholder, at byte layer_at */
	uint32_t layer_at;
	const char **dims; /* expressions over config.json keys */
	size_t rank;
	bool verified;
	/* 1 + the behaviour (enum dtl_behavior) in whose versions the code creates it; 0: in
	 * every version (the key `behaviour:`) */
	uint16_t gate;
	/* created under torch's default dtype, which from_pretrained sets to the load dtype
	 * (`dtype: load`); else `dtype` */
	bool load_dtype;
	/* float32 (the default), int64 (`dtype: int64`: an arange of positions) or bool
	 * (`dtype: bool`: a causal mask) */
	enum dtl_dtype dtype;
};

/* A module the model builds from one of its config's sub-configs
 * (AutoModel.from_config(config.vision_config)): its tensors are the ones under "<module>." */
struct dtl_subconfig_tower {
	const char *module; /* "model.vision_tower" */
	size_t module_len;
	enum dtl_subconfig config;
};

struct dtl_profile {
	const char *file; /* "rules/architectures/llama.yaml" */
	const char *architecture;
	const char **aliases;
	size_t alias_count;
	const char *model_type;
	struct dtl_patterns keep_in_fp32;
	struct dtl_patterns keep_in_fp32_strict;
	struct dtl_patterns no_split_modules;
	/* parallel to no_split_modules.items: 1 + the behaviour in whose versions the model's
	 * _no_split_modules names the class (an entry `{name: CLASS, behaviour: KEY}`); 0: in
	 * every version */
	uint16_t *no_split_gates;
	/* class names a release's _no_split_modules holds that the model never builds (DT105) */
	struct dtl_patterns no_split_absent;
	/* parallel to no_split_absent.items: 1 + the behaviour in whose versions the model's
	 * list names the class (an entry `{name: CLASS, behaviour: KEY}`); 0: in every version */
	uint16_t *no_split_absent_gates;
	struct dtl_glob_map *modules;
	size_t module_count;
	struct dtl_router_info *routers;
	size_t router_count;
	struct dtl_buffer_info *fp32_buffers;
	size_t fp32_buffer_count;
	struct dtl_tied_group *tied;
	size_t tied_count;
	bool tie_word_embeddings_default;
	struct dtl_patterns linear_modules;
	/* parallel to linear_modules.items: 1 + the behaviour in whose versions the module is an
	 * nn.Linear (an entry `{path: GLOB, behaviour: KEY}`); 0: in every version */
	uint16_t *linear_gates;
	struct dtl_shape_rule *shapes;
	size_t shape_count;
	struct dtl_created_buffer *created_buffers;
	size_t created_buffer_count;
	/* the key `subconfig_towers:` (module: text_config, vision_config or audio_config) */
	struct dtl_subconfig_tower *towers;
	size_t tower_count;
};

struct dtl_profiles {
	struct dtl_profile *items;
	size_t count;
};

/* Parses the embedded profiles that may be architecture's (every one when it is NULL): those
 * whose text mentions it. A schema error names the profile file, line and column. */
int dtl_profiles_load(struct dtl_profiles *profiles, const char *architecture,
                      struct dtl_arena *arena, struct dtl_error *error);
/* By architecture class name or alias; NULL when none. */
const struct dtl_profile *dtl_profiles_find(const struct dtl_profiles *profiles,
                                            const char *architecture);

#endif
