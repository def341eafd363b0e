/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "import-util.h"

int dtl_loaded_open(struct dtl_loaded *l, const char *path, struct dtl_arena *arena,
                    const struct dtl_limits *limits, struct dtl_error *error)
{
	const char *file = dtl_arena_strndup(arena, path, strlen(path));
	int r;

	memset(l, 0, sizeof(*l));
	if (!file)
		return -ENOMEM;
	r = dtl_source_read(&l->source, path, limits, error);
	if (r < 0)
		return r;
	r = dtl_doc_parse(&l->source, arena, limits, &l->root, error);
	if (r < 0) {
		dtl_source_fini(&l->source);
		return r;
	}
	l->s.file = file;
	l->s.arena = arena;
	l->s.limits = limits;
	l->s.error = error;
	return 0;
}

void dtl_loaded_close(struct dtl_loaded *l)
{
	dtl_source_fini(&l->source);
}

const char *dtl_path_relative_to(struct dtl_arena *arena, const char *base, const char *rel)
{
	const char *slash = strrchr(base, '/');
	if (rel[0] == '/' || !slash)
		return dtl_arena_strndup(arena, rel, strlen(rel));
	return dtl_arena_sprintf(arena, "%.*s/%s", (int)(slash - base), base, rel);
}

void dtl_adapter_init(struct dtl_adapter *a, struct dtl_loc loc)
{
	memset(a, 0, sizeof(*a));
	a->present = true;
	a->type = "lora";
	a->name = "default";
	a->r = 8;
	a->autocast_adapter_dtype = DTL_UNSET;
	a->prepare_kbit_training = DTL_UNSET;
	a->use_dora = DTL_UNSET;
	a->loc = loc;
}
