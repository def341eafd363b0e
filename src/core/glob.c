/* SPDX-License-Identifier: MIT */
/*
 * Dotted-path globs (glob.h): the patterns of a manifest, an importer or a suppression that
 * name modules and tensors ("model.layers.*.mlp", "**.lm_head"). dtl_glob_match() tries one
 * pattern; a dtl_globset compiles many into one trie walked once per path, with "**.<suffix>"
 * patterns looked up by their suffix, so that matching every tensor of a large model against every
 * pattern stays linear. The cursor (glob-cursor.h) reuses the walk of the previous path's
 * shared prefix, for the simulation's passes over modules in order.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "dtypelint/core/glob.h"
#include "glob-cursor.h"

const char *dtl_glob_check(const char *pattern, size_t len)
{
	size_t seg_start = 0;

	if (len == 0)
		return "a glob must not be empty";
	for (size_t i = 0; i <= len; i++) {
		if (i < len && pattern[i] != '.')
			continue;
		size_t seg_len = i - seg_start;
		const char *seg = pattern + seg_start;
		if (seg_len == 0)
			return "a glob must not have an empty segment (leading, trailing or double "
			       "'.')";
		if (memchr(seg, '*', seg_len)) {
			const char *dbl = NULL;
			for (size_t k = 0; k + 1 < seg_len; k++)
				if (seg[k] == '*' && seg[k + 1] == '*')
					dbl = seg + k;
			if (dbl && !(seg_len == 2))
				return "'**' must be a whole segment (as in 'model.**.weight')";
		}
		seg_start = i + 1;
	}
	return NULL;
}

bool dtl_glob_is_literal(const char *pattern, size_t len)
{
	return memchr(pattern, '*', len) == NULL;
}

/* '*' within one segment: classic wildcard match of seg against text (no dots in either). */
static bool segment_match(const char *pat, size_t plen, const char *text, size_t tlen)
{
	size_t p = 0, t = 0, star_p = (size_t)-1, star_t = 0;

	/* most segments differ at once: "self_attn" against "mlp" */
	if (plen && pat[0] != '*' && (tlen == 0 || pat[0] != text[0]))
		return false;
	while (t < tlen) {
		if (p < plen && pat[p] == '*') {
			star_p = p++;
			star_t = t;
		} else if (p < plen && pat[p] == text[t]) {
			p++;
			t++;
		} else if (star_p != (size_t)-1) {
			p = star_p + 1;
			t = ++star_t;
		} else {
			return false;
		}
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

/* segment_match() for a pattern whose only '*' is at star: the text is the bytes before it,
 * anything, then the bytes after it (short: compared in place, no call) */
static bool one_star_match(const char *pat, size_t plen, size_t star, const char *text, size_t tlen)
{
	size_t after = plen - star - 1;

	if (tlen < plen - 1)
		return false;
	for (size_t i = 0; i < star; i++)
		if (pat[i] != text[i])
			return false;
	for (size_t i = 0; i < after; i++)
		if (pat[star + 1 + i] != text[tlen - after + i])
			return false;
	return true;
}

/* segments are short: eight bytes at a time (dtl_bytes_equal), then a plain loop, beat a call
 * to memchr() */
static size_t segment_end(const char *s, size_t start, size_t len)
{
	for (; start < len && len - start >= 8; start += 8) {
		uint64_t word;
		memcpy(&word, s + start, 8);
		uint64_t dots = dtl_bytes_equal(word, '.');
		if (dots)
			return start + (size_t)__builtin_ctzll(dots) / 8;
	}
	while (start < len && s[start] != '.')
		start++;
	return start;
}

static bool is_star2(const char *pat, size_t start, size_t end)
{
	return end - start == 2 && pat[start] == '*' && pat[start + 1] == '*';
}

/*
 * Matches the pattern's segments against the path's, '**' taking any number of whole
 * segments: segment_match() one level up. Each '**' remembers where it started to take
 * segments; on a mismatch the last one takes one more and the segments after it are tried
 * again. No recursion, no memory, and a pair (pattern segment, path segment) is compared at
 * most once per '**' region, so the time is O(len(pattern) x len(path)) whatever the number of
 * '**' (the backtracking version took exponential time on "**.**.**...x").
 */
/* Where the run of literal segments starting at p (its first has no '*') ends: before the
 * '.' ahead of the next segment with a '*', or at the end. */
static size_t literal_run_end(const char *pat, size_t p, size_t plen)
{
	const char *star = memchr(pat + p, '*', plen - p);

	if (!star)
		return plen;
	return (size_t)((const char *)memrchr(pat + p, '.', (size_t)(star - pat) - p) - pat);
}

static bool segments_match(const char *pat, size_t plen, const char *path, size_t tlen)
{
	size_t p = 0, t = 0;                  /* segment starts; len + 1 is past the end */
	size_t star_p = SIZE_MAX, star_t = 0; /* after the last '**', and where it stopped */

	while (t <= tlen) {
		if (p <= plen) {
			size_t pe = p;
			bool wild = false;
			for (; pe < plen && pat[pe] != '.'; pe++)
				wild |= pat[pe] == '*';
			if (!wild) {
				/* literal segments up to the next wild one match as bytes, at once
				 * (a hostile pattern has 250 of them to compare per '**' step) */
				size_t q = literal_run_end(pat, p, plen), n = q - p;
				if (n <= tlen - t && memcmp(pat + p, path + t, n) == 0 &&
				    (t + n == tlen || path[t + n] == '.')) {
					p = q + 1;
					t += n + 1;
					continue;
				}
			} else if (is_star2(pat, p, pe)) {
				p = star_p = pe + 1;
				star_t = t;
				continue;
			} else {
				size_t te = segment_end(path, t, tlen);
				if ((pe - p == 1 /* '*' */) ||
				    segment_match(pat + p, pe - p, path + t, te - t)) {
					p = pe + 1;
					t = te + 1;
					continue;
				}
			}
		}
		if (star_p == SIZE_MAX)
			return false;
		/* the last '**' takes one more segment */
		star_t = segment_end(path, star_t, tlen) + 1;
		p = star_p;
		t = star_t;
	}
	/* the path is used up: what is left of the pattern must be '**' (none of a segment) */
	for (; p <= plen; p = segment_end(pat, p, plen) + 1)
		if (!is_star2(pat, p, segment_end(pat, p, plen)))
			return false;
	return true;
}

bool dtl_glob_match(const char *pattern, size_t pattern_len, const char *path, size_t path_len)
{
	if (dtl_glob_is_literal(pattern, pattern_len))
		return pattern_len == path_len && memcmp(pattern, path, path_len) == 0;
	if (path_len == 0) /* the root path "" matches only a lone '**' */
		return pattern_len == 2 && pattern[0] == '*' && pattern[1] == '*';
	return segments_match(pattern, pattern_len, path, path_len);
}

/* ---- compiled sets ------------------------------------------------------------------------ */

#define NONE       UINT32_MAX
#define MAP_AT     8  /* literal children beyond this many are found through a hash */
#define MAX_ACTIVE 64 /* trie nodes a walk tracks at once; more: every pattern one by one */

struct dtl_globset_pattern {
	const char *text;
	uint32_t len;
	uint32_t next; /* the next (lower-index) pattern ending at the same node, or in fallback */
};

struct dtl_globset_node {
	uint32_t literal; /* chain of edges whose segment has no '*' */
	uint32_t wild;    /* chain of edges whose segment has a '*' (not '**') */
	uint32_t star2;   /* the node after a '**' segment, or NONE */
	uint32_t accept;  /* chain of patterns that end here */
	uint32_t literal_count;
	bool is_star2; /* reached through '**': it consumes any segment and stays */
	struct dtl_strmap *literal_map; /* segment -> edge, once literal_count > MAP_AT */
};

struct dtl_globset_edge {
	const char *segment;
	uint32_t len;
	uint32_t child;
	uint32_t next;
	uint32_t star; /* a wild segment's only '*' ("*_proj"), or NONE: two or more */
};

static void *grow_array(struct dtl_arena *arena, void *items, size_t *capacity, size_t item_size)
{
	size_t bigger = *capacity ? *capacity * 2 : 16;
	void *p = dtl_arena_realloc(arena, items, *capacity * item_size, bigger * item_size);

	if (p)
		*capacity = bigger;
	return p;
}

static uint32_t new_node(struct dtl_globset *set, bool is_star2)
{
	if (set->node_count == set->node_capacity) {
		void *p =
		    grow_array(set->arena, set->nodes, &set->node_capacity, sizeof(*set->nodes));
		if (!p)
			return NONE;
		set->nodes = p;
	}
	struct dtl_globset_node *n = &set->nodes[set->node_count];
	n->literal = n->wild = n->star2 = n->accept = NONE;
	n->literal_count = 0;
	n->is_star2 = is_star2;
	n->literal_map = NULL;
	return (uint32_t)set->node_count++;
}

void dtl_globset_init(struct dtl_globset *set, struct dtl_arena *arena)
{
	memset(set, 0, sizeof(*set));
	set->arena = arena;
	set->fallback = NONE;
}

static uint32_t find_literal(const struct dtl_globset *set, const struct dtl_globset_node *n,
                             const char *seg, size_t len)
{
	if (n->literal_map) {
		int64_t e = dtl_strmap_get(n->literal_map, seg, len);
		return e < 0 ? NONE : set->edges[e].child;
	}
	for (uint32_t e = n->literal; e != NONE; e = set->edges[e].next) {
		const struct dtl_globset_edge *edge = &set->edges[e];
		if (edge->len == len && (len == 0 || (edge->segment[0] == seg[0] &&
		                                      memcmp(edge->segment, seg, len) == 0)))
			return edge->child;
	}
	return NONE;
}

/* The child of node along segment (literal or wild), created when missing. */
static uint32_t child_for(struct dtl_globset *set, uint32_t node, const char *seg, size_t len)
{
	bool wild = memchr(seg, '*', len) != NULL;
	uint32_t child;

	if (!wild) {
		child = find_literal(set, &set->nodes[node], seg, len);
		if (child != NONE)
			return child;
	} else {
		for (uint32_t e = set->nodes[node].wild; e != NONE; e = set->edges[e].next)
			if (set->edges[e].len == len &&
			    memcmp(set->edges[e].segment, seg, len) == 0)
				return set->edges[e].child;
	}
	child = new_node(set, false);
	if (child == NONE)
		return NONE;
	if (set->edge_count == set->edge_capacity) {
		void *p =
		    grow_array(set->arena, set->edges, &set->edge_capacity, sizeof(*set->edges));
		if (!p)
			return NONE;
		set->edges = p;
	}
	uint32_t e = (uint32_t)set->edge_count++;
	struct dtl_globset_node *n = &set->nodes[node];
	set->edges[e].segment = seg;
	set->edges[e].len = (uint32_t)len;
	set->edges[e].child = child;
	set->edges[e].star = NONE;
	if (wild) {
		const char *star = memchr(seg, '*', len);
		if (!memchr(star + 1, '*', len - (size_t)(star + 1 - seg)))
			set->edges[e].star = (uint32_t)(star - seg);
		set->edges[e].next = n->wild;
		n->wild = e;
		return child;
	}
	set->edges[e].next = n->literal;
	n->literal = e;
	n->literal_count++;
	if (n->literal_count > MAP_AT) {
		if (!n->literal_map) {
			n->literal_map = dtl_arena_alloc(set->arena, sizeof(*n->literal_map));
			if (!n->literal_map)
				return NONE;
			dtl_strmap_init(n->literal_map, set->arena);
			for (uint32_t k = n->literal; k != NONE; k = set->edges[k].next)
				if (dtl_strmap_put(n->literal_map, set->edges[k].segment,
				                   set->edges[k].len, k) < 0)
					return NONE;
		} else if (dtl_strmap_put(n->literal_map, seg, len, e) < 0) {
			return NONE;
		}
	}
	return child;
}

/* A valid "**.<literal segments>" glob (at most 32 of them) goes to the suffix table: 1 when
 * it did, 0 when it is for the trie, -ENOMEM. Patterns with the same segments are chained. */
static int add_suffix(struct dtl_globset *set, uint32_t index)
{
	struct dtl_globset_pattern *p = &set->patterns[index];
	const char *rest = p->text + 3;
	size_t rest_len = p->len - 3, segments = 1;

	if (p->len < 4 || memcmp(p->text, "**.", 3) != 0 || memchr(rest, '*', rest_len))
		return 0;
	for (size_t i = 0; i < rest_len; i++)
		segments += rest[i] == '.';
	if (segments > 32)
		return 0;
	if (!set->suffixes) {
		set->suffixes = dtl_arena_alloc(set->arena, sizeof(*set->suffixes));
		if (!set->suffixes)
			return -ENOMEM;
		dtl_strmap_init(set->suffixes, set->arena);
	}
	int64_t first = dtl_strmap_put(set->suffixes, rest, rest_len, index);
	if (first < 0)
		return (int)first;
	p->next = NONE;
	if (first != index) { /* the same segments as an earlier glob: after it */
		p->next = set->patterns[first].next;
		set->patterns[first].next = index;
	}
	set->suffix_lengths |= UINT32_C(1) << (segments - 1);
	return 1;
}

int dtl_globset_add(struct dtl_globset *set, const char *pattern, size_t len)
{
	if (set->count >= NONE - 1 || len > UINT32_MAX)
		return -ENOMEM;
	if (set->count == set->pattern_capacity) {
		void *p = grow_array(set->arena, set->patterns, &set->pattern_capacity,
		                     sizeof(*set->patterns));
		if (!p)
			return -ENOMEM;
		set->patterns = p;
	}
	if (!set->node_count && new_node(set, false) == NONE)
		return -ENOMEM;
	uint32_t index = (uint32_t)set->count++;
	struct dtl_globset_pattern *p = &set->patterns[index];
	p->text = pattern;
	p->len = (uint32_t)len;

	if (dtl_glob_check(pattern, len) != NULL) {
		p->next = set->fallback;
		set->fallback = index;
		return 0;
	}
	int r = add_suffix(set, index);
	if (r != 0)
		return r < 0 ? r : 0;
	uint32_t node = 0;
	for (size_t start = 0; start <= len;) {
		size_t end = segment_end(pattern, start, len);
		if (end - start == 2 && pattern[start] == '*' && pattern[start + 1] == '*') {
			if (set->nodes[node].star2 == NONE) {
				uint32_t star = new_node(set, true);
				if (star == NONE)
					return -ENOMEM;
				set->nodes[node].star2 = star;
			}
			node = set->nodes[node].star2;
		} else {
			node = child_for(set, node, pattern + start, end - start);
			if (node == NONE)
				return -ENOMEM;
		}
		start = end + 1;
	}
	p->next = set->nodes[node].accept;
	set->nodes[node].accept = index;
	return 0;
}

/* The walk's current nodes, each with the nodes '**' reaches from it without a segment. */
struct walk {
	uint32_t node[MAX_ACTIVE];
	size_t count;
	bool overflow;
};

static void walk_add(const struct dtl_globset *set, struct walk *w, uint32_t node)
{
	while (node != NONE) {
		for (size_t k = 0; k < w->count; k++)
			if (w->node[k] == node)
				return;
		if (w->count == MAX_ACTIVE) {
			w->overflow = true;
			return;
		}
		w->node[w->count++] = node;
		node = set->nodes[node].star2; /* '**' may match no segment at all */
	}
}

/* Collects what matching reports: the lowest index, or the max lowest indices in order. */
struct found {
	int64_t first;
	size_t count;
	uint32_t *out;
	size_t max;
};

static void found_add(struct found *f, uint32_t index)
{
	if (f->first < 0 || index < f->first)
		f->first = index;
	if (f->out) {
		size_t k = f->count < f->max ? f->count : f->max;
		while (k > 0 && f->out[k - 1] > index) {
			if (k < f->max)
				f->out[k] = f->out[k - 1];
			k--;
		}
		if (k < f->max)
			f->out[k] = index;
	}
	f->count++;
}

static void match_one_by_one(const struct dtl_globset *set, uint32_t chain, bool every,
                             const char *path, size_t len, struct found *f)
{
	if (every) {
		for (size_t i = 0; i < set->count; i++)
			if (dtl_glob_match(set->patterns[i].text, set->patterns[i].len, path, len))
				found_add(f, (uint32_t)i);
		return;
	}
	for (uint32_t i = chain; i != NONE; i = set->patterns[i].next)
		if (dtl_glob_match(set->patterns[i].text, set->patterns[i].len, path, len))
			found_add(f, i);
}

static void walk_start(const struct dtl_globset *set, struct walk *w)
{
	w->count = 0;
	w->overflow = false;
	walk_add(set, w, 0);
}

/* next = where cur goes on one segment of the path; false when next overflowed. */
static bool walk_step(const struct dtl_globset *set, const struct walk *cur, struct walk *next,
                      const char *seg, size_t seg_len)
{
	next->count = 0;
	next->overflow = false;
	for (size_t k = 0; k < cur->count; k++) {
		const struct dtl_globset_node *n = &set->nodes[cur->node[k]];
		if (n->is_star2)
			walk_add(set, next, cur->node[k]);
		walk_add(set, next, find_literal(set, n, seg, seg_len));
		for (uint32_t e = n->wild; e != NONE; e = set->edges[e].next) {
			const struct dtl_globset_edge *edge = &set->edges[e];
			if (edge->star != NONE
			        ? one_star_match(edge->segment, edge->len, edge->star, seg, seg_len)
			        : segment_match(edge->segment, edge->len, seg, seg_len))
				walk_add(set, next, edge->child);
		}
	}
	return !next->overflow;
}

/* The suffix globs whose segments are these last ones of a path. */
static void suffix_lookup(const struct dtl_globset *set, const char *suffix, size_t len,
                          struct found *f)
{
	int64_t i = dtl_strmap_get(set->suffixes, suffix, len);

	for (; i >= 0 && (uint32_t)i != NONE; i = set->patterns[i].next)
		found_add(f, (uint32_t)i);
}

/* The suffix globs matching path: for each length in segments some glob has, its last that
 * many segments are looked up. Segment j of path ends at ends[j] for j < known: when those
 * are every dot (the last one is the end, or the last dot), the segments are not searched
 * for again. */
static void suffix_matches(const struct dtl_globset *set, const char *path, size_t len,
                           const uint32_t *ends, size_t known, struct found *f)
{
	size_t segments = 0; /* the path's, when all their ends are known */

	if (known && ends[known - 1] == len)
		segments = known;
	else if (known && ends[known - 1] < len &&
	         !memchr(path + ends[known - 1] + 1, '.', len - ends[known - 1] - 1))
		segments = known + 1;
	if (segments) {
		/* straight to each length some glob has */
		for (uint32_t lengths = set->suffix_lengths; lengths; lengths &= lengths - 1) {
			size_t m = (size_t)__builtin_ctz(lengths) + 1;
			if (m > segments)
				return; /* the path has fewer segments */
			size_t from = m < segments ? ends[segments - m - 1] + 1 : 0;
			suffix_lookup(set, path + from, len - from, f);
		}
		return;
	}
	size_t before = len; /* the dots searched for are before this */
	for (uint32_t lengths = set->suffix_lengths; lengths; lengths >>= 1) {
		const char *dot = before ? memrchr(path, '.', before) : NULL;
		size_t from = dot ? (size_t)(dot - path) + 1 : 0;
		if (lengths & 1)
			suffix_lookup(set, path + from, len - from, f);
		if (!dot)
			return; /* the path has no more segments */
		before = (size_t)(dot - path);
	}
}

/* What a walk that consumed the whole path reports: its nodes' patterns, then the invalid
 * globs. */
static void accept(const struct dtl_globset *set, const struct walk *cur, const char *path,
                   size_t len, const uint32_t *ends, size_t known, struct found *f)
{
	for (size_t k = 0; k < cur->count; k++)
		for (uint32_t i = set->nodes[cur->node[k]].accept; i != NONE;
		     i = set->patterns[i].next)
			found_add(f, i);
	if (set->fallback != NONE)
		match_one_by_one(set, set->fallback, false, path, len, f);
	if (set->suffix_lengths)
		suffix_matches(set, path, len, ends, known, f);
}

size_t dtl_common_prefix(const char *a, const char *b, size_t n)
{
	size_t k = 0;

	/* eight bytes at a time; on a little-endian machine the first differing byte of a word
	 * is its lowest set bit's */
	for (; k + 8 <= n; k += 8) {
		uint64_t x, y;
		memcpy(&x, a + k, 8);
		memcpy(&y, b + k, 8);
		if (x != y) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return k + (size_t)__builtin_ctzll(x ^ y) / 8;
#else
			break;
#endif
		}
	}
	while (k < n && a[k] == b[k])
		k++;
	return k;
}

size_t dtl_path_shared_segments(const char *prev, size_t prev_len, const uint32_t *ends,
                                size_t count, const char *path, size_t len)
{
	size_t shorter = prev_len < len ? prev_len : len, common, k = count;

	/* only the first count segments can be shared: their bytes are all to compare (a walk
	 * that died after a few segments compares only those) */
	if (count == 0)
		return 0;
	if (ends[count - 1] < shorter)
		shorter = ends[count - 1];
	common = dtl_common_prefix(prev, path, shorter);
	/* a segment of prev that ends before common ends at a '.' both paths have; the one
	 * ending at common is shared when path ends it there too */
	while (k > 0 && ends[k - 1] > common)
		k--;
	if (k > 0 && ends[k - 1] == common && common != len && path[common] != '.')
		k--;
	return k;
}

/* Cursors ---------------------------------------------------------------------------------- */

#define CURSOR_DEPTH 16 /* segments whose walks a cursor keeps */

struct dtl_globset_cursor {
	const struct dtl_globset *set;
	const char *path; /* the previous path (borrowed), NULL when none */
	size_t len;
	size_t depth;                        /* walks[0..depth] are valid for path */
	bool exhausted;                      /* the last walk came to nothing, no fallback */
	uint32_t seg_end[CURSOR_DEPTH];      /* [j]: where path's segment j ends (j >= 0) */
	struct walk walks[CURSOR_DEPTH + 1]; /* [j]: the walk after j segments of path */
	struct walk spare[2];                /* past CURSOR_DEPTH segments */
};

struct dtl_globset_cursor *dtl_globset_cursor_new(const struct dtl_globset *set,
                                                  struct dtl_arena *arena)
{
	struct dtl_globset_cursor *c = dtl_arena_alloc(arena, sizeof(*c));

	if (!c)
		return NULL;
	c->set = set;
	return c;
}

/* shared: how many leading segments path has in common with the previous path, or
 * UNKNOWN_SHARED; ends[j]: where segment j of path ends, for j < known. */
#define UNKNOWN_SHARED SIZE_MAX
static void cursor_match(struct dtl_globset_cursor *c, const char *path, size_t len, size_t shared,
                         const uint32_t *ends, size_t known, struct found *f)
{
	const struct dtl_globset *set = c->set;
	size_t k = 0;

	c->exhausted = false;
	if (len == 0 || !set->node_count) {
		c->path = NULL;
		c->exhausted = set->count == 0;
		match_one_by_one(set, NONE, true, path, len, f);
		return;
	}
	/* the previous path's walks stay valid for the segments both paths share */
	if (!c->path)
		walk_start(set, &c->walks[0]);
	else if (shared != UNKNOWN_SHARED)
		k = shared < c->depth ? shared : c->depth;
	else
		k = dtl_path_shared_segments(c->path, c->len, c->seg_end, c->depth, path, len);
	c->path = path;
	c->len = len;
	const struct walk *cur = &c->walks[k];
	size_t start = k ? c->seg_end[k - 1] + 1 : 0;
	while (start <= len && cur->count) {
		size_t end = k < known ? ends[k] : segment_end(path, start, len);
		struct walk *next = k < CURSOR_DEPTH ? &c->walks[k + 1] : &c->spare[k % 2];
		if (!walk_step(set, cur, next, path + start, end - start)) {
			c->path = NULL;
			match_one_by_one(set, NONE, true, path, len, f);
			return;
		}
		if (k < CURSOR_DEPTH)
			c->seg_end[k] = (uint32_t)end;
		k++;
		cur = next;
		start = end + 1;
	}
	c->depth = k < CURSOR_DEPTH ? k : CURSOR_DEPTH;
	/* an empty walk stays empty, whatever segments follow (and no suffix glob is left) */
	c->exhausted = cur->count == 0 && set->fallback == NONE && !set->suffix_lengths;
	accept(set, cur, path, len, ends, known, f);
}

bool dtl_globset_cursor_exhausted(const struct dtl_globset_cursor *c)
{
	return c->exhausted;
}

int64_t dtl_globset_cursor_first(struct dtl_globset_cursor *c, const char *path, size_t len)
{
	struct found f = {.first = -1};

	cursor_match(c, path, len, UNKNOWN_SHARED, NULL, 0, &f);
	return f.first;
}

size_t dtl_globset_cursor_matches(struct dtl_globset_cursor *c, const char *path, size_t len,
                                  uint32_t *out, size_t max)
{
	struct found f = {.first = -1, .out = out, .max = max};

	cursor_match(c, path, len, UNKNOWN_SHARED, NULL, 0, &f);
	return f.count;
}

size_t dtl_globset_cursor_matches_known(struct dtl_globset_cursor *c, const char *path, size_t len,
                                        const struct dtl_path_known *known, uint32_t *out,
                                        size_t max)
{
	struct found f = {.first = -1, .out = out, .max = max};

	cursor_match(c, path, len, known->shared, known->ends, known->count, &f);
	return f.count;
}

int64_t dtl_globset_cursor_first_known(struct dtl_globset_cursor *c, const char *path, size_t len,
                                       const struct dtl_path_known *known)
{
	struct found f = {.first = -1};

	cursor_match(c, path, len, known->shared, known->ends, known->count, &f);
	return f.first;
}

/* A fresh cursor: the walk from the root, nothing to reuse. */
static void match(const struct dtl_globset *set, const char *path, size_t len, struct found *f)
{
	struct dtl_globset_cursor c = {.set = set};

	cursor_match(&c, path, len, UNKNOWN_SHARED, NULL, 0, f);
}

int64_t dtl_globset_first(const struct dtl_globset *set, const char *path, size_t len)
{
	struct found f = {.first = -1};

	match(set, path, len, &f);
	return f.first;
}

size_t dtl_globset_matches(const struct dtl_globset *set, const char *path, size_t len,
                           uint32_t *out, size_t max)
{
	struct found f = {.first = -1, .out = out, .max = max};

	match(set, path, len, &f);
	return f.count;
}
