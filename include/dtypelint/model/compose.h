/* SPDX-License-Identifier: MIT */
/*
 * Composing one manifest and plan from what a user has: a manifest file or a Hugging Face model
 * folder, and optionally a plan file, a DeepSpeed JSON, an accelerate YAML, a PEFT
 * adapter_config.json and trainer arguments. Precedence of plan sources (docs/design.md §3): the
 * manifest's `training:`, then --plan, --deepspeed, --accelerate, --trainer-args,
 * --framework-config (later ones override the fields they set); command-line overrides are applied
 * by the caller.
 */
#ifndef DTYPELINT_COMPOSE_H
#define DTYPELINT_COMPOSE_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/compose.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/model/manifest.h"
#include "dtypelint/input/source.h"

struct dtl_compose_inputs {
	const char *input;           /* a manifest (.json .yaml .yml) or a model folder; required */
	const char *plan_file;       /* --plan */
	const char *deepspeed_file;  /* --deepspeed */
	const char *accelerate_file; /* --accelerate */
	const char *peft_file;       /* --peft */
	const char *trainer_args_file;          /* --trainer-args */
	const char *framework_file;             /* --framework-config */
	const char *const *framework_overrides; /* --framework-override KEY=VALUE, in order */
	size_t framework_override_count;
	const char *launch_file; /* --launch: a launch script (launch.h) */
	/* --launch -- CMD...: a command line read as a one-line script (launch_argc words) */
	const char *const *launch_argv;
	size_t launch_argc;
	/* when input is "-": the manifest already read from standard input, named as the report
	 * should name it (--stdin-filename); not owned */
	const struct dtl_source *input_source;
	/* the file that names these paths (a config's setups:), NULL when the user typed them:
	 * then each follows the rule of a path named by a file (source.h, dtl_confine_check),
	 * refused at named_at */
	const char *named_by;
	struct dtl_loc named_at;
};

/* Builds *ret_manifest (with its plan in ret_manifest->plan) in arena. */
int dtl_compose(const struct dtl_compose_inputs *inputs, struct dtl_arena *arena,
                const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                struct dtl_error *error);

#endif
