/* SPDX-License-Identifier: MIT */
/*
 * How transformers matches keep-in-fp32 entries (rules/versions.yaml: transformers-keep-match-*,
 * transformers-keep-in-fp32-strict, with their upstream sources).
 * - <= ~4.50: `any(m in name.split(".") for m in keep)`: one whole component.
 * - ~4.51-4.5x: `re.compile("|".join(rf"((^|\.){m}($|\.))" ...)).search(name)`: dot-bounded,
 *   unescaped, so '.' in an entry matches any character and an entry may span components.
 * - v5: `build_glob_alternation(...)` then `.search(key)`: no boundaries, '*' -> '.*', nothing
 *   escaped: "norm" hits "q_norm" and "input_layernorm".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "dtypelint/core/glob.h"
#include "dtypelint/model/keep-fp32.h"
#include "glob-cursor.h"
#include "keep-set.h"

/* Does pattern, '.' any byte and nothing else special, match name[start..] and end where a
 * component ends? O(pattern) per start. */
static bool dotted_at(const char *p, size_t pl, const char *s, size_t sl, size_t start)
{
	if (sl - start < pl)
		return false;
	for (size_t i = 0; i < pl; i++)
		if (p[i] != '.' && p[i] != s[start + i])
			return false;
	return start + pl == sl || s[start + pl] == '.';
}

/*
 * Does pattern, '*' any run and '.' any byte, occur anywhere in name (a regular expression
 * search with '.*' for '*')? That is "*" pattern "*" matching all of name: the greedy
 * wildcard algorithm, which on a mismatch lets the last '*' (at first the leading one) take
 * one more byte. O(len(pattern) x len(name)); trying every split at every '*' (as this did)
 * took exponential time: "*a*a*a*a*b" against 300 bytes did not finish in a minute.
 */
static bool wild_search(const char *p, size_t pl, const char *s, size_t sl)
{
	size_t pi = 0, si = 0, star_p = 0, star_s = 0;

	while (si < sl) {
		if (pi == pl)
			return true; /* the rest of name is the trailing '*' */
		if (p[pi] == '*') {
			star_p = ++pi;
			star_s = si;
		} else if (p[pi] == '.' || p[pi] == s[si]) {
			pi++;
			si++;
		} else {
			pi = star_p;
			si = ++star_s;
		}
	}
	while (pi < pl && p[pi] == '*')
		pi++;
	return pi == pl;
}

bool dtl_keep_match(enum dtl_keep_matcher matcher, const char *pattern, size_t pattern_len,
                    const char *name, size_t name_len)
{
	switch (matcher) {
	case DTL_KEEP_COMPONENT: {
		size_t start = 0;
		for (size_t i = 0; i <= name_len; i++) {
			if (i < name_len && name[i] != '.')
				continue;
			if (i - start == pattern_len &&
			    memcmp(name + start, pattern, pattern_len) == 0)
				return true;
			start = i + 1;
		}
		return false;
	}
	case DTL_KEEP_DOT_REGEX:
		for (size_t s = 0; s <= name_len; s++)
			if ((s == 0 || name[s - 1] == '.') &&
			    dotted_at(pattern, pattern_len, name, name_len, s))
				return true;
		return false;
	case DTL_KEEP_SUBSTRING:
		return wild_search(pattern, pattern_len, name, name_len);
	}
	return false;
}

const char *dtl_keep_matcher_description(enum dtl_keep_matcher matcher)
{
	switch (matcher) {
	case DTL_KEEP_COMPONENT:
		return "one whole dot-separated component";
	case DTL_KEEP_DOT_REGEX:
		return "a dot-bounded, unescaped regular expression";
	case DTL_KEEP_SUBSTRING:
		return "an unanchored substring";
	}
	return "?";
}

/* Compiled sets ---------------------------------------------------------------------------- */

#define NONE UINT32_MAX

static bool is_literal(enum dtl_keep_matcher matcher, char c)
{
	switch (matcher) {
	case DTL_KEEP_COMPONENT:
		return true;
	case DTL_KEEP_DOT_REGEX:
		return c != '.';
	case DTL_KEEP_SUBSTRING:
		return c != '.' && c != '*';
	}
	return false;
}

static uint32_t child_of(const struct dtl_keep_set *set, uint32_t node, uint8_t c)
{
	if (node == 0)
		return set->root[c];
	for (uint32_t k = set->child[node]; k; k = set->sibling[k])
		if (set->byte[k] == c)
			return k;
	return 0;
}

/* The automaton's next state: the child on c, else the same from the fail link (amortized
 * O(1) a byte over a scan: each fail link taken is a byte of depth given back). */
static uint32_t step(const struct dtl_keep_set *set, uint32_t state, uint8_t c)
{
	for (;;) {
		uint32_t next = child_of(set, state, c);
		if (next || state == 0)
			return next;
		state = set->fail[state];
	}
}

/* The node of text[0..len) in the trie, added when missing. */
static uint32_t insert(struct dtl_keep_set *set, const char *text, uint32_t len)
{
	uint32_t node = 0;
	for (uint32_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)text[i];
		uint32_t next = child_of(set, node, c);
		if (!next) {
			next = set->node_count++;
			set->byte[next] = c;
			if (node == 0) {
				set->root[c] = next;
			} else {
				set->sibling[next] = set->child[node];
				set->child[node] = next;
			}
		}
		node = next;
	}
	return node;
}

/* Chains every keyed entry at its key's node (in reverse, so that the lowest index comes first
 * and dtl_keep_set_first can stop early) and links each node to the next one with entries on
 * its fail chain. */
static void link_keys(struct dtl_keep_set *set)
{
	for (uint32_t n = 0; n < set->node_count; n++)
		set->out[n] = NONE;
	for (uint32_t e = set->entry_count; e-- > 0;) {
		if (set->run_count[e] == 0)
			continue;
		uint32_t node = set->key[e];
		set->entry_next[e] = set->out[node];
		set->out[node] = e;
	}
	for (uint32_t k = 0; k < set->node_count - 1; k++) {
		uint32_t n = set->order[k], f = set->fail[n];
		set->dict[n] = set->out[f] != NONE ? f : set->dict[f];
		set->report[n] = set->out[n] != NONE ? n : set->dict[n];
	}
}

int dtl_keep_set_build(struct dtl_keep_set *set, enum dtl_keep_matcher matcher,
                       const struct dtl_pattern *entries, size_t count, struct dtl_arena *arena)
{
	size_t capacity = 1;

	memset(set, 0, sizeof(*set));
	set->matcher = matcher;
	set->entries = entries;
	if (count >= NONE)
		return -ENOMEM;
	set->entry_count = (uint32_t)count;
	for (size_t e = 0; e < count; e++)
		capacity += entries[e].len;
	if (capacity >= NONE)
		return -ENOMEM;
	set->child = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->sibling = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->byte = dtl_arena_calloc(arena, capacity, 1);
	set->fail = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->out = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->dict = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->report = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->order = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->runs = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->run_first = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	set->run_count = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	set->run_start = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->run_len = dtl_arena_calloc(arena, capacity, sizeof(uint32_t));
	set->key = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	set->key_start = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	set->key_len = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	set->fixed = dtl_arena_calloc(arena, count + 1, sizeof(bool));
	set->entry_next = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	set->verify = dtl_arena_calloc(arena, count + 1, sizeof(bool));
	set->unkeyed = dtl_arena_calloc(arena, count + 1, sizeof(uint32_t));
	if (!set->child || !set->sibling || !set->byte || !set->fail || !set->out || !set->dict ||
	    !set->report || !set->order || !set->runs || !set->run_start || !set->run_len ||
	    !set->run_first || !set->run_count || !set->key || !set->key_start || !set->key_len ||
	    !set->fixed || !set->entry_next || !set->verify || !set->unkeyed)
		return -ENOMEM;
	set->node_count = 1;

	/* every literal run of every entry goes in the trie; the key is the longest run until
	 * dtl_keep_set_tune picks the rarest */
	uint32_t run_total = 0;
	for (uint32_t e = 0; e < set->entry_count; e++) {
		const struct dtl_pattern *p = &entries[e];
		uint32_t longest = 0;
		set->run_first[e] = run_total;
		for (uint32_t i = 0; i < p->len;) {
			uint32_t j = i;
			while (j < p->len && is_literal(matcher, p->text[j]))
				j++;
			if (j > i) {
				uint32_t node = insert(set, p->text + i, j - i);
				if (j - i > longest) {
					longest = j - i;
					set->key[e] = node;
					set->key_start[e] = i;
					set->key_len[e] = j - i;
				}
				set->run_start[run_total] = i;
				set->run_len[run_total] = j - i;
				set->runs[run_total++] = node;
				set->run_count[e]++;
			}
			i = j + 1;
		}
		/* a SUBSTRING entry that is all literal matches wherever it occurs; every other
		 * hit is a candidate only */
		set->verify[e] = !(matcher == DTL_KEEP_SUBSTRING && longest == p->len && longest);
		/* where a key hit places the whole entry: every character but a SUBSTRING '*'
		 * matches one byte (a COMPONENT entry with a '.' matches nothing: left to
		 * dtl_keep_match) */
		set->fixed[e] =
		    matcher == DTL_KEEP_DOT_REGEX ||
		    memchr(p->text, matcher == DTL_KEEP_COMPONENT ? '.' : '*', p->len) == NULL;
		if (set->run_count[e] == 0)
			set->unkeyed[set->unkeyed_count++] = e;
	}

	/* no run holds a '.': no key does, whichever run dtl_keep_set_tune picks */
	set->dot_resets = true;
	for (uint32_t node = 1; node < set->node_count; node++)
		if (set->byte[node] == '.')
			set->dot_resets = false;

	/* failure links, breadth first; order[] keeps the order for link_keys */
	size_t head = 0, tail = 0;
	for (unsigned c = 0; c < 256; c++)
		if (set->root[c])
			set->order[tail++] = set->root[c]; /* fail 0 */
	while (head < tail) {
		uint32_t node = set->order[head++];
		for (uint32_t k = set->child[node]; k; k = set->sibling[k]) {
			set->fail[k] = step(set, set->fail[node], set->byte[k]);
			set->order[tail++] = k;
		}
	}
	link_keys(set);
	return 0;
}

int dtl_keep_set_tune(struct dtl_keep_set *set, const char *const *names, const uint32_t *name_lens,
                      size_t n)
{
	bool choice = false;
	for (uint32_t e = 0; e < set->entry_count && !choice; e++)
		choice = set->run_count[e] > 1;
	if (!choice)
		return 0;
	/* hits[node]: names in which the node's text occurs; seen[node] == i + 1: counted */
	size_t *hits = calloc(set->node_count, sizeof(size_t));
	size_t *seen = calloc(set->node_count, sizeof(size_t));
	bool *is_run = calloc(set->node_count, sizeof(bool));
	if (!hits || !seen || !is_run) {
		free(hits);
		free(seen);
		free(is_run);
		return -ENOMEM;
	}
	for (uint32_t r = 0;
	     r < set->run_first[set->entry_count - 1] + set->run_count[set->entry_count - 1]; r++)
		is_run[set->runs[r]] = true;
	/* a sample of the names, evenly spread, is enough to rank the runs (256: each name walks
	 * its fail chains, which miss the caches; 1,024 cost 1 % of a 100k run with 1,000 entries)
	 */
	size_t stride = n / 256 + 1;
	for (size_t i = 0; i < n; i += stride) {
		uint32_t state = 0;
		for (uint32_t k = 0; k < name_lens[i]; k++) {
			state = step(set, state, (uint8_t)names[i][k]);
			/* the state and its proper suffixes on the fail chain */
			for (uint32_t s = state; s && seen[s] != i + 1; s = set->fail[s]) {
				seen[s] = i + 1;
				hits[s] += is_run[s];
			}
		}
	}
	for (uint32_t e = 0; e < set->entry_count; e++)
		for (uint32_t r = set->run_first[e]; r < set->run_first[e] + set->run_count[e];
		     r++) {
			uint32_t node = set->runs[r];
			if (hits[node] < hits[set->key[e]]) {
				set->key[e] = node;
				set->key_start[e] = set->run_start[r];
				set->key_len[e] = set->run_len[r];
			}
		}
	free(hits);
	free(seen);
	free(is_run);
	link_keys(set);
	return 0;
}

/* Where a scan of one name stands: the next candidate entry comes from (node, entry) or, once
 * the name is consumed, from the unkeyed list. */
struct keep_scan {
	const char *name;
	size_t len, pos;
	uint32_t state, node, entry, unkeyed;
};

static void scan_start(struct keep_scan *s, const char *name, size_t len)
{
	*s = (struct keep_scan){.name = name, .len = len, .node = 0, .entry = NONE};
}

/* The next candidate (an entry whose key occurs in the name, ending before *hit_end, or an
 * unkeyed entry, *hit_end SIZE_MAX); an entry may come more than once. false at the end. */
static bool scan_next(const struct dtl_keep_set *set, struct keep_scan *s, uint32_t *entry,
                      size_t *hit_end)
{
	for (;;) {
		if (s->entry != NONE) {
			*entry = s->entry;
			*hit_end = s->pos;
			s->entry = set->entry_next[s->entry];
			return true;
		}
		if (s->node) {
			s->entry = set->out[s->node];
			s->node = set->dict[s->node];
			continue;
		}
		if (s->pos < s->len) {
			/* the hot loop: to the next byte that ends a key */
			const uint8_t *name = (const uint8_t *)s->name;
			size_t pos = s->pos, len = s->len;
			uint32_t state = s->state, node = 0;
			while (pos < len && !node) {
				state = step(set, state, name[pos++]);
				node = set->report[state];
			}
			s->pos = pos;
			s->state = state;
			s->node = node;
			continue;
		}
		if (s->unkeyed < set->unkeyed_count) {
			*entry = set->unkeyed[s->unkeyed++];
			*hit_end = SIZE_MAX;
			return true;
		}
		return false;
	}
}

/* dtl_keep_match() for an entry of fixed width placed at name[start..]. */
static bool match_at(enum dtl_keep_matcher matcher, const struct dtl_pattern *p, const char *name,
                     size_t len, size_t start)
{
	if (start + p->len > len)
		return false;
	for (uint32_t i = 0; i < p->len; i++)
		if (p->text[i] != name[start + i] &&
		    (matcher == DTL_KEEP_COMPONENT || p->text[i] != '.'))
			return false;
	if (matcher == DTL_KEEP_SUBSTRING)
		return true;
	return (start == 0 || name[start - 1] == '.') &&
	       (start + p->len == len || name[start + p->len] == '.');
}

/* Does the candidate match: at the place its key hit puts it when it has a fixed width,
 * else anywhere. */
static bool confirm(const struct dtl_keep_set *set, uint32_t e, const char *name, size_t len,
                    size_t hit_end)
{
	const struct dtl_pattern *p = &set->entries[e];
	size_t before = (size_t)set->key_start[e] + set->key_len[e];
	if (!set->verify[e])
		return true;
	if (hit_end != SIZE_MAX && set->fixed[e])
		return hit_end >= before && match_at(set->matcher, p, name, len, hit_end - before);
	return dtl_keep_match(set->matcher, p->text, p->len, name, len);
}

uint32_t dtl_keep_set_first(const struct dtl_keep_set *set, const char *name, size_t name_len)
{
	struct keep_scan s;
	uint32_t best = NONE, e;
	size_t hit_end;

	if (set->entry_count == 0)
		return NONE;
	scan_start(&s, name, name_len);
	while (scan_next(set, &s, &e, &hit_end))
		if (e < best && confirm(set, e, name, name_len, hit_end))
			best = e;
	return best;
}

int dtl_keep_set_count(const struct dtl_keep_set *set, const char *const *names,
                       const uint32_t *name_lens, size_t n, uint32_t *count, uint32_t *first)
{
	/* seen[e] == i + 1: entry e matched name i (a failed candidate may match elsewhere) */
	size_t *seen = calloc(set->entry_count + 1, sizeof(size_t));
	struct keep_scan s;
	uint32_t e;
	size_t hit_end;

	if (!seen)
		return -ENOMEM;
	for (uint32_t k = 0; k < set->entry_count; k++) {
		count[k] = 0;
		first[k] = NONE;
	}
	for (size_t i = 0; i < n; i++) {
		scan_start(&s, names[i], name_lens[i]);
		while (scan_next(set, &s, &e, &hit_end)) {
			if (seen[e] == i + 1 || !confirm(set, e, names[i], name_lens[i], hit_end))
				continue;
			seen[e] = i + 1;
			if (count[e]++ == 0)
				first[e] = (uint32_t)i;
		}
	}
	free(seen);
	return 0;
}

/* The any-only scan of dtl_keep_set_any. Names in a row share long prefixes (the tensors of
 * one module, of one expert, of one layer), and the automaton's state after a prefix depends
 * on that prefix alone: a name resumes where the name before it left its shared prefix, with
 * the states that name went through (state_at[k]: after k bytes) and the places where a key
 * ended in it (hit_at[]).
 *
 * A key hit inside the shared prefix was a candidate for the name before too. It is tried
 * again only when its confirmation can differ: an entry of fixed width placed by the hit
 * reads the bytes up to start + length (the dot after it included), so when that is before
 * the end of the shared prefix it reads the same bytes in both names and gives the same
 * answer, which was "no" (an entry that matched is settled). Entries matched anywhere (no
 * fixed width) are tried again. first[e] is the first name entry e matches, as with
 * dtl_keep_set_count. */
struct any_scan {
	const struct dtl_keep_set *set;
	uint32_t *first;
	uint32_t unmatched;
	uint32_t *state_at, *hit_at;
	size_t capacity, hit_count;
	size_t reach; /* the most bytes past a hit any entry reads (SIZE_MAX: unbounded) */
};

/* Confirms the entries keyed at the state's report chain for the name (index i), leaving
 * those that read only the first shared bytes (0: none). */
static void any_confirm(struct any_scan *a, uint32_t state, const char *name, size_t len,
                        size_t hit_end, uint32_t i, size_t shared)
{
	const struct dtl_keep_set *set = a->set;

	for (uint32_t node = set->report[state]; node; node = set->dict[node])
		for (uint32_t e = set->out[node]; e != NONE; e = set->entry_next[e]) {
			if (a->first[e] != NONE)
				continue;
			if (shared && set->fixed[e] &&
			    hit_end + (set->entries[e].len - set->key_start[e] - set->key_len[e]) <
			        shared)
				continue;
			if (confirm(set, e, name, len, hit_end)) {
				a->first[e] = i;
				a->unmatched--;
			}
		}
}

static int any_reserve(struct any_scan *a, size_t len)
{
	if (len + 1 <= a->capacity)
		return 0;
	size_t capacity = a->capacity ? a->capacity : 64;
	while (capacity < len + 1)
		capacity *= 2;
	uint32_t *state_at = realloc(a->state_at, capacity * sizeof(uint32_t));
	if (!state_at)
		return -ENOMEM;
	a->state_at = state_at;
	uint32_t *hit_at = realloc(a->hit_at, capacity * sizeof(uint32_t));
	if (!hit_at)
		return -ENOMEM;
	a->hit_at = hit_at;
	a->capacity = capacity;
	return 0;
}

static int any_scan_names(struct any_scan *a, const char *const *names, const uint32_t *name_lens,
                          size_t n)
{
	const struct dtl_keep_set *set = a->set;
	const char *prev = NULL;
	size_t prev_len = 0;

	for (size_t i = 0; i < n && a->unmatched; i++) {
		const uint8_t *name = (const uint8_t *)names[i];
		size_t len = name_lens[i], shared = 0, pos;
		int r;

		if ((r = any_reserve(a, len)) < 0)
			return r;
		if (prev) {
			shared = dtl_common_prefix(prev, names[i], prev_len < len ? prev_len : len);
			/* the hits inside the shared prefix stay; those that may differ are
			 * tried again */
			while (a->hit_count && a->hit_at[a->hit_count - 1] > shared)
				a->hit_count--;
			size_t h = a->hit_count;
			while (h && (a->reach == SIZE_MAX || a->hit_at[h - 1] + a->reach >= shared))
				h--;
			for (; h < a->hit_count; h++)
				any_confirm(a, a->state_at[a->hit_at[h]], names[i], len,
				            a->hit_at[h], (uint32_t)i, shared);
		} else {
			a->state_at[0] = 0;
			a->hit_count = 0;
		}
		pos = shared;
		uint32_t state = a->state_at[pos];
		while (pos < len) {
			state = step(set, state, name[pos++]);
			a->state_at[pos] = state;
			if (set->report[state]) {
				a->hit_at[a->hit_count++] = (uint32_t)pos;
				any_confirm(a, state, names[i], len, pos, (uint32_t)i, 0);
			}
		}
		for (uint32_t k = 0; k < set->unkeyed_count; k++) {
			uint32_t e = set->unkeyed[k];
			if (a->first[e] == NONE &&
			    dtl_keep_match(set->matcher, set->entries[e].text, set->entries[e].len,
			                   names[i], len)) {
				a->first[e] = (uint32_t)i;
				a->unmatched--;
			}
		}
		prev = names[i];
		prev_len = len;
	}
	return 0;
}

/* Segments added already, in a small table by their first bytes and length (the last one to
 * land in a slot stays): a model repeats its segments ("gate_proj" in every expert, the expert
 * numbers in every layer), and adding one again changes nothing. */
#define TOLD_BITS 10

struct dtl_keep_told {
	const char *text; /* NULL: an empty slot */
	size_t len;
	uint64_t head; /* dtl_bytes_short() of its first eight bytes at most */
};

int dtl_keep_possible_init(struct dtl_keep_possible *p, const struct dtl_keep_set *set,
                           struct dtl_arena *arena)
{
	p->possible = dtl_arena_calloc(arena, set->entry_count + 1, sizeof(bool));
	p->told = dtl_arena_calloc(arena, (size_t)1 << TOLD_BITS, sizeof(*p->told));
	if (!p->possible || !p->told)
		return -ENOMEM;
	p->left = 0;
	for (uint32_t e = 0; e < set->entry_count; e++) {
		p->possible[e] = !set->dot_resets || set->run_count[e] == 0;
		p->left += !p->possible[e];
	}
	return 0;
}

/* Was the segment added before? Else it is now remembered. Most segments are short: their
 * head is their bytes, and no call compares them. */
static bool told_before(struct dtl_keep_told *told, const char *text, size_t len)
{
	uint64_t head = dtl_bytes_short(text, len < 8 ? len : 8);
	struct dtl_keep_told *slot =
	    &told[((head ^ len) * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - TOLD_BITS)];

	if (slot->text && slot->len == len && slot->head == head &&
	    (len <= 8 || memcmp(slot->text + 8, text + 8, len - 8) == 0))
		return true;
	*slot = (struct dtl_keep_told){.text = text, .len = len, .head = head};
	return false;
}

void dtl_keep_possible_add(struct dtl_keep_possible *p, const struct dtl_keep_set *set,
                           const char *segment, size_t len)
{
	const uint8_t *text = (const uint8_t *)segment;
	uint32_t state = 0; /* from the root: a '.' before the segment led there */

	if (!p->left || told_before(p->told, segment, len))
		return;
	for (size_t i = 0; i < len; i++) {
		state = step(set, state, text[i]);
		for (uint32_t node = set->report[state]; node; node = set->dict[node])
			for (uint32_t e = set->out[node]; e != NONE; e = set->entry_next[e]) {
				p->left -= !p->possible[e];
				p->possible[e] = true;
			}
	}
}

int dtl_keep_set_any(const struct dtl_keep_set *set, const char *const *names,
                     const uint32_t *name_lens, size_t n, const bool *possible, uint32_t *first)
{
	struct any_scan a = {.set = set, .first = first, .unmatched = set->entry_count};
	int r;

	for (uint32_t e = 0; e < set->entry_count; e++) {
		size_t tail = set->entries[e].len - set->key_start[e] - set->key_len[e];
		first[e] = NONE;
		if (possible && !possible[e]) {
			a.unmatched--; /* its key occurs in no name: no hit ever tries it */
			continue;
		}
		if (!set->run_count[e])
			continue; /* unkeyed: tried on every name */
		if (set->verify[e] && !set->fixed[e])
			a.reach = SIZE_MAX;
		else if (a.reach < tail)
			a.reach = tail;
	}
	r = any_scan_names(&a, names, name_lens, n);
	free(a.state_at);
	free(a.hit_at);
	return r;
}
