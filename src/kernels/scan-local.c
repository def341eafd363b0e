/* SPDX-License-Identifier: MIT */
/*
 * Scanning one file end to end in this process: parse (parse.c), macros (macros.c), facts and
 * functions (extract.c), the file's includes and declarations. sandbox.c runs it in a child;
 * scan.c and walk.c pick the files (dtl_kernels_scan_wanted()). Below all three, so that the
 * sandbox does not call back into scan.c (tests/kernels/call-graph.sh).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "extract.h"

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (const char *const *)a,
	          y = (uintptr_t) * (const char *const *)b;
	return x < y ? -1 : x > y;
}

/* What the file includes and declares, for cross-file name resolution (link.c). */
static int record_file_info(struct kx *x)
{
	struct dtl_kernels *k = x->k;
	struct kfinfo *fi = dtl_vec_push(&k->scanner->finfos, k->arena, sizeof(*fi));
	const struct kslice *d = x->decls.items;
	const char **decls = NULL;
	size_t n = 0;

	if (!fi)
		return -ENOMEM;
	fi->path = x->kf->path;
	fi->includes = x->kf->includes;
	fi->n_includes = (uint32_t)x->kf->n_includes;
	if (x->decls.count) {
		decls = dtl_arena_calloc(k->arena, x->decls.count, sizeof(*decls));
		if (!decls)
			return -ENOMEM;
		for (size_t i = 0; i < x->decls.count; i++) {
			if (!(decls[i] = dtl_kernels_intern(k, d[i].text, d[i].len)))
				return -ENOMEM;
		}
		qsort(decls, x->decls.count, sizeof(*decls), cmp_ptr);
		for (size_t i = 0; i < x->decls.count; i++) {
			if (!n || decls[n - 1] != decls[i])
				decls[n++] = decls[i];
		}
	}
	fi = (struct kfinfo *)k->scanner->finfos.items + k->scanner->finfos.count - 1;
	fi->decls = decls;
	fi->n_decls = (uint32_t)n;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int dtl_kernels_scan_local(struct dtl_kernels *k, const char *path, struct CXUnsavedFile *unsaved,
                           unsigned n_unsaved, const char *const *include_dirs,
                           size_t n_include_dirs, struct dtl_error *error)
{
	struct dtl_kernels_scanner *s = k->scanner;
	struct dtl_loc loc = {.file = path};
	struct dtl_kernels_file *rec;
	struct dtl_arena scratch;
	struct kfile kf;
	uint64_t t0 = now_ns(), parse_ns = 0;
	int r;

	rec = dtl_vec_push(&s->files, k->arena, sizeof(*rec));
	if (!rec || !(rec->path = dtl_kernels_intern_z(k, path)))
		return dtl_error_set(error, loc, -ENOMEM, "out of memory");
	k->files = s->files.items;
	k->n_files = s->files.count;
	s->linked = false;

	dtl_arena_init(&scratch);
	r = dtl_kernels_file_parse(k, &scratch, path, unsaved, n_unsaved, include_dirs,
	                           n_include_dirs, &kf, &parse_ns, error);
	rec = (struct dtl_kernels_file *)s->files.items + s->files.count - 1;
	rec->parse_ns = parse_ns;
	if (r < 0) {
		rec->failed = true;
		rec->total_ns = now_ns() - t0;
		k->stats.files_failed++;
		dtl_arena_fini(&scratch);
		return r;
	}

	struct kx *x = dtl_arena_alloc(&scratch, sizeof(*x));
	if (!x) {
		r = -ENOMEM;
	} else {
		x->k = k;
		x->scratch = &scratch;
		x->kf = &kf;
		x->expand_budget = KMAX_EXPAND_TOKENS;
		r = dtl_kernels_macros_collect(x);
		if (r == 0)
			r = dtl_kernels_extract(x);
		if (r == 0)
			r = record_file_info(x);
	}
	rec = (struct dtl_kernels_file *)s->files.items + s->files.count - 1;
	rec->tokens = kf.n;
	rec->diagnostics = kf.diagnostics;
	k->stats.files++;
	k->stats.tokens += kf.n;
	dtl_kernels_file_dispose(&kf);
	dtl_arena_fini(&scratch);
	rec->total_ns = now_ns() - t0;
	if (r < 0)
		return dtl_error_set(error, loc, r, "out of memory");
	return 0;
}

bool dtl_kernels_scan_wanted(const char *path)
{
	static const char *const exts[] = {".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp"};
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return false;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		if (strcmp(dot, exts[i]) == 0)
			return true;
	}
	return false;
}
