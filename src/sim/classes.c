/* SPDX-License-Identifier: MIT */
/* Module classes: which class each module of the tree is, from the manifest's path globs. */
#include "dtypelint/glob.h"
#include "sim-private.h"

int dtl_sim_assign_classes(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_model_info *model = &sim->manifest->model;

	(void)error;
	const struct dtl_profile *profile = sim->model.profile;

	/* the first matching model.modules glob wins, in the manifest's order; then the
	 * architecture profile's (a manifest's own model keys override the profile) */
	for (size_t mod = 0; mod < sim->module_count; mod++) {
		struct dtl_module *md = &sim->modules[mod];
		for (size_t g = 0; g < model->module_count && !md->class_name; g++)
			if (dtl_glob_match(model->modules[g].glob.text, model->modules[g].glob.len,
					   md->path, md->path_len))
				md->class_name = model->modules[g].value;
		for (size_t g = 0; profile && g < profile->module_count && !md->class_name; g++)
			if (dtl_glob_match(profile->modules[g].glob.text,
					   profile->modules[g].glob.len, md->path, md->path_len))
				md->class_name = profile->modules[g].value;
	}
	return 0;
}
