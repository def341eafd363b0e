/* SPDX-License-Identifier: MIT */
/* The public scan entries but the directory walk (walk.c): one file on disk, and in-memory
 * sources (unit tests). Each goes through the sandbox (sandbox.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels-private.h"

int dtl_kernels_scan_file(struct dtl_kernels *k, const char *path, struct dtl_error *error)
{
	struct dtl_loc loc = {.file = path};

	struct stat st;

	if (!k->scanner)
		return dtl_error_set(error, loc, -EINVAL, "kernel scanner not initialised");
	if (stat(path, &st) < 0)
		return dtl_error_set(error, loc, -errno, "cannot scan: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return dtl_error_set(error, loc, -EINVAL, "not a regular file");
	if ((uint64_t)st.st_size > k->options.max_file_size) {
		k->stats.files_skipped++;
		return dtl_error_set(error, loc, -EFBIG, "larger than %zu bytes",
		                     k->options.max_file_size);
	}
	/* its own directory, as for its includes */
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	const char *dirs[1] = {dir};
	int r = dir ? dtl_kernels_set_roots(k, dirs, 1, k->options.include_dirs,
	                                    k->options.n_include_dirs)
	            : -ENOMEM;
	free(dir);
	if (r < 0)
		return dtl_error_set(error, loc, r, "out of memory");
	return dtl_kernels_scan_one(k, path, NULL, 0, k->options.include_dirs,
	                            k->options.n_include_dirs, error);
}

static bool is_project_dir(const char *name, size_t len)
{
	/* docs/kernels.md §2: the include dirs are the file's own
	 * directory plus project directories named include, includes, csrc or src. */
	return (len == 7 && memcmp(name, "include", 7) == 0) ||
	       (len == 8 && memcmp(name, "includes", 8) == 0) ||
	       (len == 4 && memcmp(name, "csrc", 4) == 0) ||
	       (len == 3 && memcmp(name, "src", 3) == 0);
}

int dtl_kernels_scan_sources(struct dtl_kernels *k, const struct dtl_kernels_source *sources,
                             size_t n_sources, struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	struct dtl_arena scratch;
	struct CXUnsavedFile *unsaved;
	struct dtl_vec dirs = {0};
	int r = 0;

	if (!k->scanner)
		return dtl_error_set(error, nowhere, -EINVAL, "kernel scanner not initialised");
	if (n_sources > k->options.max_files || n_sources > UINT32_MAX)
		return dtl_error_set(error, nowhere, -E2BIG, "%zu sources, at most %zu", n_sources,
		                     k->options.max_files);
	dtl_arena_init(&scratch);
	unsaved = dtl_arena_calloc(&scratch, n_sources ? n_sources : 1, sizeof(*unsaved));
	if (!unsaved) {
		r = dtl_error_set(error, nowhere, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_sources; i++) {
		const struct dtl_kernels_source *src = &sources[i];
		struct dtl_loc loc = {.file = src->path};
		if (!src->path || (!src->text && src->length)) {
			r = dtl_error_set(error, loc, -EINVAL, "source %zu has no path or text", i);
			goto out;
		}
		if (src->length > k->options.max_file_size || src->length > UINT32_MAX) {
			r = dtl_error_set(error, loc, -EFBIG, "larger than %zu bytes",
			                  k->options.max_file_size);
			goto out;
		}
		unsaved[i].Filename = src->path;
		unsaved[i].Contents = src->text ? src->text : "";
		unsaved[i].Length = (unsigned long)src->length;
		/* every ancestor named include/includes/csrc/src is an include dir */
		for (const char *p = src->path; (p = strchr(p, '/')); p++) {
			const char *start = p;
			while (start > src->path && start[-1] != '/')
				start--;
			if (p == start || !is_project_dir(start, (size_t)(p - start)) ||
			    dirs.count >= KMAX_INCLUDE_DIRS)
				continue;
			char *dir = dtl_arena_strndup(&scratch, src->path, (size_t)(p - src->path));
			bool seen = false;
			for (size_t d = 0; dir && d < dirs.count; d++)
				seen |= strcmp(((const char **)dirs.items)[d], dir) == 0;
			const char **slot =
			    seen ? NULL : dtl_vec_push(&dirs, &scratch, sizeof(*slot));
			if (!dir || (!seen && !slot)) {
				r = dtl_error_set(error, nowhere, -ENOMEM, "out of memory");
				goto out;
			}
			if (slot)
				*slot = dir;
		}
	}
	/* in-memory sources include each other, nothing on disk (sandbox.c) */
	k->scanner->roots = NULL;
	k->scanner->n_roots = 0;
	struct kjob *jobs = dtl_arena_calloc(&scratch, n_sources ? n_sources : 1, sizeof(*jobs));
	size_t n_jobs = 0;
	if (!jobs) {
		r = dtl_error_set(error, nowhere, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n_sources; i++) {
		const char **incs;
		if (!dtl_kernels_scan_wanted(sources[i].path))
			continue;
		r = dtl_kernels_include_order(&scratch, sources[i].path, dirs.items, dirs.count,
		                              k->options.include_dirs, k->options.n_include_dirs,
		                              &incs, &jobs[n_jobs].n_include_dirs);
		if (r < 0) {
			r = dtl_error_set(error, nowhere, r, "out of memory");
			goto out;
		}
		jobs[n_jobs].path = sources[i].path;
		jobs[n_jobs++].include_dirs = incs;
	}
	r = dtl_kernels_scan_batch(k, jobs, n_jobs, unsaved, (unsigned)n_sources, error);
	if (r == -ENOMEM)
		goto out;
	/* a file libclang cannot parse is counted, not fatal */
	r = dtl_kernels_link(k, error);
out:
	dtl_arena_fini(&scratch);
	return r;
}
