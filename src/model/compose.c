/* SPDX-License-Identifier: MIT */
/* Composing a manifest and its plan from the user's files (include/dtypelint/model/compose.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "dtypelint/model/compose.h"
#include "dtypelint/model/file-kind.h"
#include "dtypelint/model/import.h"
#include "dtypelint/model/launch.h"
#include "import-registry.h"
#include "import-util.h"
#include "load.h"

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The input could not be read as a manifest (error set): when it looks like something else,
 * it is read by the importer of its kind, or the error names what it is and what reads it. A
 * manifest with a mistake, or a file nothing tells apart, keeps the manifest reader's error.
 * Only the failing path reads the file again: a good manifest is read once.
 */
/* a broken manifest has one of its keys, a recipe one of its own: the manifest reader's error
 * says more (manifest-parse.c names a recipe given as INPUT) */
static bool manifest_key(const char *key, size_t len)
{
	static const char *const keys[] = {"dtypelint",    "model",   "tensors",  "frozen",
	                                   "quantization", "adapter", "training", "suppress"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0)
			return true;
	return dtl_recipe_key(key, len);
}

static int input_not_manifest(const char *path, struct dtl_arena *arena,
                              const struct dtl_limits *limits, struct dtl_manifest *manifest,
                              int failed, struct dtl_error *error)
{
	/* the files of a set-up given as INPUT: manifest-parse.c names each and its option */
	static const enum dtl_file_reader readers[] = {
	    DTL_READ_MANIFEST, DTL_READ_FOLDER,       DTL_READ_DEEPSPEED, DTL_READ_ACCELERATE,
	    DTL_READ_PEFT,     DTL_READ_TRAINER_ARGS, DTL_READ_CONFIG};
	struct dtl_file_guess guess;
	struct dtl_error why = {0};
	int r;

	if (failed != -EINVAL)
		return failed;
	r = dtl_file_check_role(path, "the input", readers, sizeof(readers) / sizeof(readers[0]),
	                        manifest_key, arena, limits, &guess, &why);
	if (r == -ENOMEM)
		return r;
	if (r == 0 || !guess.kind) /* the manifest reader's error stands */
		return failed;
	const struct dtl_kind_importer *importer = dtl_kind_importer_find(guess.kind->id);
	if (importer) {
		*manifest = (struct dtl_manifest){0};
		dtl_plan_init(&manifest->plan);
		return importer->import(path, DTL_ROLE_INPUT, arena, limits, manifest, error);
	}
	dtl_error_copy(error, &why);
	return r;
}

/* --trainer-args: the recipes dtypelint reads, a kind an importer reads, else an error that
 * says what the file is */
static int trainer_args(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                        struct dtl_manifest *manifest, struct dtl_error *error)
{
	static const enum dtl_file_reader recipes[] = {DTL_READ_TRAINER_ARGS};
	struct dtl_file_guess guess;
	struct dtl_error why = {0};
	int r;

	r = dtl_file_check_role(path, "--trainer-args", recipes, 1, dtl_recipe_key, arena, limits,
	                        &guess, &why);
	if (r == -EINVAL && guess.kind) {
		const struct dtl_kind_importer *importer = dtl_kind_importer_find(guess.kind->id);
		if (importer)
			return importer->import(path, DTL_ROLE_TRAINER_ARGS, arena, limits,
			                        manifest, error);
	}
	if (r < 0) {
		dtl_error_copy(error, &why);
		return r;
	}
	return dtl_import_trainer_args(path, arena, limits, manifest, error);
}

/* The settings of the launch command's own flags and environment, at their places in the
 * script: they win over the files it names, as the launched process does. */
static void launch_flags(const struct dtl_launch *l, struct dtl_plan *plan)
{
	if (l->precision != DTL_PRECISION_UNSET) {
		plan->precision = l->precision;
		plan->precision_loc = l->precision_loc;
	}
	if (l->strategy != DTL_STRATEGY_UNSET) {
		plan->strategy = l->strategy;
		plan->strategy_loc = l->strategy_loc;
	}
	if (l->world_size) {
		plan->world_size = l->world_size;
		plan->world_size_loc = l->world_size_loc;
	}
}

/* --launch: the files its command names (unless an option names that kind), its warnings,
 * then its flags */
static int launch(const struct dtl_compose_inputs *in, struct dtl_arena *arena,
                  const struct dtl_limits *limits, struct dtl_manifest *m, struct dtl_launch *ret,
                  struct dtl_error *error)
{
	struct dtl_launch l;
	int r;

	if ((r = in->launch_argc ? dtl_launch_read_argv(in->launch_argv, in->launch_argc, arena,
	                                                limits, &l, error)
	                         : dtl_launch_read(in->launch_file, arena, limits, &l, error)) < 0)
		return r;
	*ret = l;
	if (!l.deepspeed_file && !l.accelerate_file && !l.trainer_args_file && !l.framework &&
	    l.precision == DTL_PRECISION_UNSET && l.strategy == DTL_STRATEGY_UNSET &&
	    !l.world_size && !l.unmodelled.count) {
		/* nothing usable: an input error, never a clean run of the defaults */
		const struct dtl_input_warning *first = l.warnings.items;
		return dtl_error_set(error, l.warnings.count ? first->loc : l.launcher_loc, -EINVAL,
		                     "the launch command (%s) gives dtypelint nothing to read%s%s",
		                     l.launcher, l.warnings.count ? ": " : "",
		                     l.warnings.count ? first->message : "");
	}
	const struct dtl_input_warning *w = l.warnings.items;
	for (size_t i = 0; i < l.warnings.count; i++) {
		struct dtl_input_warning *slot = dtl_vec_push(&m->warnings, arena, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		*slot = w[i];
	}
	if (!m->plan.file) {
		m->plan.file = l.file;
		m->plan.loc = l.launcher_loc;
	}
	if (l.deepspeed_file && !in->deepspeed_file &&
	    (r = dtl_import_deepspeed(l.deepspeed_file, arena, limits, &m->plan, error)) < 0)
		return r;
	if (l.accelerate_file && !in->accelerate_file &&
	    (r = dtl_import_accelerate(l.accelerate_file, arena, limits, &m->plan, error)) < 0)
		return r;
	if (l.trainer_args_file && !in->trainer_args_file &&
	    (r = trainer_args(l.trainer_args_file, arena, limits, m, error)) < 0)
		return r;
	launch_flags(&l, &m->plan);
	if (l.trainer_fsdp_given &&
	    (r = dtl_import_trainer_fsdp(l.trainer_fsdp, l.trainer_fsdp_loc, l.trainer_fsdp_config,
	                                 l.trainer_fsdp_config_loc, arena, limits, m, error)) < 0)
		return r;
	const struct dtl_unmodelled *u = l.unmodelled.items;
	for (size_t i = 0; i < l.unmodelled.count; i++)
		if ((r = dtl_plan_unmodelled(&m->plan, arena, &u[i])) < 0)
			return r;
	return 0;
}

/* --framework-config, or the framework a launch command runs (its config file, else its
 * packaged defaults): the launch's overrides first, then --framework-override's, as the
 * framework's command line would have them */
static int framework(const struct dtl_compose_inputs *in, const struct dtl_launch *l,
                     struct dtl_arena *arena, const struct dtl_limits *limits,
                     struct dtl_manifest *m, struct dtl_error *error)
{
	size_t nl = l->framework ? l->framework_overrides.count : 0;
	size_t n = nl + in->framework_override_count;
	struct dtl_framework_override *ov = n ? dtl_arena_calloc(arena, n, sizeof(*ov)) : NULL;

	if (n && !ov)
		return -ENOMEM;
	if (nl)
		memcpy(ov, l->framework_overrides.items, nl * sizeof(*ov));
	for (size_t i = 0; i < in->framework_override_count; i++)
		ov[nl + i].text = in->framework_overrides[i];
	const char *path = in->framework_file ? in->framework_file : l->framework_file;
	return dtl_import_framework(path, l->framework, l->framework_loc, ov, n, arena, limits, m,
	                            error);
}

int dtl_compose(const struct dtl_compose_inputs *in, struct dtl_arena *arena,
                const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                struct dtl_error *error)
{
	struct dtl_manifest manifest;
	int r;

	/* the paths the user typed: a link among them must stay inside the tree (source.h) */
	const char *typed[] = {in->input,           in->plan_file,  in->deepspeed_file,
	                       in->accelerate_file, in->peft_file,  in->trainer_args_file,
	                       in->framework_file,  in->launch_file};
	for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++)
		if (typed[i] && (r = dtl_confine_check(
		                     typed[i], in->named_by,
		                     in->named_by ? in->named_at : (struct dtl_loc){0}, error)) < 0)
			return r;
	if (in->input_source)
		r = dtl_manifest_load_source(in->input_source, arena, limits, &manifest, error);
	else if (is_dir(in->input))
		r = dtl_import_hf_folder(in->input, arena, limits, &manifest, error);
	else
		r = input_not_manifest(
		    in->input, arena, limits, &manifest,
		    dtl_manifest_load(in->input, arena, limits, &manifest, error), error);
	if (r < 0)
		return r;
	if (in->plan_file) {
		/* docs/design.md §3: a --plan file replaces the manifest's training section */
		struct dtl_plan plan;
		dtl_plan_init(&plan);
		r = dtl_plan_load(in->plan_file, arena, limits, &plan, error);
		if (r < 0)
			return r;
		/* what the model folder uses and dtypelint does not model stays reported */
		plan.unmodelled = manifest.plan.unmodelled;
		manifest.plan = plan;
		manifest.has_training = true;
	}
	struct dtl_launch l = {0};
	if ((in->launch_file || in->launch_argc) &&
	    (r = launch(in, arena, limits, &manifest, &l, error)) < 0)
		return r;
	/* later sources override the fields they set: --deepspeed, --accelerate, --trainer-args,
	 * --framework-config */
	if (in->deepspeed_file && (r = dtl_import_deepspeed(in->deepspeed_file, arena, limits,
	                                                    &manifest.plan, error)) < 0)
		return r;
	if (in->accelerate_file && (r = dtl_import_accelerate(in->accelerate_file, arena, limits,
	                                                      &manifest.plan, error)) < 0)
		return r;
	if (in->trainer_args_file &&
	    (r = trainer_args(in->trainer_args_file, arena, limits, &manifest, error)) < 0)
		return r;
	if ((in->framework_file || l.framework) &&
	    (r = framework(in, &l, arena, limits, &manifest, error)) < 0)
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
