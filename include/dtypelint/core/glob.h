/* SPDX-License-Identifier: MIT */
/*
 * Dotted-path globs (docs/design.md §3): '*' matches within one segment (any run of characters but
 * '.'), a segment that is exactly '**' matches any number of segments (including none), all
 * else is literal.
 */
#ifndef DTYPELINT_GLOB_H
#define DTYPELINT_GLOB_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/glob.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"

/* Returns NULL when pattern is a valid glob, else a static description of what is wrong. */
const char *dtl_glob_check(const char *pattern, size_t len);
bool dtl_glob_match(const char *pattern, size_t pattern_len, const char *path, size_t path_len);
/* true when pattern contains no '*' (a literal path) */
bool dtl_glob_is_literal(const char *pattern, size_t len);

/*
 * A compiled set of globs: which of N patterns match a path, in time that does not grow with N
 * in practice. Matching a path against the set gives exactly what calling dtl_glob_match()
 * with each pattern would give (any string is accepted, valid glob or not).
 *
 * How: the patterns are a trie of segments. Matching walks the path's segments once, keeping
 * the trie nodes it can be in: a literal segment is one lookup among a node's literal
 * children (a hash when there are many: 1,000 "model.layers.N.**" cost one lookup), a segment
 * with '*' is tried against the path's segment, and a '**' node stays in the walk. A glob that
 * is '**' and literal segments ("**.lora_A.weight") is looked up by the path's last segments
 * instead, so that it keeps no '**' node alive in every walk. Invalid
 * globs (which dtl_glob_match() still gives an answer for) are tried one by one.
 *
 * Usage, for a list of patterns where the first match wins (model.modules, fsdp.wrap):
 *
 *     struct dtl_globset set;
 *     dtl_globset_init(&set, arena);
 *     for (size_t i = 0; i < n; i++)
 *             if (dtl_globset_add(&set, patterns[i].text, patterns[i].len) < 0)
 *                     return -ENOMEM;
 *     struct dtl_globset_cursor *c = dtl_globset_cursor_new(&set, arena);
 *     for each module: int64_t first = dtl_globset_cursor_first(c, m->path, m->path_len);
 *
 * (dtl_globset_first() answers one path alone, without reusing anything.)
 *
 * Pattern indices are the order of dtl_globset_add() calls (0, 1, ...). Patterns are borrowed
 * (they must outlive the set); the set's storage lives in arena and needs no cleanup. Adding
 * after matching is allowed. Matching does not modify the set.
 */
struct dtl_globset_node;
struct dtl_globset_edge;
struct dtl_globset_pattern;
struct dtl_globset {
	struct dtl_arena *arena;
	size_t count; /* patterns added */
	struct dtl_globset_pattern *patterns;
	size_t pattern_capacity;
	struct dtl_globset_node *nodes; /* nodes[0] is the root */
	size_t node_count, node_capacity;
	struct dtl_globset_edge *edges;
	size_t edge_count, edge_capacity;
	uint32_t fallback; /* invalid globs, tried one by one: a chain of patterns */
	/* "**.<literal segments>" globs, which match a path whose last segments are those: by
	 * that text (a chain of patterns each), looked up once per length in segments (bit
	 * m - 1 of suffix_lengths) rather than kept in every walk as a '**' node */
	struct dtl_strmap *suffixes;
	uint32_t suffix_lengths;
};

/* An empty set whose nodes and patterns will come from arena (borrowed: it must outlive the
 * set); it cannot fail, and has no fini: the arena frees the set. */
void dtl_globset_init(struct dtl_globset *set, struct dtl_arena *arena);
/* Adds a pattern; its index is the number of patterns added before it. 0 or -ENOMEM. */
int dtl_globset_add(struct dtl_globset *set, const char *pattern, size_t len);
/* The index of the first (lowest-index) pattern that matches path, or -1 when none does. */
int64_t dtl_globset_first(const struct dtl_globset *set, const char *path, size_t len);
/*
 * Every pattern that matches path, lowest index first, into out (at most max entries);
 * returns how many match (which may be more than max). For "which patterns matched nothing"
 * reports (DT601): mark out[0..n) for every path.
 */
size_t dtl_globset_matches(const struct dtl_globset *set, const char *path, size_t len,
                           uint32_t *out, size_t max);

#endif
