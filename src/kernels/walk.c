/* SPDX-License-Identifier: MIT */
/*
 * Directory scans: a sorted recursive walk (deterministic whatever readdir's order), the
 * project include directories, and per file an include path nearest-first so that a file
 * picks the header copy next to it (docs/kernels.md §2: DeepSpeed has
 * csrc/includes/type_shim.h and csrc/xpu/includes/type_shim.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtypelint/input/source.h"
#include "kernels-private.h"

struct walker {
	struct dtl_kernels *k;
	struct dtl_arena *scratch;
	struct dtl_vec files; /* char * */
	struct dtl_vec dirs;  /* char *: include/includes/csrc/src */
	struct dtl_error *error;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_project_dir(const char *name)
{
	return strcmp(name, "include") == 0 || strcmp(name, "includes") == 0 ||
	       strcmp(name, "csrc") == 0 || strcmp(name, "src") == 0;
}

static int push_str(struct walker *w, struct dtl_vec *vec, char *s)
{
	char **slot = dtl_vec_push(vec, w->scratch, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	*slot = s;
	return 0;
}

static int walk(struct walker *w, const char *dir, unsigned depth)
{
	struct dtl_loc loc = {.file = dir};
	struct dtl_vec names = {0};
	struct dirent *e;
	DIR *d;

	if (depth > KMAX_WALK_DEPTH)
		return 0;
	d = opendir(dir);
	if (!d) {
		if (depth == 0)
			return dtl_error_set(w->error, loc, -errno, "cannot open directory: %s",
			                     strerror(errno));
		return 0; /* an unreadable subdirectory is skipped */
	}
	while ((e = readdir(d))) {
		char *name;
		if (e->d_name[0] == '.')
			continue; /* ., .., .git and other hidden entries */
		name = dtl_arena_strndup(w->scratch, e->d_name, strlen(e->d_name));
		if (!name || push_str(w, &names, name) < 0) {
			closedir(d);
			return dtl_error_set(w->error, loc, -ENOMEM, "out of memory");
		}
	}
	closedir(d);
	if (names.count)
		qsort(names.items, names.count, sizeof(char *), cmp_str);
	for (size_t i = 0; i < names.count; i++) {
		const char *name = ((char **)names.items)[i];
		char *path = strcmp(dir, "/") == 0
		                 ? dtl_arena_sprintf(w->scratch, "/%s", name)
		                 : dtl_arena_sprintf(w->scratch, "%s/%s", dir, name);
		struct stat st;
		int r;

		if (!path)
			return dtl_error_set(w->error, loc, -ENOMEM, "out of memory");
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			/* follow links to files, never to directories (no cycles) */
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (is_project_dir(name) && push_str(w, &w->dirs, path) < 0)
				return dtl_error_set(w->error, loc, -ENOMEM, "out of memory");
			if ((r = walk(w, path, depth + 1)) < 0)
				return r;
			continue;
		}
		if (!S_ISREG(st.st_mode) || !dtl_kernels_scan_wanted(path))
			continue;
		if ((uint64_t)st.st_size > w->k->options.max_file_size) {
			w->k->stats.files_skipped++;
			continue;
		}
		if (w->files.count >= w->k->options.max_files)
			return dtl_error_set(
			    w->error, loc, -E2BIG,
			    "more than %zu source files under the scanned directories",
			    w->k->options.max_files);
		dtl_read_log_note(st.st_dev, st.st_ino); /* no output may replace a source */
		if (push_str(w, &w->files, path) < 0)
			return dtl_error_set(w->error, loc, -ENOMEM, "out of memory");
	}
	return 0;
}

/* Length of the common directory prefix of two paths. */
static size_t affinity(const char *a, const char *b)
{
	size_t i = 0, last = 0;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			last = i + 1;
		i++;
	}
	if ((a[i] == '\0' || a[i] == '/') && (b[i] == '\0' || b[i] == '/'))
		last = i;
	return last;
}

struct ranked {
	const char *dir;
	size_t score;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(x->dir, y->dir);
}

static char *normalise_root(struct dtl_arena *arena, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	return dtl_arena_strndup(arena, dir, len);
}

int dtl_kernels_include_order(struct dtl_arena *scratch, const char *path, const char *const *dirs,
                              size_t n_dirs, const char *const *extra, size_t n_extra,
                              const char ***ret, size_t *ret_n)
{
	struct ranked *ranked = dtl_arena_calloc(scratch, n_dirs ? n_dirs : 1, sizeof(*ranked));
	const char **out = dtl_arena_calloc(scratch, n_dirs + n_extra + 1, sizeof(*out));
	size_t n = 0;

	if (!ranked || !out)
		return -ENOMEM;
	for (size_t d = 0; d < n_dirs; d++) {
		ranked[d].dir = dirs[d];
		ranked[d].score = affinity(path, dirs[d]);
	}
	if (n_dirs)
		qsort(ranked, n_dirs, sizeof(*ranked), cmp_ranked);
	for (size_t d = 0; d < n_dirs; d++)
		out[n++] = ranked[d].dir;
	for (size_t d = 0; d < n_extra; d++)
		out[n++] = extra[d];
	*ret = out;
	*ret_n = n;
	return 0;
}

int dtl_kernels_scan_dirs(struct dtl_kernels *k, const char *const *dirs, size_t n_dirs,
                          struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	struct dtl_arena scratch;
	struct walker w = {.k = k, .scratch = &scratch, .error = error};
	int r = 0;

	if (!k->scanner)
		return dtl_error_set(error, nowhere, -EINVAL, "kernel scanner not initialised");
	dtl_arena_init(&scratch);
	for (size_t d = 0; d < n_dirs; d++) {
		struct dtl_loc loc = {.file = dirs[d]};
		struct stat st;
		char *root = normalise_root(&scratch, dirs[d]);
		if (!root) {
			r = dtl_error_set(error, loc, -ENOMEM, "out of memory");
			goto out;
		}
		if (stat(root, &st) < 0) {
			r = dtl_error_set(error, loc, -errno, "cannot scan: %s", strerror(errno));
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			r = dtl_error_set(error, loc, -ENOTDIR, "not a directory");
			goto out;
		}
		if ((r = walk(&w, root, 0)) < 0)
			goto out;
		if (push_str(&w, &w.dirs, root) < 0) {
			r = dtl_error_set(error, loc, -ENOMEM, "out of memory");
			goto out;
		}
	}
	/* includes may come from the scanned directories (w.dirs are inside them) */
	if (dtl_kernels_set_roots(k, dirs, n_dirs, k->options.include_dirs,
	                          k->options.n_include_dirs) < 0) {
		r = dtl_error_set(error, nowhere, -ENOMEM, "out of memory");
		goto out;
	}
	size_t n_found = w.dirs.count < KMAX_INCLUDE_DIRS ? w.dirs.count : KMAX_INCLUDE_DIRS;
	k->scanner->progress_done = 0;
	k->scanner->progress_total = w.files.count;
	dtl_kernels_scan_budget(k, true);
	for (size_t f = 0; f < w.files.count; f += KSANDBOX_BATCH) {
		size_t n_jobs =
		    w.files.count - f < KSANDBOX_BATCH ? w.files.count - f : KSANDBOX_BATCH;
		struct kjob jobs[KSANDBOX_BATCH];
		struct dtl_arena per_batch;
		dtl_arena_init(&per_batch);
		r = 0;
		for (size_t j = 0; j < n_jobs && r == 0; j++) {
			const char **incs;
			jobs[j].path = ((char **)w.files.items)[f + j];
			r = dtl_kernels_include_order(
			    &per_batch, jobs[j].path, (const char *const *)w.dirs.items, n_found,
			    k->options.include_dirs, k->options.n_include_dirs, &incs,
			    &jobs[j].n_include_dirs);
			jobs[j].include_dirs = incs;
		}
		if (r == 0)
			r = dtl_kernels_scan_batch(k, jobs, n_jobs, NULL, 0, error);
		dtl_arena_fini(&per_batch);
		if (r == -ENOMEM) {
			dtl_error_set(error, nowhere, r, "out of memory");
			goto out;
		}
		r = 0; /* counted in stats.files_failed, listed in the scanner's errors */
	}
	r = dtl_kernels_link(k, error);
out:
	k->scanner->progress_total = 0;
	dtl_kernels_scan_budget(k, false);
	dtl_arena_fini(&scratch);
	return r;
}
