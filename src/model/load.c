/* SPDX-License-Identifier: MIT */
/* Reading a manifest or plan file in one call: source -> document tree -> typed structs. */
#include <errno.h>
#include <string.h>

#include "dtypelint/manifest.h"

enum what {
	LOAD_MANIFEST,
	LOAD_PLAN,
};

/* The source stays alive until the typed structs are built: scalar nodes point into it. */
static int load(enum what what, const char *path, struct dtl_arena *arena,
                const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_source source;
	struct dtl_node *root = NULL;
	const char *file;
	int r;

	r = dtl_source_read(&source, path, limits, error);
	if (r < 0)
		return r;
	file = dtl_arena_strndup(arena, path, strlen(path));
	if (!file)
		r = -ENOMEM;
	if (r >= 0)
		r = dtl_doc_parse(&source, arena, limits, &root, error);
	if (r >= 0 && what == LOAD_MANIFEST)
		r = dtl_manifest_parse(root, file, arena, limits, ret_manifest, error);
	else if (r >= 0)
		r = dtl_plan_parse(root, file, arena, plan, error);
	dtl_source_fini(&source);
	return r;
}

int dtl_manifest_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                      struct dtl_manifest *ret_manifest, struct dtl_error *error)
{
	return load(LOAD_MANIFEST, path, arena, limits, ret_manifest, NULL, error);
}

int dtl_plan_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                  struct dtl_plan *plan, struct dtl_error *error)
{
	return load(LOAD_PLAN, path, arena, limits, NULL, plan, error);
}
