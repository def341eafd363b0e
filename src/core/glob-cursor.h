/* SPDX-License-Identifier: MIT */
/*
 * Glob-set cursors (src/core/glob.c): matching many paths in a row against one struct
 * dtl_globset. Internal to the library (the simulation's tensor table and module lookup, the
 * keep-in-fp32 sets and two rules use them); callers use dtypelint/glob.h.
 */
#ifndef DTL_CORE_GLOB_CURSOR_H
#define DTL_CORE_GLOB_CURSOR_H
#ifndef DTL_SEES_CORE
#error "glob-cursor.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/core/glob.h"

/*
 * A cursor matches many paths in a row against one set, reusing the walk of the segments a
 * path shares with the one before (a tensor's module path with its sibling's): in tensor or
 * module order most of a path costs nothing. Same answers as dtl_globset_first/matches. The
 * previous path is borrowed until the next call; adding to the set after creating a cursor is
 * not allowed. Lives in arena.
 */
struct dtl_globset_cursor;
/* How many of the first n bytes of a and b are equal before the first that differs. */
size_t dtl_common_prefix(const char *a, const char *b, size_t n);
/* How many leading segments path shares with prev, whose segment k ends at ends[k] (for the
 * first count segments): what a walk over prev can reuse for path (cursors, module lookup). */
size_t dtl_path_shared_segments(const char *prev, size_t prev_len, const uint32_t *ends,
                                size_t count, const char *path, size_t len);
struct dtl_globset_cursor *dtl_globset_cursor_new(const struct dtl_globset *set,
                                                  struct dtl_arena *arena);
int64_t dtl_globset_cursor_first(struct dtl_globset_cursor *c, const char *path, size_t len);
size_t dtl_globset_cursor_matches(struct dtl_globset_cursor *c, const char *path, size_t len,
                                  uint32_t *out, size_t max);
/*
 * The same for a path whose segments the caller has found already (a tensor's name after its
 * module path was looked up): its first `shared` segments are those of the previous path given
 * to the cursor (fewer is fine, 0 reuses nothing), and segment j ends at ends[j] for j < count
 * (the others are found). Saves finding the shared prefix and the dots again.
 */
struct dtl_path_known {
	size_t shared;
	const uint32_t *ends;
	size_t count;
};
/* dtl_globset_cursor_matches() and dtl_globset_cursor_first() for such a path. */
size_t dtl_globset_cursor_matches_known(struct dtl_globset_cursor *c, const char *path, size_t len,
                                        const struct dtl_path_known *known, uint32_t *out,
                                        size_t max);
int64_t dtl_globset_cursor_first_known(struct dtl_globset_cursor *c, const char *path, size_t len,
                                       const struct dtl_path_known *known);
/* After a cursor call: true when no pattern of the set can match the last path followed by
 * more segments (its walk came to nothing, and the set has no invalid glob, which is matched
 * one by one). A module tree walked parent first can then skip the module's whole subtree. */
bool dtl_globset_cursor_exhausted(const struct dtl_globset_cursor *c);

#endif
