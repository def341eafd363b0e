/* SPDX-License-Identifier: MIT */
/* Helpers shared by several rules (src/rules/dtNNN-*.c); private to the rules layer. */
#ifndef DTL_RULE_UTIL_H
#define DTL_RULE_UTIL_H

#include "rule-check.h"
#include "dtypelint/core/glob.h"

/* The tensor is a quantized weight (4-bit or 8-bit storage). */
bool dtl_rules_quantized(const struct dtl_sim *sim, uint32_t t);
/* The tensor gets gradients. */
bool dtl_rules_trainable(const struct dtl_sim *sim, uint32_t t);
/* Groups findings by a key: one finding per key, tensors appended. Findings about many tensors
 * for one reason (the same buffer in 61 layers) are one finding naming the first tensors and the
 * count. */
struct dtl_rules_grouper {
	struct dtl_check *c;
	struct dtl_strmap keys;
	size_t *counts; /* per finding index */
	size_t first_finding;
};
/* A grouper for check c's findings from now on, its keys in c's arena; cannot fail. */
void dtl_rules_grouper_init(struct dtl_rules_grouper *g, struct dtl_check *c);
/* Returns the finding for key, or NULL when it must be created by the caller (then call
 * dtl_rules_grouper_add after creating it). */
struct dtl_finding *dtl_rules_grouper_get(struct dtl_rules_grouper *g, const char *key);
int dtl_rules_grouper_add(struct dtl_rules_grouper *g, const char *key, struct dtl_finding *f,
                          uint32_t tensor, const char *role);
/* Every further tensor of a group: listed, with a note for the first three. */
int dtl_rules_grouper_more(struct dtl_rules_grouper *g, struct dtl_finding *f, uint32_t tensor);
int dtl_rules_grouper_finish(struct dtl_rules_grouper *g);
/* The last segment of a tensor's name ("weight", "inv_freq"). */
const char *dtl_rules_leaf(const struct dtl_sim *sim, uint32_t t);
/* The newest event that gave the tensor its 16-bit stored or compute dtype. */
const struct dtl_event *dtl_rules_cause(const struct dtl_sim *sim, uint32_t t);
/* The plan shards parameters (FSDP1, FSDP2 or ZeRO-3). */
bool dtl_rules_sharded(const struct dtl_sim *sim);
/* "FSDP1", "FSDP2", "ZeRO-3", ... as messages name the strategy. */
const char *dtl_rules_strategy_label(const struct dtl_sim *sim);
/* The error FSDP1 raises at the first unit a 4-bit weight makes fail (units in construction
 * order; torch validates each unit's parameters in order, rules/versions.yaml
 * fsdp1-validate-v2): the cause is the storage, the symptom this ValueError. */
int dtl_rules_fsdp1_error(struct dtl_check *c, struct dtl_finding *f);
/* A LoRA adapter tensor (modules_to_save copies are not adapters). */
bool dtl_rules_is_lora(const struct dtl_sim *sim, uint32_t t);
/* The base weight of an adapter "<module>.lora_A.<name>.weight": "<module>.weight", or the
 * PEFT-exported "<module>.base_layer.weight". */
uint32_t dtl_rules_base_of(const struct dtl_sim *sim, uint32_t t);
/* DT405 / DT406 — merge_and_unload after training (quantized: into 4-bit/8-bit weights). */
int dtl_rules_merge_check(struct dtl_check *c, bool quantized);
/* The first group of a kind, NULL when the simulation made none. */
const struct dtl_group *dtl_rules_find_group(const struct dtl_sim *sim, enum dtl_group_kind kind);
/* The first member of g whose dtype differs from the first member's, and its offset;
 * DTL_NONE_INDEX when all share one dtype. */
uint32_t dtl_rules_first_other_dtype(const struct dtl_sim *sim, const struct dtl_group *g,
                                     size_t *ret_offset);

/* --fix-plan candidates (struct dtl_rule.propose_fixes) */
/* An adapter PEFT upcast to float32 (autocast_adapter_dtype), or declared float32. */
bool dtl_rules_upcast_adapter(const struct dtl_sim *sim, uint32_t t);
/* The path of the module holding tensor t ("" for the root). */
const char *dtl_rules_module_of(struct dtl_arena *arena, const struct dtl_sim *sim, uint32_t t);
/* One glob over the modules of all the finding's tensors (a finding that stands for several
 * alike, "and 1 more like it"): segments that differ become '*'. NULL when their depths
 * differ. */
const char *dtl_rules_modules_glob(struct dtl_arena *arena, const struct dtl_sim *sim,
                                   const struct dtl_finding *f);
/* get_peft_model raises because the adapter's target_modules match no module of a model whose
 * modules are known (DT410's condition; a rule of a later step of get_peft_model defers to
 * it). */
bool dtl_rules_adapter_targets_nothing(const struct dtl_sim *sim);
/* The adapter's target_parameters are wrapped by get_peft_model after zero.Init partitioned
 * them (ZeRO-3 with zero.Init, an unquantized model): DT501's condition, whatever the plan's
 * PEFT version, so that DT412 proposes a release past peft-target-parameters-zero3-shape. */
bool dtl_rules_target_parameters_partitioned(const struct dtl_sim *sim);
/* The module of the finding's first tensor; NULL when it names none. */
const char *dtl_rules_fix_module(const struct dtl_fix_request *req);
/* Appends a candidate to req (title printf-formatted); NULL when out of memory. */
struct dtl_fix_candidate *dtl_rules_propose(const struct dtl_fix_request *req,
                                            enum dtl_fix_kind kind, const char *text,
                                            enum dtl_dtype dtype, int cost, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* A version fix: the plan's framework at version (cost 2), titled as the user reads it
 * ("upgrade peft: training.versions.peft: \"0.12.0\" (PR #1706)"). 0 or -ENOMEM. */
int dtl_rules_propose_version(const struct dtl_fix_request *req, enum dtl_framework framework,
                              const char *version, const char *title);
/* adapter.autocast_adapter_dtype: false, when the finding's first tensor is an adapter PEFT
 * upcast (DT101, DT111, DT121, DT122, DT403 share the cause). */
int dtl_rules_propose_autocast_off(const struct dtl_fix_request *req);
/* The wrap fixes of a group that mixes dtypes (DT101, DT111): each LoRA module a unit or group
 * of its own when the first tensor is an upcast adapter, then the finding's module on its own. */
int dtl_rules_propose_wrap_apart(const struct dtl_fix_request *req);
/* The finding's module as a unit or group of its own: add it to training.fsdp.wrap. */
int dtl_rules_propose_wrap_module(const struct dtl_fix_request *req);

#endif
