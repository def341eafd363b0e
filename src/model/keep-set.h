/* SPDX-License-Identifier: MIT */
/*
 * Keep-in-fp32 lists compiled for matching many names (src/model/keep-fp32.c): internal to the
 * library (the simulation builds them, two rules count with them); callers use
 * dtypelint/keep-fp32.h.
 */
#ifndef DTL_MODEL_KEEP_SET_H
#define DTL_MODEL_KEEP_SET_H
#ifndef DTL_SEES_MODEL
#error "keep-set.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/core/arena.h"
#include "dtypelint/model/keep-fp32.h"

/* A keep-in-fp32 list compiled for one era's matcher, so that matching a name costs about its
 * length, not its length times the entries: an Aho-Corasick automaton over the entries' literal
 * runs (what the era does not treat as wildcards). One run per entry is its key: a name is a
 * candidate for the entry where the key occurs, and dtl_keep_match() decides (unless the key is
 * the whole entry of a SUBSTRING era). Every match of an entry contains each of its runs, so the
 * filter loses nothing; entries without a run are checked on every name. Lives in the arena it
 * was built in. */
struct dtl_keep_set {
	enum dtl_keep_matcher matcher;
	const struct dtl_pattern *entries;
	uint32_t entry_count;
	uint32_t node_count;
	uint32_t root[256]; /* the root's transitions; 0 stays at the root */
	uint32_t *child;    /* per node: first child (0: none); the root's are in root[] */
	uint32_t *sibling;  /* per node: next child of the same parent */
	uint8_t *byte;      /* per node: the byte leading to it */
	uint32_t *fail;     /* per node: the longest proper suffix that is a node */
	uint32_t *order;    /* the nodes but the root, breadth first */
	uint32_t *out;      /* per node: first entry keyed here (UINT32_MAX: none) */
	uint32_t *dict;     /* per node: next node on the fail chain keying entries (0: none) */
	uint32_t *report;   /* per node: itself if it keys entries, else dict (0: none) */
	uint32_t *runs;     /* the nodes of every entry's runs, entry by entry */
	uint32_t *run_start, *run_len;   /* per run: where it is in its entry */
	uint32_t *run_first, *run_count; /* per entry: its runs in runs[] */
	uint32_t *key;                   /* per entry: the node of its key run */
	uint32_t *key_start, *key_len;   /* per entry: where its key run is in it */
	bool *fixed;          /* per entry: matches a fixed width (a key hit places it) */
	uint32_t *entry_next; /* per entry: next entry keyed at the same node */
	bool *verify;         /* per entry: a key hit still needs dtl_keep_match() */
	uint32_t *unkeyed;    /* entries with no literal run, checked on every name */
	uint32_t unkeyed_count;
	bool dot_resets; /* no key holds a '.' (dtl_keep_set_possible_start) */
};

/* Compiles count entries of a keep-in-fp32 list for matcher into set, its tables in arena:
 * 0 or -ENOMEM. */
int dtl_keep_set_build(struct dtl_keep_set *set, enum dtl_keep_matcher matcher,
                       const struct dtl_pattern *entries, size_t count, struct dtl_arena *arena);
/* Keys each entry with the run that occurs in the fewest of these names (a sample of the names
 * to match is enough; the result never depends on it, only the work). -ENOMEM or 0. */
int dtl_keep_set_tune(struct dtl_keep_set *set, const char *const *names, const uint32_t *name_lens,
                      size_t n);
/* The index of the first entry matching name, or UINT32_MAX. */
uint32_t dtl_keep_set_first(const struct dtl_keep_set *set, const char *name, size_t name_len);
/* For every entry: how many of the n names it matches (count[]) and the first one (first[],
 * UINT32_MAX when none). Both arrays have entry_count elements. -ENOMEM or 0. */
int dtl_keep_set_count(const struct dtl_keep_set *set, const char *const *names,
                       const uint32_t *name_lens, size_t n, uint32_t *count, uint32_t *first);
/*
 * Which entries can match at all, from the segments of the names (the text between dots)
 * rather than the names: when no key holds a '.' (dot_resets), a key that occurs in a name
 * occurs in one of its segments, and an entry whose key occurs in none matches no name.
 * dtl_keep_possible_init() marks possible the entries with no key, or all of them when a key
 * may hold a '.'; dtl_keep_possible_add() marks those whose key occurs in one segment. Once
 * every segment of every name was added (in any order, as often as wanted), the entries not
 * marked match no name. A segment added before is passed over: names repeat their segments.
 */
struct dtl_keep_told;
struct dtl_keep_possible {
	bool *possible;             /* per entry */
	size_t left;                /* entries not marked: once 0, adding more changes nothing */
	struct dtl_keep_told *told; /* segments added, in a small table by their bytes */
};
/* Storage from arena. 0 or -ENOMEM. */
int dtl_keep_possible_init(struct dtl_keep_possible *p, const struct dtl_keep_set *set,
                           struct dtl_arena *arena);
void dtl_keep_possible_add(struct dtl_keep_possible *p, const struct dtl_keep_set *set,
                           const char *segment, size_t len);
/* first[] of dtl_keep_set_count only, for the entries possible[e] (NULL: all), which stops as
 * soon as every one of them has matched; the others are left UINT32_MAX unscanned. */
int dtl_keep_set_any(const struct dtl_keep_set *set, const char *const *names,
                     const uint32_t *name_lens, size_t n, const bool *possible, uint32_t *first);

#endif
