/* SPDX-License-Identifier: MIT */
/* The lifecycle of a kernel contract set: options, libclang index, string interning, names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernels-private.h"

void dtl_kernels_options_default(struct dtl_kernels_options *options)
{
	memset(options, 0, sizeof(*options));
	/* docs/kernels.md §7: a breadth-first walk "up to 6 hops". */
	options->max_depth = 6;
	options->max_file_size = 16u * 1024u * 1024u;
	options->max_files = 100000;
	options->budget_s = 300;
}

static int init(struct dtl_kernels *k, struct dtl_arena *arena,
                const struct dtl_kernels_options *options, struct dtl_libclang *lc,
                struct dtl_error *error)
{
	struct dtl_loc nowhere = {0};
	struct dtl_kernels_scanner *s;
	int r;

	memset(k, 0, sizeof(*k));
	if (options)
		k->options = *options;
	else
		dtl_kernels_options_default(&k->options);
	if (k->options.max_depth > KMAX_DEPTH_LIMIT)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel call-graph depth %u is above the limit of %u",
		                     k->options.max_depth, KMAX_DEPTH_LIMIT);
	if (k->options.n_include_dirs > KMAX_INCLUDE_DIRS)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "%zu kernel include directories, at most %u are supported",
		                     k->options.n_include_dirs, KMAX_INCLUDE_DIRS);
	/* libclang addresses a file with unsigned offsets */
	if (k->options.max_file_size == 0 || k->options.max_file_size > UINT32_MAX ||
	    k->options.max_files == 0)
		return dtl_error_set(error, nowhere, -EINVAL,
		                     "kernel scan limits must be positive (files at most 4 GiB)");

	/* docs/kernels.md §2: libclang reads these in-process even with
	 * -nostdinc; a leaked CPATH made a one-line file take 1.6 s with 45,619 errors. The scan
	 * must not depend on the machine, so they go before the first parse. */
	unsetenv("CPATH");
	unsetenv("C_INCLUDE_PATH");
	unsetenv("CPLUS_INCLUDE_PATH");
	unsetenv("OBJC_INCLUDE_PATH");

	s = dtl_arena_alloc(arena, sizeof(*s));
	if (!s)
		return dtl_error_set(error, nowhere, -ENOMEM, "out of memory");
	memset(s, 0, sizeof(*s));
	if ((r = dtl_kernels_libclang_open(lc, k->options.libclang_path, error)) < 0)
		return r;
	s->lc = lc;
	/* displayDiagnostics=0: a hermetic parse has hundreds of errors (docs/kernels.md §2) */
	s->index = s->lc->createIndex(0, 0);
	if (!s->index) {
		dtl_kernels_libclang_close(lc);
		return dtl_error_set(error, nowhere, -ENOMEM, "libclang: cannot create an index");
	}
	dtl_strmap_init(&s->strings, arena);
	k->arena = arena;
	k->scanner = s;
	return 0;
}

int dtl_kernels_init(struct dtl_kernels *k, struct dtl_arena *arena,
                     const struct dtl_kernels_options *options, struct dtl_error *error)
{
	/* The set loads its own libclang (options.libclang_path, else the configured one; a
	 * reference count when it is loaded already) and closes it in dtl_kernels_fini(). */
	struct dtl_libclang *lc = dtl_arena_alloc(arena, sizeof(*lc));

	if (!lc)
		return dtl_error_set(error, (struct dtl_loc){0}, -ENOMEM, "out of memory");
	return init(k, arena, options, lc, error);
}

void dtl_kernels_fini(struct dtl_kernels *k)
{
	if (!k || !k->scanner)
		return;
	if (k->scanner->index)
		k->scanner->lc->disposeIndex(k->scanner->index);
	k->scanner->index = NULL;
	dtl_kernels_libclang_close(k->scanner->lc);
	k->scanner->lc = NULL;
	k->scanner = NULL;
}

const char *dtl_kernels_intern(struct dtl_kernels *k, const char *text, size_t len)
{
	struct dtl_kernels_scanner *s = k->scanner;
	int64_t found = dtl_strmap_get(&s->strings, text, len);
	const char **slot;
	char *copy;

	if (found >= 0)
		return ((const char **)s->strings_list.items)[found];
	copy = dtl_arena_strndup(k->arena, text, len);
	if (!copy)
		return NULL;
	slot = dtl_vec_push(&s->strings_list, k->arena, sizeof(*slot));
	if (!slot)
		return NULL;
	*slot = copy;
	if (dtl_strmap_put(&s->strings, copy, len, (int64_t)(s->strings_list.count - 1)) < 0)
		return NULL;
	return copy;
}

const char *dtl_kernels_backend_of_path(struct dtl_kernels *k, const char *path)
{
	/* docs/kernels.md §10: tag the backend from the extension or
	 * path (mmcv keeps npu/mlu/musa copies of each op beside the CUDA one). */
	static const char *const names[] = {"cuda", "cpu", "npu", "mlu", "mps",
	                                    "musa", "xpu", "hip", "rocm"};
	size_t len = strlen(path);

	if ((len > 3 && strcmp(path + len - 3, ".cu") == 0) ||
	    (len > 4 && strcmp(path + len - 4, ".cuh") == 0))
		return dtl_kernels_intern_z(k, "cuda");
	for (const char *p = path; *p;) {
		const char *e = strchr(p, '/');
		size_t seg = e ? (size_t)(e - p) : strlen(p);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			size_t n = strlen(names[i]);
			/* a directory "npu", or a file "roi_align_npu.cpp" / "nms_cuda_kernel.cuh"
			 */
			for (size_t at = 0; at + n <= seg; at++) {
				bool start = at == 0 || p[at - 1] == '_';
				bool end = at + n == seg || p[at + n] == '_' || p[at + n] == '.';
				if (start && end && strncasecmp(p + at, names[i], n) == 0)
					return dtl_kernels_intern_z(k, names[i]);
			}
		}
		p += seg;
		if (*p == '/')
			p++;
	}
	return NULL;
}

const char *dtl_kernels_normalize(struct dtl_kernels *k, const char *path)
{
	size_t len = strlen(path), n = 0, out = 0;
	char *buf = dtl_arena_alloc(k->arena, len + 2);
	size_t *starts;
	bool absolute = path[0] == '/';

	if (!buf)
		return NULL;
	starts = dtl_arena_calloc(k->arena, len / 2 + 2, sizeof(*starts));
	if (!starts)
		return NULL;
	if (absolute)
		buf[out++] = '/';
	for (const char *p = path; *p;) {
		const char *e = strchr(p, '/');
		size_t seg = e ? (size_t)(e - p) : strlen(p);
		if (seg == 0 || (seg == 1 && p[0] == '.')) {
			/* empty or "." */
		} else if (seg == 2 && p[0] == '.' && p[1] == '.' && n > 0 &&
		           !(out - starts[n - 1] == 2 && buf[starts[n - 1]] == '.' &&
		             buf[starts[n - 1] + 1] == '.')) {
			out = starts[--n];
			if (out > (absolute ? 1u : 0u))
				out--; /* the separator before it */
		} else {
			if (out > (absolute ? 1u : 0u))
				buf[out++] = '/';
			starts[n++] = out;
			memcpy(buf + out, p, seg);
			out += seg;
		}
		p += seg;
		if (*p == '/')
			p++;
	}
	if (out == 0)
		buf[out++] = '.';
	return dtl_kernels_intern(k, buf, out);
}

const char *dtl_kernels_fact_kind_name(enum dtl_kernels_fact_kind kind)
{
	switch (kind) {
	case DTL_KERNELS_FACT_DISPATCH:
		return "dispatch";
	case DTL_KERNELS_FACT_ASSERT:
		return "assert";
	case DTL_KERNELS_FACT_BRANCH:
		return "branch";
	case DTL_KERNELS_FACT_SWITCH:
		return "switch";
	case DTL_KERNELS_FACT_ACCESSOR:
		return "accessor";
	}
	return "?";
}

const char *dtl_kernels_binding_name(enum dtl_kernels_binding binding)
{
	switch (binding) {
	case DTL_KERNELS_BINDING_PYBIND11:
		return "pybind11";
	case DTL_KERNELS_BINDING_TORCH_LIBRARY:
		return "torch_library";
	case DTL_KERNELS_BINDING_TORCH_LIBRARY_IMPL:
		return "torch_library_impl";
	case DTL_KERNELS_BINDING_TORCH_LIBRARY_FRAGMENT:
		return "torch_library_fragment";
	case DTL_KERNELS_BINDING_REGISTER_OPERATORS:
		return "register_operators";
	}
	return "?";
}

const char *dtl_kernels_verdict_name(enum dtl_kernels_verdict verdict)
{
	switch (verdict) {
	case DTL_KERNELS_UNKNOWN:
		return "unknown";
	case DTL_KERNELS_ACCEPTS:
		return "accepts";
	case DTL_KERNELS_REJECTS:
		return "rejects";
	case DTL_KERNELS_MAY_REJECT:
		return "may-reject";
	case DTL_KERNELS_UNCHECKED:
		return "unchecked";
	}
	return "?";
}
