/* SPDX-License-Identifier: MIT */
/* A glob set matched against every module of the tree, parents first (sim-private.h). */
#include <errno.h>

#include "sim-private.h"

int dtl_module_match_init(struct dtl_module_match *mm, const struct dtl_sim *sim,
                          const struct dtl_globset *set)
{
	/* modules in creation order share most of their segments with the one before */
	mm->cursor = dtl_globset_cursor_new(set, sim->arena);
	mm->dead = dtl_arena_calloc(sim->arena, sim->module_count + 1, 1);
	return mm->cursor && mm->dead ? 0 : -ENOMEM;
}

int64_t dtl_module_match_first(struct dtl_module_match *mm, const struct dtl_sim *sim,
                               uint32_t mod)
{
	const struct dtl_module *m = &sim->modules[mod];

	if (mod && mm->dead[m->parent]) {
		mm->dead[mod] = 1;
		return -1;
	}
	int64_t first = dtl_globset_cursor_first(mm->cursor, m->path, m->path_len);
	mm->dead[mod] = dtl_globset_cursor_exhausted(mm->cursor);
	return first;
}
