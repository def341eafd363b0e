/* SPDX-License-Identifier: MIT */
/*
 * The simulation (docs/design.md §4): a tensor table (struct of arrays) and a module tree built
 * from the manifest in torch's order, stages that change dtypes and flags and log every change in
 * the trace, and the groups the sharding strategy forms.
 */
#ifndef DTYPELINT_SIM_H
#define DTYPELINT_SIM_H
#ifndef DTL_SEES_SIM
#error "dtypelint/sim/sim.h is in the sim layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/model/behavior.h"
#include "dtypelint/model/keep-fp32.h"
#include "dtypelint/model/manifest.h"
#include "dtypelint/model/profile.h"
#include "dtypelint/core/vocab.h"

struct dtl_keep_set;
struct dtl_table {
	size_t count;
	size_t capacity; /* rows allocated in every column */
	const char **name;
	uint32_t *name_len;
	uint32_t *module;         /* owning module */
	uint32_t *next_in_module; /* next own tensor of the same module */
	uint8_t *kind;            /* enum dtl_tensor_kind */
	uint8_t *dtype;           /* current stored dtype */
	uint8_t *compute_dtype;   /* dtype used in forward (compute stage) */
	int64_t *numel;           /* -1 unknown */
	uint32_t *flags;
	uint32_t *group;      /* FSDP unit / group index, or DTL_NONE_INDEX */
	uint32_t *home_group; /* FSDP: the unit of the tensor's own module (a tied name's may
	                         differ from the group its shared parameter went to) */
	uint32_t *last_event; /* newest trace event, or DTL_NONE_INDEX */
	uint32_t *decl;       /* index into manifest->tensors, or DTL_NONE_INDEX */
	uint32_t *alias_of;   /* for DTL_TF_ALIAS: the tensor it shares storage with */
	uint32_t *order;      /* order[k]: the k-th tensor in torch's named_parameters order */
	uint32_t *rank;       /* rank[t]: position of t in order */
};

struct dtl_module {
	const char *path; /* "" for the root */
	uint32_t path_len;
	uint32_t parent; /* DTL_NONE_INDEX for the root */
	uint32_t first_child, last_child, next_sibling;
	uint32_t first_tensor, last_tensor;
	bool wrapped;                   /* a unit / fully_shard target */
	const char *class_name;         /* NULL: unknown */
	const struct dtl_pattern *wrap; /* the pattern that made it one (NULL for the root) */
};

struct dtl_event {
	uint32_t tensor;
	uint32_t prev; /* previous event of the same tensor */
	enum dtl_stage stage;
	uint8_t from, to; /* dtypes */
	const char *reason;
	const char *fact;
	struct dtl_loc loc;
};

struct dtl_group {
	enum dtl_group_kind kind;
	const char *name;  /* module path, "<root>" for the root */
	uint32_t module;   /* DTL_NONE_INDEX for ZeRO-3 sets */
	uint32_t index;    /* construction order (FSDP1: post-order, root last) */
	uint32_t *members; /* tensor indices in torch order */
	size_t count;
	struct dtl_loc loc; /* what formed it (a wrap pattern, a plan key) */
};

/* The plan with every default resolved: what the simulation actually used. */
struct dtl_resolved_plan {
	struct dtl_plan plan;
	bool version_assumed[DTL_FW_COUNT];
	bool world_size_assumed;
	struct dtl_patterns wrap; /* fsdp.wrap, or model.no_split_modules */
	bool wrap_from_model;
	/* NeMo Automodel's FSDP2: every child of a ModuleList is a unit, not the wrap list's
	 * classes (rules/versions.yaml recipes: automodel-fsdp2-module-list-units); wrap then
	 * holds that rule's one description, at the strategy key */
	bool wrap_module_lists;
	int64_t persistence_threshold;
	int64_t model_persistence_threshold;
	bool zero_init;
	enum dtl_dtype mode_dtype; /* precision as a dtype; NONE for fp32/unset */
	/* the dtype zero.Init builds in: the mode dtype, float32 when neither 16-bit mode is on
	 * (precision fp32); NONE when the plan does not say */
	enum dtl_dtype zero_init_dtype;
	/* the HF Trainer's _fsdp_qlora_plugin_updates is in force: PEFT's fsdp_auto_wrap_policy
	 * (set by the shard stage) */
	bool peft_wrap_policy;
};

/* A router module and whether its forward upcasts (from the manifest, a profile or the
 * heuristic "a gate or router next to experts"). */
struct dtl_router_rule {
	struct dtl_pattern path;
	bool upcasts;
	enum { DTL_FROM_MANIFEST, DTL_FROM_PROFILE, DTL_FROM_HEURISTIC } origin;
};

/* What the simulation knows of the model: the manifest's model keys, else the profile's. */
struct dtl_model_view {
	const struct dtl_profile *profile; /* NULL: unknown architecture or none given */
	struct dtl_patterns keep_in_fp32, keep_in_fp32_strict, no_split_modules;
	/* the two keep lists compiled for the plan's matcher (dtl_sim_run, after the plan) */
	struct dtl_keep_set *keep_set, *strict_set; /* src/model/keep-set.h */
	bool keep_from_profile, strict_from_profile, no_split_from_profile;
	struct dtl_router_rule *routers;
	size_t router_count;
	uint32_t *router_of; /* per module: the first rule covering it, or DTL_NONE_INDEX */
};

struct dtl_sim {
	struct dtl_arena *arena;
	const struct dtl_manifest *manifest;
	const struct dtl_behavior_table *behaviors;
	struct dtl_model_view model;
	struct dtl_resolved_plan rp;
	struct dtl_table t;
	struct dtl_module *modules;
	size_t module_count;
	size_t module_capacity;
	/* a module's children by name: (parent, last segment) -> index (module-index.c); keyed
	 * on one segment, not the whole path, so a name of many segments costs its length,
	 * never its length times its depth (issue 35, item 7) */
	struct dtl_module_index {
		uint64_t *slots; /* hash's high 32 bits << 32 | index + 1; 0: empty */
		size_t capacity, count;
		uint64_t seed;
	} module_index;
	/* tensor name -> index (dtl_sim_find): the declared tensors' names are the manifest's
	 * tensor_index (or own_declared, for a manifest without one), shared and never written;
	 * tensor_names has the tensors the simulation adds (tied names the checkpoint leaves
	 * out, injected adapters) */
	const struct dtl_strmap *declared_names;
	struct dtl_strmap own_declared;
	struct dtl_strmap tensor_names;
	/* struct dtl_event: every step but a declared tensor's first (the "manifest" step, read
	 * from its entry when asked: dtl_sim_history) */
	struct dtl_vec events;
	/* the reasons of the manifest steps, per how the dtype was given and dtype (stage-load) */
	const char *declared_reason[3][DTL_DTYPE_COUNT];
	struct dtl_vec groups; /* struct dtl_group */
	/* the manifest's frozen globs that matched one of its first frozen_scanned tensors (the
	 * declared ones; dtl_sim_build_table): DT601 needs to look only at tensors added since */
	bool *frozen_hit;
	size_t frozen_scanned;
	/* the peft stage: how many modules the adapter's target_modules matched, and the
	 * regular expression they were read as (NULL: a list, all-linear or no adapter) */
	size_t peft_targeted;
	const char *peft_target_regex;
	/* what from_pretrained was asked to build the model under, as the load stage resolved
	 * it (None read as "auto" by transformers 5, TRL's float32 default): the mode, the
	 * dtype (NONE when nothing is loaded) and the key that asked for it. DT204 reads it:
	 * transformers builds the model under torch.set_default_dtype(target). */
	struct dtl_load_request {
		enum dtl_load_mode mode;
		enum dtl_dtype target;
		struct dtl_loc loc;
	} load;
};

/* Builds the table, resolves the plan (plan: the merged plan to use) and runs every stage.
 * Everything lives in arena. */
int dtl_sim_run(struct dtl_sim *sim, const struct dtl_manifest *manifest,
                const struct dtl_plan *plan, const struct dtl_behavior_table *behaviors,
                struct dtl_arena *arena, struct dtl_error *error);

/* Appends a trace event and applies new_dtype to the tensor. */
int dtl_sim_set_dtype(struct dtl_sim *sim, uint32_t tensor, enum dtl_stage stage,
                      enum dtl_dtype new_dtype, const char *reason, const char *fact,
                      struct dtl_loc loc);
/* Appends an event that changes the dtype the tensor computes in, not the stored one. */
int dtl_sim_set_compute_dtype(struct dtl_sim *sim, uint32_t tensor, enum dtl_dtype compute,
                              const char *reason, const char *fact, struct dtl_loc loc);
/* Appends an event that changes no dtype (e.g. "persistent in ZeRO-3"). */
int dtl_sim_note(struct dtl_sim *sim, uint32_t tensor, enum dtl_stage stage, const char *reason,
                 const char *fact, struct dtl_loc loc);
const char *dtl_stage_name(enum dtl_stage stage);
/* Is the behaviour in force for the resolved plan's versions? */
bool dtl_sim_behavior(const struct dtl_sim *sim, enum dtl_behavior behavior);
/* The events of one tensor, oldest first, copied into out (at most max: the oldest are left
 * out); returns the count. */
size_t dtl_sim_history(const struct dtl_sim *sim, uint32_t tensor, struct dtl_event *out,
                       size_t max);
/* The location of a tensor's entry (its tied partner's for injected aliases). */
struct dtl_loc dtl_sim_tensor_loc(const struct dtl_sim *sim, uint32_t tensor);
/* The keep-in-fp32 matcher of the plan's transformers version (src/model/keep-fp32.c). */
enum dtl_keep_matcher dtl_sim_keep_matcher(const struct dtl_sim *sim);
/* Whether the plan's transformers applies the plain keep-in-fp32 list under bfloat16 too
 * (4.50.x and the v5 regression window), not under float16 only. */
bool dtl_sim_plain_keep_under_bf16(const struct dtl_sim *sim);
/* The first entry of a compiled keep-in-fp32 list (sim->model.keep_set or strict_set)
 * matching the tensor's name, or NULL. */
const struct dtl_pattern *dtl_sim_keep_entry(const struct dtl_sim *sim,
                                             const struct dtl_keep_set *set, uint32_t tensor);
/* A buffer that is float32 on purpose (the profile's list, else inv_freq and
 * e_score_correction_bias); NULL otherwise. */
const struct dtl_buffer_info *dtl_sim_buffer_info(const struct dtl_sim *sim, uint32_t tensor);
/* The (first) router rule covering a module, or NULL: found once per module when the routers
 * were (a scan of the rules per router module was routers x routers with the heuristic). */
const struct dtl_router_rule *dtl_sim_router_rule(const struct dtl_sim *sim, uint32_t module);
/* Appends a tensor a stage creates (PEFT adapters, modules_to_save copies), with the modules
 * its name implies; name must live in the sim's arena. -EEXIST when the name is already a
 * module or a tensor.
 * Call dtl_sim_rebuild_order() after a stage's additions. */
int dtl_sim_add_tensor(struct dtl_sim *sim, const char *name, uint32_t len,
                       enum dtl_tensor_kind kind, enum dtl_dtype dtype, int64_t numel,
                       uint32_t flags, uint32_t *ret_index);
int dtl_sim_rebuild_order(struct dtl_sim *sim);
/* Index of a tensor by name, or DTL_NONE_INDEX. */
uint32_t dtl_sim_find(const struct dtl_sim *sim, const char *name, size_t len);

#endif
