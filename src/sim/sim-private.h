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
int dtl_stage_engine(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_shard(struct dtl_sim *sim, struct dtl_error *error);
int dtl_stage_compute(struct dtl_sim *sim, struct dtl_error *error);

/* The first location that is set, else the plan's own location. */
struct dtl_loc dtl_sim_plan_loc(const struct dtl_sim *sim, struct dtl_loc a, struct dtl_loc b);

#endif
