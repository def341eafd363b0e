/* SPDX-License-Identifier: MIT */
/*
 * The model view: the manifest's model keys, else the architecture profile's (docs/design.md §3 and
 * rules/architectures/README.md), and the router modules — from the manifest, the profile, or
 * a heuristic when neither names them.
 */
#include <errno.h>
#include <string.h>

#include "dtypelint/core/glob.h"
#include "sim-private.h"

static const struct dtl_patterns *pick(const struct dtl_patterns *manifest,
                                       const struct dtl_patterns *profile, bool *ret_from_profile)
{
	*ret_from_profile = !manifest->present && profile && profile->present;
	return *ret_from_profile ? profile : manifest;
}

int dtl_sim_resolve_model(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_model_info *m = &sim->manifest->model;
	struct dtl_model_view *v = &sim->model;
	struct dtl_profiles profiles;
	int r;

	if (m->architecture) {
		r = dtl_profiles_load(&profiles, m->architecture, sim->arena, error);
		if (r < 0)
			return r;
		v->profile = dtl_profiles_find(&profiles, m->architecture);
	}
	const struct dtl_profile *p = v->profile;
	v->keep_in_fp32 =
	    *pick(&m->keep_in_fp32, p ? &p->keep_in_fp32 : NULL, &v->keep_from_profile);
	v->keep_in_fp32_strict = *pick(&m->keep_in_fp32_strict, p ? &p->keep_in_fp32_strict : NULL,
	                               &v->strict_from_profile);
	v->no_split_modules =
	    *pick(&m->no_split_modules, p ? &p->no_split_modules : NULL, &v->no_split_from_profile);
	return 0;
}

static bool segment_is(const char *path, uint32_t len, const char *name)
{
	size_t n = strlen(name);
	return len >= n && memcmp(path + len - n, name, n) == 0 &&
	       (len == n || path[len - n - 1] == '.');
}

/* A module named gate or router whose parent also holds an "experts" module. */
static bool looks_like_router(const struct dtl_sim *sim, const struct dtl_module *md)
{
	if (md->parent == DTL_NONE_INDEX)
		return false;
	if (!segment_is(md->path, md->path_len, "gate") &&
	    !segment_is(md->path, md->path_len, "router"))
		return false;
	const struct dtl_module *parent = &sim->modules[md->parent];
	for (uint32_t c = parent->first_child; c != DTL_NONE_INDEX;
	     c = sim->modules[c].next_sibling)
		if (segment_is(sim->modules[c].path, sim->modules[c].path_len, "experts"))
			return true;
	return false;
}

static int add_rule(struct dtl_sim *sim, struct dtl_vec *rules, struct dtl_pattern path,
                    bool upcasts, int origin)
{
	struct dtl_router_rule *rule = dtl_vec_push(rules, sim->arena, sizeof(*rule));
	if (!rule)
		return -ENOMEM;
	rule->path = path;
	rule->upcasts = upcasts;
	rule->origin = origin;
	return 0;
}

/* Flags the parameters owned by router modules (DTL_TF_ROUTER). */
int dtl_sim_find_routers(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_model_info *m = &sim->manifest->model;
	const struct dtl_profile *p = sim->model.profile;
	struct dtl_vec rules = {0};
	int r = 0;

	(void)error;
	if (m->routers.present) {
		/* a manifest says nothing of the router's forward: assume it does not upcast */
		for (size_t i = 0; i < m->routers.count && r >= 0; i++)
			r = add_rule(sim, &rules, m->routers.items[i], false, DTL_FROM_MANIFEST);
	} else if (p) {
		for (size_t i = 0; i < p->router_count && r >= 0; i++)
			r = add_rule(sim, &rules, p->routers[i].path, p->routers[i].upcasts,
			             DTL_FROM_PROFILE);
	}
	if (r < 0)
		return r;
	/* without manifest routers or a profile, every module is judged by its name (decided
	 * once: the rules the heuristic adds are not a reason to stop looking) */
	bool heuristic = !m->routers.present && !p;
	/* the rules as one compiled set, walked module after module (glob.h) */
	struct dtl_globset set;
	struct dtl_module_match match;
	const struct dtl_router_rule *rr = rules.items;
	dtl_globset_init(&set, sim->arena);
	for (size_t i = 0; i < rules.count; i++)
		if (dtl_globset_add(&set, rr[i].path.text, rr[i].path.len) < 0)
			return -ENOMEM;
	uint32_t *router_of = dtl_arena_alloc(sim->arena, sim->module_count * sizeof(uint32_t));
	if (!router_of || dtl_module_match_init(&match, sim, &set) < 0)
		return -ENOMEM;
	router_of[0] = DTL_NONE_INDEX;
	for (size_t mod = 1; mod < sim->module_count; mod++) {
		const struct dtl_module *md = &sim->modules[mod];
		int64_t first = -1;
		if (!heuristic) {
			first = dtl_module_match_first(&match, sim, (uint32_t)mod);
		} else if (looks_like_router(sim, md)) {
			/* its own path: no earlier rule (another module's path) covers it */
			struct dtl_pattern path = {.text = md->path, .len = md->path_len};
			first = (int64_t)rules.count;
			r = add_rule(sim, &rules, path, false, DTL_FROM_HEURISTIC);
			if (r < 0)
				return r;
		}
		router_of[mod] = first < 0 ? DTL_NONE_INDEX : (uint32_t)first;
		if (first < 0)
			continue;
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t])
			if (sim->t.kind[t] == DTL_KIND_PARAM)
				sim->t.flags[t] |= DTL_TF_ROUTER;
	}
	sim->model.routers = rules.items;
	sim->model.router_count = rules.count;
	sim->model.router_of = router_of;
	return 0;
}

/* The router rule covering a module, or NULL. */
const struct dtl_router_rule *dtl_sim_router_rule(const struct dtl_sim *sim, uint32_t module)
{
	uint32_t i = sim->model.router_of ? sim->model.router_of[module] : DTL_NONE_INDEX;

	return i == DTL_NONE_INDEX ? NULL : &sim->model.routers[i];
}
