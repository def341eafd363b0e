/* SPDX-License-Identifier: MIT */
/* A glob set matched against every module of the tree, parents first (sim-private.h). */
#include <errno.h>

#include "sim-private.h"

int dtl_module_match_init(struct dtl_module_match *mm, const struct dtl_sim *sim,
                          const struct dtl_globset *set)
{
	/* modules in creation order share most of their segments with the one before */
	mm->cursor = dtl_globset_cursor_new(set, sim->arena);
	mm->chain_len = 0;
	mm->dead = dtl_arena_calloc(sim->arena, sim->module_count + 1, 1);
	return mm->cursor && mm->dead ? 0 : -ENOMEM;
}

/* The depth of module mod (its segments) when its parent is on the chain, else 0. */
static size_t depth_on_chain(const struct dtl_module_match *mm, const struct dtl_module *m)
{
	if (m->parent == 0)
		return 1;
	for (size_t j = mm->chain_len; j-- > 0;)
		if (mm->chain[j] == m->parent)
			return j + 2;
	return 0;
}

int64_t dtl_module_match_first(struct dtl_module_match *mm, const struct dtl_sim *sim, uint32_t mod)
{
	const struct dtl_module *m = &sim->modules[mod];
	int64_t first;

	if (mod && mm->dead[m->parent]) {
		mm->dead[mod] = 1;
		return -1;
	}
	size_t depth = mod ? depth_on_chain(mm, m) : 0;
	if (depth && depth <= DTL_MODULE_MATCH_DEPTH) {
		/* modules come parents first: mostly a child or a sibling of the one before */
		mm->chain[depth - 1] = mod;
		mm->end[depth - 1] = m->path_len;
		mm->chain_len = depth;
		struct dtl_path_known known = {
		    .shared = depth - 1, .ends = mm->end, .count = depth};
		first = dtl_globset_cursor_first_known(mm->cursor, m->path, m->path_len, &known);
	} else {
		/* the root, a path too deep, or a jump to another branch: the cursor finds what
		 * it shares; the chain is rebuilt from the parents (or left empty) */
		first = dtl_globset_cursor_first(mm->cursor, m->path, m->path_len);
		size_t n = 0;
		for (uint32_t a = mod; a != 0 && n <= DTL_MODULE_MATCH_DEPTH;
		     a = sim->modules[a].parent)
			n++;
		mm->chain_len = n <= DTL_MODULE_MATCH_DEPTH ? n : 0;
		for (uint32_t a = mod, j = (uint32_t)mm->chain_len; j-- > 0;
		     a = sim->modules[a].parent) {
			mm->chain[j] = a;
			mm->end[j] = sim->modules[a].path_len;
		}
	}
	mm->dead[mod] = dtl_globset_cursor_exhausted(mm->cursor);
	return first;
}
