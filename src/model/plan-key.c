/* SPDX-License-Identifier: MIT */
/* The rows of plan-keys.h as data, with the offsets of the struct dtl_plan members they name
 * (plan-key.h). */
#include <stddef.h>
#include <stdio.h>

#include "dtypelint/plan.h"
#include "plan-key.h"

#define AT(member) (offsetof(struct dtl_plan, member) + 1)
#define NOWHERE    0
#define DTL_PLAN_KEY(PARENT, ID, NAME, TYPE, FIELD, LOC, DEFAULT, VALUES, DOC, DS, ACC, TR)        \
	[DTL_PLAN_KEY_##ID] = {DTL_PLAN_KEY_##PARENT, NAME, DTL_PLAN_##TYPE, FIELD, LOC, VALUES},
const struct dtl_plan_key dtl_plan_keys[DTL_PLAN_KEY_COUNT] = {
#include "plan-keys.h"
};
#undef DTL_PLAN_KEY

void *dtl_plan_key_at(void *plan, size_t at)
{
	return at ? (char *)plan + at - 1 : NULL;
}

const char *dtl_plan_key_path(enum dtl_plan_key_id id, char *buf, size_t size)
{
	const struct dtl_plan_key *k = &dtl_plan_keys[id];
	char parent[128];

	if (k->parent == DTL_PLAN_KEY_ROOT)
		snprintf(buf, size, "%s", k->name);
	else
		snprintf(buf, size, "%s.%s", dtl_plan_key_path(k->parent, parent, sizeof(parent)),
		         k->name);
	return buf;
}
