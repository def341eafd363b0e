/* SPDX-License-Identifier: MIT */
/* The rows of plan-keys.h as data, with the offsets of the struct dtl_plan members they name
 * (plan-key.h), and what the plan does for every STORED key: its unset value and its overlay. */
#include <stddef.h>
#include <stdint.h>

#include "dtypelint/model/plan.h"

#define AT(member) (offsetof(struct dtl_plan, member) + 1)
#define NOWHERE    0
#define STORED     SIZE_MAX
#define DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC, DEFAULT, VALUES, DOC, DS, ACC, TR)        \
	[DTL_PLAN_KEY_##ID] = {DTL_PLAN_KEY_##PARENT, NAME, DTL_PLAN_##TYPE, FIELD, LOC, VALUES},
const struct dtl_plan_key dtl_plan_keys[DTL_PLAN_KEY_COUNT] = {
#include "dtypelint/model/plan-keys.h"
};
#undef DTL_PLAN_KEY

void *dtl_plan_key_field(struct dtl_plan *plan, enum dtl_plan_key_id id)
{
	size_t at = dtl_plan_keys[id].field;
	if (at == STORED)
		return &plan->stored[id];
	return at ? (char *)plan + at - 1 : NULL;
}

struct dtl_loc *dtl_plan_key_loc(struct dtl_plan *plan, enum dtl_plan_key_id id)
{
	size_t at = dtl_plan_keys[id].loc;
	if (at == STORED)
		return &plan->stored_locs[id];
	return at ? (struct dtl_loc *)((char *)plan + at - 1) : NULL;
}

void dtl_plan_keys_init(struct dtl_plan *plan)
{
	for (int id = 0; id < DTL_PLAN_KEY_COUNT; id++) {
		if (dtl_plan_keys[id].field != STORED)
			continue;
		enum dtl_plan_type type = dtl_plan_keys[id].type;
		if (type == DTL_PLAN_TRISTATE || type == DTL_PLAN_TENSOR_OVERRIDES)
			plan->stored[id].e = DTL_UNSET;
		else if (type == DTL_PLAN_THRESHOLD)
			plan->stored[id].i = -1;
	}
}

/* a STORED key is given when it has a location: every reader of a key sets it */
void dtl_plan_keys_overlay(struct dtl_plan *dst, const struct dtl_plan *src)
{
	for (int id = 0; id < DTL_PLAN_KEY_COUNT; id++) {
		if (dtl_plan_keys[id].field == STORED && src->stored_locs[id].line) {
			dst->stored[id] = src->stored[id];
			dst->stored_locs[id] = src->stored_locs[id];
		}
	}
}
