/* SPDX-License-Identifier: MIT */
#ifndef DTL_SIM_PRIVATE_H
#define DTL_SIM_PRIVATE_H

#include "dtypelint/keep-fp32.h"
#include "dtypelint/sim.h"

int dtl_sim_build_table(struct dtl_sim *sim, struct dtl_error *error);
int dtl_sim_assign_classes(struct dtl_sim *sim, struct dtl_error *error);
int dtl_sim_resolve_model(struct dtl_sim *sim, struct dtl_error *error);
int dtl_sim_find_routers(struct dtl_sim *sim, struct dtl_error *error);

int dtl_stage_load(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_zero_init(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_quantize(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_kbit_prepare(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_peft(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_trainer(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_engine(struct dtl_sim *sim, struct dtl_error *error);
/* Is the module an nn.Linear (profile's linear_modules, else its class or shape)? Fills the
 * weight's index and its [out, in] shape (-1 unknown). */
bool dtl_sim_linear(const struct dtl_sim *sim, uint32_t mod, uint32_t *ret_weight,
		    int64_t *ret_out, int64_t *ret_in);
bool dtl_sim_is_output_layer(const struct dtl_sim *sim, uint32_t mod);
/* absmax, quant_map, quant_state.*, SCB, weight_format: a pre-quantized weight's side tensors */
bool dtl_sim_is_quant_state_name(const char *name, uint32_t len);
/* The trainer is one of TRL's core trainers (sft dpo grpo rloo reward kto) */
bool dtl_sim_trl_core_trainer(const struct dtl_sim *sim);
int dtl_stage_shard(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_compute(struct dtl_sim *sim, struct dtl_error *error);

/* The first location that is set, else the plan's own location. */
struct dtl_loc dtl_sim_plan_loc(const struct dtl_sim *sim, struct dtl_loc a, struct dtl_loc b);

#endif
