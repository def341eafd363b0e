/* SPDX-License-Identifier: MIT */
/*
 * Fix verification (--fix-plan --write): once the edit is written, the set-up is linted again
 * through the lint library, and the fix holds when the finding is gone and nothing new came at
 * the failing severity. The command line says what the verdict holds.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/fix/fix.h"
#include "dtypelint/sim/sim.h"

/* Is the fixed finding (or its rule on one of its tensors, for a finding that stood for several
 * alike) still among the findings of the input linted again? names: the target's tensors. */
static const struct dtl_finding *still_reported(struct dtl_arena *arena, const struct dtl_sim *sim,
                                                const struct dtl_finding *target,
                                                const struct dtl_lint_result *again,
                                                const struct dtl_strmap *names)
{
	const char *key = dtl_fix_finding_key(arena, sim, target);
	const struct dtl_finding *now = again->findings->items.items;
	const struct dtl_sim *sim2 = again->sim;

	for (size_t n = 0; n < again->findings->items.count; n++) {
		const char *k2 = dtl_fix_finding_key(arena, sim2, &now[n]);
		if (now[n].severity < target->severity || strcmp(now[n].rule->id, target->rule->id))
			continue;
		bool same = key && k2 && !strcmp(key, k2);
		for (size_t b = 0; b < now[n].tensor_count && !same; b++) {
			uint32_t t = now[n].tensors[b];
			same = dtl_strmap_get(names, sim2->t.name[t], sim2->t.name_len[t]) >= 0;
		}
		if (same)
			return &now[n];
	}
	return NULL;
}

/* Findings the edit brought (the plan said so: "it creates") at or above fail_on */
static int brought_findings(struct dtl_arena *arena, const struct dtl_lint_result *before,
                            enum dtl_severity fail_on, struct dtl_fix_verdict *ret)
{
	const struct dtl_finding *old = before->findings->items.items;
	const struct dtl_findings *found = ret->again.findings;
	const struct dtl_finding *now = found->items.items;
	struct dtl_strmap seen;
	struct dtl_vec brought = {0}; /* const struct dtl_finding * */

	dtl_strmap_init(&seen, arena);
	for (size_t n = 0; n < before->findings->items.count; n++) {
		const char *was = dtl_fix_finding_key(arena, before->sim, &old[n]);
		if (!was || dtl_strmap_put(&seen, was, strlen(was), 1) < 0)
			return -ENOMEM;
	}
	for (size_t n = 0; n < found->items.count; n++) {
		const char *is = dtl_fix_finding_key(arena, ret->again.sim, &now[n]);
		if (!is || dtl_strmap_get(&seen, is, strlen(is)) >= 0 || now[n].severity < fail_on)
			continue;
		const struct dtl_finding **slot = dtl_vec_push(&brought, arena, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		*slot = &now[n];
	}
	ret->brought = brought.items;
	ret->brought_count = brought.count;
	return 0;
}

int dtl_fix_verify(const struct dtl_lint_job *job, const struct dtl_lint_settings *settings,
                   const struct dtl_lint_result *before, const struct dtl_finding *target,
                   struct dtl_arena *arena, struct dtl_fix_verdict *ret, struct dtl_error *error)
{
	const struct dtl_sim *sim = before->sim;
	struct dtl_strmap names;
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = dtl_lint_run(job, settings, arena, &ret->again, error)) < 0)
		return r;
	/* the finding's tensors, by name: one look-up per tensor of the findings after */
	dtl_strmap_init(&names, arena);
	for (size_t a = 0; a < target->tensor_count; a++) {
		uint32_t t = target->tensors[a];
		if (dtl_strmap_put(&names, sim->t.name[t], sim->t.name_len[t], 1) < 0)
			return -ENOMEM;
	}
	ret->still = still_reported(arena, sim, target, &ret->again, &names);
	if (ret->still)
		return 0;
	return brought_findings(arena, before, settings->fail_on, ret);
}
