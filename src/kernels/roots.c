/* SPDX-License-Identifier: MIT */
/*
 * The include policy of the sandbox (sandbox.c says why there is one): the realpath()s of the
 * scanned directories a parse may include from, and the check parse.c runs in the child on each
 * include. A file of its own so that parse.c does not call into sandbox.c, which calls the
 * parse (tests/kernels/call-graph.sh).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernels-private.h"

static bool under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool special(const char *path)
{
	return under(path, "/dev") || under(path, "/proc") || under(path, "/sys");
}

const char *dtl_kernels_include_refused(struct dtl_kernels *k, const char *name,
                                        const struct CXUnsavedFile *unsaved, unsigned n_unsaved)
{
	const struct dtl_kernels_scanner *s = k->scanner;
	char *real;
	bool ok = false;

	const char *norm = n_unsaved ? dtl_kernels_normalize(k, name) : NULL;
	for (unsigned i = 0; norm && i < n_unsaved; i++) {
		if (dtl_kernels_normalize(k, unsaved[i].Filename) == norm)
			return NULL;
	}
	if (special(name))
		return "a device or kernel file (/dev, /proc, /sys)";
	real = realpath(name, NULL);
	if (!real)
		return "it cannot be resolved";
	if (special(real)) {
		free(real);
		return "a device or kernel file (/dev, /proc, /sys)";
	}
	for (size_t i = 0; i < s->n_roots && !ok; i++)
		ok = under(real, s->roots[i]);
	free(real);
	return ok ? NULL : "outside the scanned directories";
}

int dtl_kernels_set_roots(struct dtl_kernels *k, const char *const *dirs, size_t n_dirs,
                          const char *const *more, size_t n_more)
{
	struct dtl_kernels_scanner *s = k->scanner;
	const char **roots = dtl_arena_calloc(k->arena, n_dirs + n_more + 1, sizeof(*roots));
	size_t n = 0;

	if (!roots)
		return -ENOMEM;
	for (size_t i = 0; i < n_dirs + n_more; i++) {
		char *real = realpath(i < n_dirs ? dirs[i] : more[i - n_dirs], NULL);
		if (!real)
			continue; /* nothing can be included from a directory that is not there */
		roots[n] = dtl_kernels_intern_z(k, real);
		free(real);
		if (!roots[n])
			return -ENOMEM;
		n++;
	}
	s->roots = roots;
	s->n_roots = n;
	return 0;
}
