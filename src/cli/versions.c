/* SPDX-License-Identifier: MIT */
/*
 * The versions a set-up really runs (issue 33): what the project's dependency files say, read
 * where they are, below dtypelint's own files and options.
 */
#include <string.h>

#include "cli.h"

int dtl_cli_versions_read(const struct dtl_cli_job *job, const struct dtl_options *o,
                          const struct dtl_limits *limits, struct dtl_arena *arena,
                          struct dtl_requirements *ret, struct dtl_error *error)
{
	const char *const *files = o->versions_from.items;
	const char *start = job->input;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < o->versions_from.count && r == 0; i++)
		r = dtl_requirements_read(files[i], arena, limits, ret, error);
	if (o->versions_from.count || r < 0)
		return r;
	if (job->versions_file)
		return dtl_requirements_read(job->versions_file, arena, limits, ret, error);
	if (strcmp(start, "-") == 0)
		start = o->stdin_filename ? o->stdin_filename : ".";
	return dtl_requirements_find(start, arena, limits, ret, error);
}

void dtl_cli_versions_pin(struct dtl_plan *plan, const struct dtl_requirements *req)
{
	for (int fw = 0; fw < DTL_FW_COUNT; fw++) {
		const struct dtl_requirement *r = &req->fw[fw];
		if (plan->versions[fw].set || !dtl_requirement_pinned(r))
			continue;
		plan->versions[fw] = r->lo;
		plan->version_locs[fw] = r->loc;
	}
}
