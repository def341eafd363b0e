/* SPDX-License-Identifier: MIT */
/*
 * The load stage: where each tensor's dtype comes from. With load_dtype as-is (the default) the
 * manifest's dtypes are the dtypes in memory; otherwise they are the checkpoint's and
 * from_pretrained's dtype resolution is replayed.
 */
#include <errno.h>

#include "sim-private.h"

static const char *fact_resolve = "facts/torch-and-transformers.md §3.2";
static const char *fact_final = "facts/torch-and-transformers.md §3.3";

static enum dtl_dtype first_floating(const struct dtl_sim *sim)
{
	for (size_t i = 0; i < sim->t.count; i++)
		if (dtl_dtype_is_floating(sim->t.dtype[i]))
			return sim->t.dtype[i];
	return DTL_DTYPE_F32;
}

static int declare(struct dtl_sim *sim, uint32_t i)
{
	const struct dtl_manifest *m = sim->manifest;
	uint32_t decl = sim->t.decl[i];
	enum dtl_dtype d = sim->t.dtype[i];
	const char *reason;
	struct dtl_loc loc;

	if (decl == DTL_NONE_INDEX) {
		uint32_t of = sim->t.alias_of[i];
		reason = dtl_arena_sprintf(sim->arena, "%s: tied to '%s', the same Parameter",
		                           dtl_dtype_name(d),
		                           of == DTL_NONE_INDEX ? "?" : sim->t.name[of]);
		loc = dtl_sim_tensor_loc(sim, i);
		return dtl_sim_note(sim, i, DTL_STAGE_DECLARE, reason,
		                    "facts/torch-and-transformers.md §4 (tied weights)", loc);
	}
	const struct dtl_tensor_decl *t = &m->tensors[decl];
	if (t->dtype != DTL_DTYPE_NONE) {
		reason = dtl_arena_sprintf(sim->arena, "declared %s", dtl_dtype_name(d));
		loc = t->dtype_loc;
	} else if (m->model.checkpoint_dtype != DTL_DTYPE_NONE) {
		reason = dtl_arena_sprintf(sim->arena, "%s from model.checkpoint_dtype",
		                           dtl_dtype_name(d));
		loc = m->model.checkpoint_dtype_loc;
	} else {
		reason = dtl_arena_sprintf(sim->arena,
		                           "%s: no dtype and no model.checkpoint_dtype (torch's "
		                           "default dtype)",
		                           dtl_dtype_name(d));
		loc = t->loc;
	}
	return dtl_sim_note(sim, i, DTL_STAGE_DECLARE, reason, NULL, loc);
}

int dtl_stage_load(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_manifest *m = sim->manifest;
	enum dtl_dtype target;
	const char *how;
	int r;

	(void)error;
	for (size_t i = 0; i < sim->t.count; i++)
		if ((r = declare(sim, (uint32_t)i)) < 0)
			return r;
	switch (m->model.load_mode) {
	case DTL_LOAD_AS_IS:
		return 0;
	case DTL_LOAD_NONE:
		/* dtype=None builds the model under torch's default dtype, float32, whatever the
		 * checkpoint holds; load_state_dict's copy_ keeps the model's dtype */
		target = DTL_DTYPE_F32;
		how = "from_pretrained(dtype=None) builds the model in float32";
		break;
	case DTL_LOAD_AUTO:
		/* "auto": config dtype, else the first floating tensor of the checkpoint */
		target = m->model.checkpoint_dtype != DTL_DTYPE_NONE ? m->model.checkpoint_dtype
		                                                     : first_floating(sim);
		how = dtl_arena_sprintf(sim->arena, "from_pretrained(dtype=\"auto\") resolves %s",
		                        dtl_dtype_name(target));
		break;
	case DTL_LOAD_DTYPE:
	default:
		target = m->model.load_dtype;
		how = dtl_arena_sprintf(sim->arena, "from_pretrained(dtype=%s)",
		                        dtl_dtype_torch_name(target));
		break;
	}
	for (size_t i = 0; i < sim->t.count; i++) {
		enum dtl_dtype d = sim->t.dtype[i];
		/* non-floating and float8_e4m3fn tensors are not cast; non-persistent buffers
		 * are not in the checkpoint and keep the dtype they were created with */
		if (!dtl_dtype_is_floating(d) || d == DTL_DTYPE_F8_E4M3FN || d == target)
			continue;
		if (sim->t.kind[i] == DTL_KIND_BUFFER && !(sim->t.flags[i] & DTL_TF_PERSISTENT))
			continue;
		r = dtl_sim_set_dtype(sim, (uint32_t)i, DTL_STAGE_LOAD, target, how,
		                      m->model.load_mode == DTL_LOAD_AUTO ? fact_resolve
		                                                          : fact_final,
		                      m->model.load_dtype_loc);
		if (r < 0)
			return r;
	}
	return 0;
}
