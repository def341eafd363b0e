/* SPDX-License-Identifier: MIT */
/* DT601 pattern-unused: a keep-in-fp32, frozen or router pattern matches nothing. */
#include <errno.h>
#include <string.h>

#include "rule-check.h"
#include "dtypelint/core/glob.h"
#include "glob-cursor.h"
#include "keep-set.h"

static int unused(struct dtl_check *c, const struct dtl_pattern *p, const char *what)
{
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, p->loc, "%s pattern '%s' matches no tensor", what, p->text);
	if (!f)
		return -ENOMEM;
	f->effect = "the pattern does nothing; a typo here silently disables a pin or a freeze";
	f->fix = "correct the pattern (keep-in-fp32 entries are matched as transformers does, "
	         "not as globs) or remove it";
	return 0;
}

/* DT601 for the frozen globs: one walk of the tensors through a compiled set marks every
 * pattern that matches something (glob.h), instead of a scan of the tensors per pattern. */
static int dt601_frozen(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_patterns *frozen = &sim->manifest->frozen;
	struct dtl_globset set;
	size_t unmatched = 0;
	int r;

	if (frozen->count == 0)
		return 0;
	/* the declared tensors were matched when the table was built */
	bool *hit = dtl_arena_calloc(c->arena, frozen->count, sizeof(*hit));
	uint32_t *matched = dtl_arena_calloc(c->arena, frozen->count, sizeof(*matched));
	if (!hit || !matched)
		return -ENOMEM;
	for (size_t k = 0; k < frozen->count; k++)
		unmatched += !(hit[k] = sim->frozen_hit[k]);
	/* and the tensors the simulation added since (tied names, adapters) here */
	if (unmatched && sim->frozen_scanned < sim->t.count) {
		dtl_globset_init(&set, c->arena);
		for (size_t k = 0; k < frozen->count; k++)
			if (dtl_globset_add(&set, frozen->items[k].text, frozen->items[k].len) < 0)
				return -ENOMEM;
		struct dtl_globset_cursor *cursor = dtl_globset_cursor_new(&set, c->arena);
		if (!cursor)
			return -ENOMEM;
		for (size_t t = sim->frozen_scanned; t < sim->t.count && unmatched > 0; t++) {
			size_t n = dtl_globset_cursor_matches(
			    cursor, sim->t.name[t], sim->t.name_len[t], matched, frozen->count);
			for (size_t i = 0; i < n && i < frozen->count; i++)
				if (!hit[matched[i]]) {
					hit[matched[i]] = true;
					unmatched--;
				}
		}
	}
	for (size_t k = 0; k < frozen->count; k++)
		if (!hit[k] && (r = unused(c, &frozen->items[k], "frozen")) < 0)
			return r;
	return 0;
}

/* Tells the keep set every segment of every tensor name (dtl_keep_possible_add) until no entry
 * is left, through the module tree: a name is its module's path, a '.', and its leaf, and a
 * module's path its parent's, a '.', and its last segment, so each segment is read once per
 * module where the names would be read whole. Modules come in the order of the tensors that
 * made them, so that entries matching early names are settled early; every module is a
 * tensor's or an ancestor of one (and numbered before it), so none is left out. */
static void tell_segments(const struct dtl_sim *sim, const struct dtl_keep_set *set,
                          struct dtl_keep_possible *p)
{
	size_t next = 1;         /* the next module to tell (0 is the root: no segment) */
	const char *leaf = NULL; /* the last leaf told: most are the one before ("weight") */
	size_t leaf_len = 0;

	for (size_t t = 0; t < sim->t.count && p->left; t++) {
		uint32_t mod = sim->t.module[t];
		for (; next <= mod && p->left; next++) {
			const struct dtl_module *md = &sim->modules[next];
			uint32_t start =
			    md->parent == 0 ? 0 : sim->modules[md->parent].path_len + 1;
			dtl_keep_possible_add(p, set, md->path + start, md->path_len - start);
		}
		size_t start = mod == 0 ? 0 : sim->modules[mod].path_len + 1;
		const char *text = sim->t.name[t] + start;
		size_t len = sim->t.name_len[t] - start;
		if (leaf && len == leaf_len && memcmp(text, leaf, len) == 0)
			continue;
		dtl_keep_possible_add(p, set, text, len);
		leaf = text;
		leaf_len = len;
	}
}

/* DT601 for the manifest's routers: every module is matched once against the set of them,
 * marking the globs it matches, until none is left unmarked (a scan of the modules per glob
 * took 15 s for 8,000 globs that match nothing). */
static int dt601_routers(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_patterns *routers = &sim->manifest->model.routers;
	size_t n = routers->count, left = n;
	struct dtl_globset set;
	int r;

	if (n == 0)
		return 0;
	bool *hit = dtl_arena_calloc(c->arena, n, sizeof(bool));
	uint32_t *matched = dtl_arena_calloc(c->arena, n, sizeof(uint32_t));
	if (!hit || !matched)
		return -ENOMEM;
	dtl_globset_init(&set, c->arena);
	for (size_t k = 0; k < n; k++)
		if (dtl_globset_add(&set, routers->items[k].text, routers->items[k].len) < 0)
			return -ENOMEM;
	struct dtl_globset_cursor *cursor = dtl_globset_cursor_new(&set, c->arena);
	if (!cursor)
		return -ENOMEM;
	for (size_t mod = 0; mod < sim->module_count && left; mod++) {
		const struct dtl_module *md = &sim->modules[mod];
		size_t count =
		    dtl_globset_cursor_matches(cursor, md->path, md->path_len, matched, n);
		for (size_t j = 0; j < count; j++)
			if (!hit[matched[j]]) {
				hit[matched[j]] = true;
				left--;
			}
	}
	for (size_t k = 0; k < n; k++)
		if (!hit[k] && (r = unused(c, &routers->items[k], "routers")) < 0)
			return r;
	return 0;
}

/* DT601 — a pattern the user wrote that matches nothing. */
static int dt601_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	/* the manifest's own lists: when given, they are the ones the simulation compiled
	 * (dtl_sim_resolve_model prefers them to the profile's) */
	const struct dtl_keep_set *sets[] = {sim->model.keep_set, sim->model.strict_set};
	const bool own[] = {!sim->model.keep_from_profile, !sim->model.strict_from_profile};
	const char *names[] = {"keep_in_fp32", "keep_in_fp32_strict"};
	int r;

	for (size_t l = 0; l < 2; l++) {
		uint32_t *first;
		if (!own[l] || sets[l]->entry_count == 0)
			continue;
		struct dtl_keep_possible possible;
		first = dtl_arena_calloc(c->arena, sets[l]->entry_count, sizeof(uint32_t));
		if (!first || dtl_keep_possible_init(&possible, sets[l], c->arena) < 0)
			return -ENOMEM;
		/* an entry whose key is in no segment is settled without reading the names: the
		 * scan below stops once the others have matched */
		tell_segments(sim, sets[l], &possible);
		if ((r = dtl_keep_set_any(sets[l], (const char *const *)sim->t.name,
		                          sim->t.name_len, sim->t.count, possible.possible,
		                          first)) < 0)
			return r;
		for (size_t k = 0; k < sets[l]->entry_count; k++)
			if (first[k] == DTL_NONE_INDEX &&
			    (r = unused(c, &sets[l]->entries[k], names[l])) < 0)
				return r;
	}
	if ((r = dt601_frozen(c)) < 0)
		return r;
	return dt601_routers(c);
}

DTL_RULE(dt601) = {
    .id = "DT601",
    .name = "pattern-unused",
    .severity = DTL_SEVERITY_WARNING,
    .summary = "a keep-in-fp32, frozen or router pattern of the manifest matches nothing",
    .explanation =
        "A pattern that matches no tensor does nothing, and a typo in a keep-in-fp32 entry "
        "silently un-pins what it was meant to pin. keep-in-fp32 entries are matched as the "
        "plan's transformers version matches them (one component up to ~4.50, a dot-bounded "
        "regex up to 4.5x, a substring in v5), frozen patterns as globs over tensor names, "
        "router patterns as globs over module paths. Profile defaults are not reported.",
    .example = "model: {keep_in_fp32_strict: [e_score_corection_bias]}",
    .fix = "Correct or remove the pattern.",
    .facts = "https://github.com/huggingface/transformers/blob/"
             "040ba146759afc625c77f49d04982bb54873995f/src/transformers/modeling_utils.py",
    .check = dt601_check,
};
