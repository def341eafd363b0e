/* SPDX-License-Identifier: MIT */
/*
 * The simulation's internals, shared by the files of src/sim/ and by nothing outside it: the
 * table builder, the module index and glob matching over modules, one entry point per stage
 * (run in order by sim.c: load, zero-init, quantize, kbit, peft, trainer, engine, shard,
 * compute), and helpers several stages ask (linear layers, output layers, trainer kinds).
 */
#ifndef DTL_SIM_PRIVATE_H
#define DTL_SIM_PRIVATE_H

#include "dtypelint/core/glob.h"
#include "dtypelint/model/keep-fp32.h"
#include "dtypelint/sim/sim.h"
#include "glob-cursor.h"

/*
 * A glob set matched against the modules in index order, which is parents first: a module
 * below one whose walk came to nothing is not matched at all (dtl_globset_cursor_exhausted),
 * so a pass over a 100k-module tree skips the subtrees no glob reaches. Lives in sim's arena.
 */
#define DTL_MODULE_MATCH_DEPTH 32
struct dtl_module_match {
	struct dtl_globset_cursor *cursor;
	uint8_t *dead; /* [module]: no glob matches it or a module below it */
	/* the last module's ancestors and itself, by depth (chain[j]: its first j + 1 segments,
	 * which end at end[j]): a module whose parent is among them shares that many segments
	 * with it, and only its own is walked */
	uint32_t chain[DTL_MODULE_MATCH_DEPTH], end[DTL_MODULE_MATCH_DEPTH];
	size_t chain_len;
};
/* Ready to match set against sim's modules, the cursor and marks in sim's arena: 0 or
 * -ENOMEM. */
int dtl_module_match_init(struct dtl_module_match *mm, const struct dtl_sim *sim,
                          const struct dtl_globset *set);
/* The first glob matching module mod, or -1; modules must come in index order (one left out
 * only keeps its subtree from being skipped). */
int64_t dtl_module_match_first(struct dtl_module_match *mm, const struct dtl_sim *sim,
                               uint32_t mod);

/* The tensor table and module tree from the manifest, in torch's order (table.c), in sim's
 * arena: 0, or a negative errno (with error filled where the manifest is at fault). */
int dtl_sim_build_table(struct dtl_sim *sim, struct dtl_error *error);
/* A module at path[0..len) below parent (the root's parent is DTL_NONE_INDEX); no index. */
int64_t dtl_sim_new_module(struct dtl_sim *sim, const char *path, uint32_t len, uint32_t parent);

/* The module index (module-index.c): children by (parent, segment), in sim's arena. */
void dtl_module_index_init(struct dtl_sim *sim);
/* Room for n modules without growing; -ENOMEM. */
int dtl_module_index_reserve(struct dtl_sim *sim, size_t n);
/* The child of parent whose last segment is seg[0..len), or -1. */
int64_t dtl_module_child(const struct dtl_sim *sim, uint32_t parent, const char *seg, size_t len);
/* The child of parent at path[0..end), whose segment starts at start: found, or created
 * with dtl_sim_new_module; its index, or -ENOMEM. */
int64_t dtl_module_child_add(struct dtl_sim *sim, uint32_t parent, const char *path, uint32_t start,
                             uint32_t end);
/* The module at a whole dotted path ("" is the root), or -1: one lookup per segment. */
int64_t dtl_module_at(const struct dtl_sim *sim, const char *path, size_t len);
/* Passes dtl_sim_run() makes before the stages (model.c, classes.c): 0, or a negative errno
 * with error filled. */
int dtl_sim_assign_classes(struct dtl_sim *sim, struct dtl_error *error);
int dtl_sim_resolve_model(struct dtl_sim *sim, struct dtl_error *error);
int dtl_sim_find_routers(struct dtl_sim *sim, struct dtl_error *error);

/* The stages (dtl_stage_*, one file each), which dtl_sim_run() (sim.c) runs in the order of its
 * stages[] table: each takes the table as the stages before it left it, records every change in
 * the trace, and returns 0, or a negative errno with error filled. */
int dtl_stage_load(struct dtl_sim *sim, struct dtl_error *error);
/* The dtype a declared tensor has before any stage: its own, else model.checkpoint_dtype, else
 * torch's default, float32 (docs/design.md §3). */
static inline enum dtl_dtype dtl_sim_declared_dtype(const struct dtl_manifest *m,
                                                    const struct dtl_tensor_decl *t)
{
	return t->dtype != DTL_DTYPE_NONE                    ? t->dtype
	       : m->model.checkpoint_dtype != DTL_DTYPE_NONE ? m->model.checkpoint_dtype
	                                                     : DTL_DTYPE_F32;
}
/* A buffer the model code creates under torch's default dtype (its profile says `dtype:
 * load`, e.g. Gemma 2's embed_scale = torch.tensor(float)): from_pretrained sets the default
 * dtype to the load dtype while it builds the model, and zero.Init's torch.tensor wrapper casts
 * it to zero.Init's dtype. */
static inline bool dtl_sim_created_in_load_dtype(const struct dtl_sim *sim, uint32_t i)
{
	uint32_t decl = sim->t.decl[i];
	return decl != DTL_NONE_INDEX && sim->manifest->tensors[decl].load_dtype;
}
/* A declared tensor's first step (stage "manifest"), which is not stored: how its entry gave
 * its dtype. false for a tensor with no entry of its own (its steps are all stored). */
bool dtl_sim_declared_step(const struct dtl_sim *sim, uint32_t tensor, struct dtl_event *out);
int dtl_stage_zero_init(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_quantize(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_kbit_prepare(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_peft(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_trainer(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_engine(struct dtl_sim *sim, struct dtl_error *error);
/* Is the module an nn.Linear (profile's linear_modules, else its class or shape)? Fills the
 * weight's index and its [out, in] shape (-1 unknown). */
bool dtl_sim_linear(const struct dtl_sim *sim, uint32_t mod, uint32_t *ret_weight, int64_t *ret_out,
                    int64_t *ret_in);
bool dtl_sim_is_output_layer(const struct dtl_sim *sim, uint32_t mod);
/* absmax, quant_map, quant_state.*, SCB, weight_format: a pre-quantized weight's side tensors */
bool dtl_sim_is_quant_state_name(const char *name, uint32_t len);
/* The trainer is one of TRL's core trainers (sft dpo grpo rloo reward kto) */
bool dtl_sim_trl_core_trainer(const struct dtl_sim *sim);
/* a LLaMA-Factory LoRA recipe gives the module at path no adapter: find_all_linear_modules
 * leaves it out (all: lora_target all) or patch_target_modules drops it (stage-trainer.c) */
bool dtl_sim_lf_lora_excluded(const struct dtl_sim *sim, const char *path, size_t len, bool all);
/* The HF Trainer (and TRL's trainers, which inherit it) prepares a PEFT model under FSDP1
 * with transformers' _fsdp_qlora_plugin_updates: PEFT's fsdp_auto_wrap_policy, and the
 * 4-bit storage as FSDP's mixed precision (rules/versions.yaml hf-trainer-*). */
bool dtl_sim_hf_peft_fsdp(const struct dtl_sim *sim);
int dtl_stage_shard(struct dtl_sim *sim, struct dtl_error *error);
/* accelerate's FSDP2 plan (accelerate-fsdp2.c): the whole-model float32 cast of 1.6-1.12 (an
 * engine step), and the modules 1.14+ shards on their own (carve[mod] = 1) or in the tail
 * group (carve[mod] = 2), why filled with the reason; both only when the plan names
 * accelerate. */
int dtl_sim_accelerate_fsdp2_cast(struct dtl_sim *sim);
int dtl_sim_accelerate_fsdp2_carve(struct dtl_sim *sim, uint8_t *carve, struct dtl_pattern *why);
int dtl_stage_compute(struct dtl_sim *sim, struct dtl_error *error);

/* The first location that is set, else the plan's own location. */
struct dtl_loc dtl_sim_plan_loc(const struct dtl_sim *sim, struct dtl_loc a, struct dtl_loc b);

#endif
