/* SPDX-License-Identifier: MIT */
/*
 * Which files dtypelint may read (source.h, dtl_confine_check). A file named by another file
 * (accelerate's deepspeed_config_file, the trainer args' deepspeed, an HF folder's config and
 * shards) or reached through a symlink must resolve, after every link, under one of:
 *   - the directory of the file or folder that names it;
 *   - the working directory;
 *   - the git repository (the nearest ancestor holding .git) of either;
 *   - the HF cache entry (".../models--org--name") when the namer sits in its snapshots/,
 *     whose files are links to ../../blobs/.
 * Otherwise a pull request could make dtypelint read, and report on, any file of the CI runner
 * (a link to ~/.ssh/id_rsa named model.safetensors). A path the user typed that is not a link
 * is the user's choice and always allowed.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtypelint/input/source.h"

/* path lies in dir or below it (both absolute, without symlinks) */
static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* the nearest ancestor of dir (itself included) that holds .git, written to out */
static bool git_root(const char *dir, char *out, size_t size)
{
	size_t n = strlen(dir);
	struct stat st;

	if (n + 6 > size)
		return false;
	memcpy(out, dir, n + 1);
	for (;;) {
		memcpy(out + n, "/.git", 6);
		if (lstat(out, &st) == 0) {
			out[n ? n : 1] = '\0';
			return true;
		}
		while (n > 0 && out[n - 1] != '/')
			n--;
		if (n <= 1)
			return false;
		n--; /* drop the slash */
	}
}

/* ".../models--x/snapshots/<rev>/..." → ".../models--x" in out */
static bool hf_cache_root(const char *dir, char *out, size_t size)
{
	const char *s = strstr(dir, "/snapshots/");
	while (s) {
		const char *start = s;
		while (start > dir && start[-1] != '/')
			start--;
		if ((strncmp(start, "models--", 8) == 0 || strncmp(start, "datasets--", 10) == 0) &&
		    (size_t)(s - dir) < size) {
			memcpy(out, dir, (size_t)(s - dir));
			out[s - dir] = '\0';
			return true;
		}
		s = strstr(s + 1, "/snapshots/");
	}
	return false;
}

static bool under_root_of(const char *target, const char *dir)
{
	char root[PATH_MAX];
	if (is_under(target, dir))
		return true;
	if (git_root(dir, root, sizeof(root)) && is_under(target, root))
		return true;
	return hf_cache_root(dir, root, sizeof(root)) && is_under(target, root);
}

/* realpath() of the directory part of path ("." for a bare name) */
static char *real_dir_of(const char *path, bool path_is_dir)
{
	if (path_is_dir)
		return realpath(path, NULL);
	const char *slash = strrchr(path, '/');
	if (!slash)
		return realpath(".", NULL);
	if (slash == path)
		return realpath("/", NULL);
	char *dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return NULL;
	char *real = realpath(dir, NULL);
	free(dir);
	return real;
}

/* A file that names "-", /dev/stdin, /proc/self/fd/0, a FIFO or a device would have dtypelint
 * wait on its standard input or read without end: only a path the user typed may be one. */
static int refuse_special(const char *path, const char *from, struct dtl_loc at,
                          struct dtl_error *error)
{
	struct stat st;

	if (!at.file)
		at.file = from;
	if (strcmp(path, "-") == 0)
		return dtl_error_set(error, at, -EINVAL,
		                     "'-' (standard input) may be named on the command line only");
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return dtl_error_set(error, at, -EINVAL,
		                     "'%s' is not a regular file (standard input, a device or a "
		                     "FIFO may be named on the command line only)",
		                     path);
	return 0;
}

int dtl_confine_check(const char *path, const char *from, struct dtl_loc at,
                      struct dtl_error *error)
{
	struct stat st;
	char *target, *base, *cwd;
	bool ok;
	int r;

	if (from && (r = refuse_special(path, from, at, error)) < 0)
		return r;
	if (!from && (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)))
		return 0; /* typed by the user, or missing: opening it says why */
	target = realpath(path, NULL);
	if (!target)
		return 0; /* a dangling link or a missing file: opening it says why */
	if (from)
		base = real_dir_of(from, stat(from, &st) == 0 && S_ISDIR(st.st_mode));
	else
		base = real_dir_of(path, false);
	cwd = realpath(".", NULL);
	ok = (base && under_root_of(target, base)) || (cwd && under_root_of(target, cwd));
	free(target);
	free(base);
	free(cwd);
	if (ok)
		return 0;
	if (!at.file)
		at.file = from ? from : path;
	return dtl_error_set(error, at, -EACCES,
	                     "'%s' resolves outside the folders dtypelint reads from (the folder "
	                     "of %s, the working directory, their git repositories); refusing to "
	                     "read it",
	                     path, from ? "the file that names it" : "the link");
}

int dtl_confine_tree(const char *path, struct dtl_loc at, struct dtl_error *error)
{
	char *target = realpath(path, NULL), *cwd = realpath(".", NULL);
	char root[PATH_MAX];
	bool ok = target && cwd &&
	          (is_under(target, cwd) ||
	           (git_root(cwd, root, sizeof(root)) && is_under(target, root)));

	free(target);
	free(cwd);
	if (ok)
		return 0;
	if (!at.file)
		at.file = path;
	return dtl_error_set(error, at, -EACCES,
	                     "'%s' resolves outside the working directory and its git "
	                     "repository; refusing to edit it",
	                     path);
}
