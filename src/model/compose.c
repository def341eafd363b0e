/* SPDX-License-Identifier: MIT */
/* Composing a manifest and its plan from the user's files (include/dtypelint/compose.h). */
#include <errno.h>
#include <sys/stat.h>

#include "dtypelint/compose.h"
#include "dtypelint/import.h"
#include "load.h"

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int dtl_compose(const struct dtl_compose_inputs *in, struct dtl_arena *arena,
                const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                struct dtl_error *error)
{
	struct dtl_manifest manifest;
	int r;

	/* the paths the user typed: a link among them must stay inside the tree (source.h) */
	const char *typed[] = {in->input,           in->plan_file, in->deepspeed_file,
	                       in->accelerate_file, in->peft_file, in->trainer_args_file,
	                       in->framework_file};
	for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++)
		if (typed[i] &&
		    (r = dtl_confine_check(typed[i], NULL, (struct dtl_loc){0}, error)) < 0)
			return r;
	if (in->input_source)
		r = dtl_manifest_load_source(in->input_source, arena, limits, &manifest, error);
	else if (is_dir(in->input))
		r = dtl_import_hf_folder(in->input, arena, limits, &manifest, error);
	else
		r = dtl_manifest_load(in->input, arena, limits, &manifest, error);
	if (r < 0)
		return r;
	if (in->plan_file) {
		/* DESIGN §3: a --plan file replaces the manifest's training section */
		struct dtl_plan plan;
		dtl_plan_init(&plan);
		r = dtl_plan_load(in->plan_file, arena, limits, &plan, error);
		if (r < 0)
			return r;
		manifest.plan = plan;
		manifest.has_training = true;
	}
	/* later sources override the fields they set: --deepspeed, --accelerate, --trainer-args,
	 * --framework-config */
	if (in->deepspeed_file && (r = dtl_import_deepspeed(in->deepspeed_file, arena, limits,
	                                                    &manifest.plan, error)) < 0)
		return r;
	if (in->accelerate_file && (r = dtl_import_accelerate(in->accelerate_file, arena, limits,
	                                                      &manifest.plan, error)) < 0)
		return r;
	if (in->trainer_args_file && (r = dtl_import_trainer_args(in->trainer_args_file, arena,
	                                                          limits, &manifest, error)) < 0)
		return r;
	if (in->framework_file &&
	    (r = dtl_import_framework_config(in->framework_file, in->framework_overrides,
	                                     in->framework_override_count, arena, limits, &manifest,
	                                     error)) < 0)
		return r;
	if (in->peft_file) {
		const char *base = NULL;
		r = dtl_import_peft(in->peft_file, arena, limits, &manifest.adapter, &base, error);
		if (r < 0)
			return r;
		if (!manifest.model.name && base)
			manifest.model.name = base;
	}
	*ret_manifest = manifest;
	return 0;
}
