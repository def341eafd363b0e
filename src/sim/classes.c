/* SPDX-License-Identifier: MIT */
/* Module classes: which class each module of the tree is, from the manifest's path globs. */
#include <errno.h>

#include "dtypelint/core/glob.h"
#include "sim-private.h"

int dtl_sim_assign_classes(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_model_info *model = &sim->manifest->model;
	const struct dtl_profile *profile = sim->model.profile;
	size_t profile_count = profile ? profile->module_count : 0;
	struct dtl_globset set;

	(void)error;
	/* the first matching model.modules glob wins, in the manifest's order; then the
	 * architecture profile's (a manifest's own model keys override the profile): one set,
	 * the manifest's globs first, matched once per module (glob.h) */
	if (model->module_count + profile_count == 0)
		return 0;
	dtl_globset_init(&set, sim->arena);
	for (size_t g = 0; g < model->module_count; g++)
		if (dtl_globset_add(&set, model->modules[g].glob.text, model->modules[g].glob.len) <
		    0)
			return -ENOMEM;
	for (size_t g = 0; g < profile_count; g++)
		if (dtl_globset_add(&set, profile->modules[g].glob.text,
		                    profile->modules[g].glob.len) < 0)
			return -ENOMEM;
	struct dtl_module_match match;
	if (dtl_module_match_init(&match, sim, &set) < 0)
		return -ENOMEM;
	for (size_t mod = 0; mod < sim->module_count; mod++) {
		struct dtl_module *md = &sim->modules[mod];
		int64_t first = dtl_module_match_first(&match, sim, (uint32_t)mod);
		if (first < 0)
			continue;
		md->class_name = (size_t)first < model->module_count
		                     ? model->modules[first].value
		                     : profile->modules[(size_t)first - model->module_count].value;
	}
	return 0;
}
