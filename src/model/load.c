/* SPDX-License-Identifier: MIT */
/* Reading a manifest or plan file in one call: source -> document tree -> typed structs. */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/manifest.h"
#include "dtypelint/model/schema.h"
#include "load.h"

enum what {
	LOAD_MANIFEST,
	LOAD_MANIFEST_NODES, /* the same, every tensor entry through the nodes */
	LOAD_PLAN,
};

/*
 * The tree's nodes go to a scratch arena freed as soon as the typed structs are built; its
 * strings go to arena, where the manifest or plan keeps pointing at them. A file read here is
 * freed once it is parsed. So a load holds at most the file and the nodes, then the nodes
 * and the result, and after it only the result stays.
 */
static int load_tree(enum what what, struct dtl_source *owned, const struct dtl_source *source,
                     struct dtl_arena *arena, const struct dtl_limits *limits,
                     struct dtl_manifest *ret_manifest, struct dtl_plan *plan,
                     struct dtl_error *error)
{
	struct dtl_arena nodes;
	struct dtl_node *root = NULL;
	struct dtl_tensor_stream tensors;
	struct dtl_doc_stream stream = {.key = "tensors",
	                                .element = dtl_tensor_stream_element,
	                                .text =
	                                    what == LOAD_MANIFEST ? dtl_tensor_stream_text : NULL,
	                                .ctx = &tensors};
	const char *file;
	int r;

	file = dtl_arena_strndup(arena, source->path, strlen(source->path));
	if (!file) {
		dtl_source_fini(owned);
		return -ENOMEM;
	}
	dtl_arena_init(&nodes);
	/* a manifest's tensors are converted as they are read (load.h) */
	dtl_tensor_stream_init(&tensors, file, arena, limits);
	tensors.doc = &stream;
	r = dtl_doc_parse_stream(source, &nodes, arena, limits, what != LOAD_PLAN ? &stream : NULL,
	                         &root, error);
	dtl_source_fini(owned);
	if (r >= 0 && what != LOAD_PLAN)
		r = dtl_manifest_parse_streamed(root, file, arena, limits,
		                                stream.used ? &tensors : NULL, ret_manifest, error);
	else if (r >= 0) {
		struct dtl_schema s = {
		    .file = file, .arena = arena, .limits = limits, .error = error};
		r = dtl_schema_root_map(&s, root, "a plan file");
		if (r >= 0)
			r = dtl_plan_parse(root, file, arena, plan, error);
	}
	dtl_arena_fini(&nodes);
	return r;
}

int dtl_manifest_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                             const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                             struct dtl_error *error)
{
	return load_tree(LOAD_MANIFEST, NULL, source, arena, limits, ret_manifest, NULL, error);
}

int dtl_manifest_load_source_nodes(const struct dtl_source *source, struct dtl_arena *arena,
                                   const struct dtl_limits *limits,
                                   struct dtl_manifest *ret_manifest, struct dtl_error *error)
{
	return load_tree(LOAD_MANIFEST_NODES, NULL, source, arena, limits, ret_manifest, NULL,
	                 error);
}

int dtl_plan_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                         const struct dtl_limits *limits, struct dtl_plan *plan,
                         struct dtl_error *error)
{
	return load_tree(LOAD_PLAN, NULL, source, arena, limits, NULL, plan, error);
}

static int load(enum what what, const char *path, struct dtl_arena *arena,
                const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_source source;
	int r;

	r = dtl_source_read(&source, path, limits, error);
	if (r < 0)
		return r;
	return load_tree(what, &source, &source, arena, limits, ret_manifest, plan, error);
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
