/* SPDX-License-Identifier: MIT */
/* Composing a manifest and its plan from the user's files (include/dtypelint/compose.h). */
#include <errno.h>

#include "dtypelint/compose.h"

static int unsupported(const char *path, const char *what, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = path};
	return dtl_error_set(error, loc, -ENOTSUP, "%s cannot be read by this dtypelint", what);
}

int dtl_compose(const struct dtl_compose_inputs *in, struct dtl_arena *arena,
                const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                struct dtl_error *error)
{
	struct dtl_manifest manifest;
	int r;

	if (in->deepspeed_file)
		return unsupported(in->deepspeed_file, "a DeepSpeed config", error);
	if (in->accelerate_file)
		return unsupported(in->accelerate_file, "an accelerate config", error);
	if (in->peft_file)
		return unsupported(in->peft_file, "a PEFT adapter config", error);
	if (in->trainer_args_file)
		return unsupported(in->trainer_args_file, "a trainer arguments file", error);
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
	*ret_manifest = manifest;
	return 0;
}
