/* SPDX-License-Identifier: MIT */
/* Composing a manifest and its plan from the user's files (include/dtypelint/compose.h). */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "dtypelint/compose.h"
#include "dtypelint/file-kind.h"
#include "dtypelint/import.h"
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
		r = input_not_manifest(
		    in->input, arena, limits, &manifest,
		    dtl_manifest_load(in->input, arena, limits, &manifest, error), error);
	if (r < 0)
		return r;
	if (in->plan_file) {
		/* DESIGN §3: a --plan file replaces the manifest's training section */
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
