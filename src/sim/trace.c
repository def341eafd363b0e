/* SPDX-License-Identifier: MIT */
/* The trace log: every change of a tensor's dtype or flags, with its reason and fact. */
#include <errno.h>

#include "sim-private.h"

static const char *const stage_names[] = {
    [DTL_STAGE_DECLARE] = "manifest",
    [DTL_STAGE_LOAD] = "load",
    [DTL_STAGE_ZERO_INIT] = "zero-init",
    [DTL_STAGE_QUANTIZE] = "quantize",
    [DTL_STAGE_KBIT_PREPARE] = "kbit-prepare",
    [DTL_STAGE_PEFT] = "peft",
    [DTL_STAGE_TRAINER] = "trainer",
    [DTL_STAGE_ENGINE] = "engine",
    [DTL_STAGE_SHARD] = "shard",
    [DTL_STAGE_COMPUTE] = "compute",
};

const char *dtl_stage_name(enum dtl_stage stage)
{
	return stage_names[stage];
}

static int append(struct dtl_sim *sim, uint32_t tensor, enum dtl_stage stage, enum dtl_dtype from,
                  enum dtl_dtype to, const char *reason, const char *fact, struct dtl_loc loc)
{
	struct dtl_event *e = dtl_vec_push(&sim->events, sim->arena, sizeof(*e));

	if (!e || !reason)
		return -ENOMEM;
	e->tensor = tensor;
	e->prev = sim->t.last_event[tensor];
	e->stage = stage;
	e->from = (uint8_t)from;
	e->to = (uint8_t)to;
	e->reason = reason;
	e->fact = fact;
	e->loc = loc;
	sim->t.last_event[tensor] = (uint32_t)(sim->events.count - 1);
	return 0;
}

int dtl_sim_set_dtype(struct dtl_sim *sim, uint32_t tensor, enum dtl_stage stage,
                      enum dtl_dtype new_dtype, const char *reason, const char *fact,
                      struct dtl_loc loc)
{
	enum dtl_dtype old = sim->t.dtype[tensor];
	int r = append(sim, tensor, stage, old, new_dtype, reason, fact, loc);

	if (r < 0)
		return r;
	sim->t.dtype[tensor] = (uint8_t)new_dtype;
	sim->t.compute_dtype[tensor] = (uint8_t)new_dtype;
	return 0;
}

int dtl_sim_note(struct dtl_sim *sim, uint32_t tensor, enum dtl_stage stage, const char *reason,
                 const char *fact, struct dtl_loc loc)
{
	enum dtl_dtype d = sim->t.dtype[tensor];
	return append(sim, tensor, stage, d, d, reason, fact, loc);
}

size_t dtl_sim_history(const struct dtl_sim *sim, uint32_t tensor, struct dtl_event *out,
                       size_t max)
{
	const struct dtl_event *events = sim->events.items;
	size_t n = 0;

	/* newest first into out (at most max: the oldest are dropped), the manifest step last,
	 * then reversed */
	for (uint32_t e = sim->t.last_event[tensor]; e != DTL_NONE_INDEX && n < max;
	     e = events[e].prev)
		out[n++] = events[e];
	if (n < max && dtl_sim_declared_step(sim, tensor, &out[n]))
		n++;
	for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		struct dtl_event tmp = out[a];
		out[a] = out[b];
		out[b] = tmp;
	}
	return n;
}

int dtl_sim_set_compute_dtype(struct dtl_sim *sim, uint32_t tensor, enum dtl_dtype compute,
                              const char *reason, const char *fact, struct dtl_loc loc)
{
	int r = append(sim, tensor, DTL_STAGE_COMPUTE, sim->t.dtype[tensor], compute, reason, fact,
	               loc);
	if (r < 0)
		return r;
	sim->t.compute_dtype[tensor] = (uint8_t)compute;
	return 0;
}
