/* SPDX-License-Identifier: MIT */
/* Writing a file through a temporary one in the same directory (include/dtypelint/atomic-file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtypelint/atomic-file.h"

static int fail(struct dtl_error *error, const char *path, int code, const char *what)
{
	struct dtl_loc loc = {.file = path};
	return dtl_error_set(error, loc, code, "%s: %s", what, strerror(-code));
}

int dtl_atomic_open(struct dtl_atomic_file *f, const char *path, struct dtl_error *error)
{
	struct stat st;
	mode_t mode = 0666;
	bool exists = stat(path, &st) == 0; /* follows a symlink: what its target is */

	memset(f, 0, sizeof(*f));
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device or a pipe (/dev/stdout, /dev/full): written in place */
		f->out = fopen(path, "w");
		return f->out ? 0 : fail(error, path, -errno, "cannot write");
	}
	if (exists && st.st_nlink > 1) {
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(
		    error, loc, -EPERM,
		    "refusing to write: the file has %lu hard links, and replacing "
		    "it would split it from them",
		    (unsigned long)st.st_nlink);
	}
	if (exists) {
		mode = st.st_mode & 07777;
		/* the symlink's target is replaced, never the link */
		f->target = realpath(path, NULL);
		if (!f->target)
			return fail(error, path, -errno, "cannot resolve");
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
		f->target = strdup(path);
		if (!f->target)
			return -ENOMEM;
	}
	size_t n = strlen(f->target);
	f->tmp_path = malloc(n + 32);
	if (!f->tmp_path) {
		dtl_atomic_abort(f);
		return -ENOMEM;
	}
	int fd = -1;
	for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
		snprintf(f->tmp_path, n + 32, "%s.dtypelint-%ld-%u", f->target, (long)getpid(),
		         attempt);
		fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		int code = -errno;
		free(f->tmp_path);
		f->tmp_path = NULL;
		dtl_atomic_abort(f);
		return fail(error, path, code, "cannot create a temporary file beside it");
	}
	/* the mode asked at creation is masked by the umask: give it the old file's exactly */
	if (exists && fchmod(fd, mode) != 0) {
		int code = -errno;
		close(fd);
		dtl_atomic_abort(f);
		return fail(error, path, code, "cannot keep its mode");
	}
	f->out = fdopen(fd, "w");
	if (!f->out) {
		int code = -errno;
		close(fd);
		dtl_atomic_abort(f);
		return fail(error, path, code, "cannot write");
	}
	return 0;
}

int dtl_atomic_commit(struct dtl_atomic_file *f, struct dtl_error *error)
{
	const char *path = f->target ? f->target : "-";
	bool failed = fflush(f->out) != 0 || ferror(f->out);
	int code = failed ? (errno ? -errno : -EIO) : 0;

	if (!f->tmp_path) {
		/* written in place */
		if (fclose(f->out) != 0 && !code)
			code = errno ? -errno : -EIO;
		f->out = NULL;
		free(f->target);
		f->target = NULL;
		return code ? fail(error, "output", code, "cannot write") : 0;
	}
	if (!code && fsync(fileno(f->out)) != 0)
		code = -errno;
	if (fclose(f->out) != 0 && !code)
		code = errno ? -errno : -EIO;
	f->out = NULL;
	if (!code && rename(f->tmp_path, f->target) != 0)
		code = -errno;
	if (code) {
		fail(error, path, code, "cannot write"); /* the error keeps its own copy of path */
		dtl_atomic_abort(f);
		return code;
	}
	free(f->tmp_path);
	free(f->target);
	f->tmp_path = f->target = NULL;
	return 0;
}

void dtl_atomic_abort(struct dtl_atomic_file *f)
{
	if (f->out)
		fclose(f->out);
	if (f->tmp_path)
		unlink(f->tmp_path);
	free(f->tmp_path);
	free(f->target);
	f->out = NULL;
	f->tmp_path = f->target = NULL;
}
