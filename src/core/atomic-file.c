/* SPDX-License-Identifier: MIT */
/* Writing a file through a temporary one in the same directory
 * (include/dtypelint/core/atomic-file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtypelint/core/atomic-file.h"

static int fail(struct dtl_error *error, const char *path, int code, const char *what)
{
	struct dtl_loc loc = {.file = path};
	return dtl_error_set(error, loc, code, "%s: %s", what, strerror(-code));
}

/* The temporary files a SIGINT or SIGTERM removes: paths copied into static memory, since a
 * signal handler may only call async-signal-safe functions (unlink, sigaction, raise). A few
 * slots: a run has at most a report and an export or a baseline open at once. */
enum { SLOTS = 4, SLOT_PATH = PATH_MAX + 64 };
static char slot_path[SLOTS][SLOT_PATH];
static volatile sig_atomic_t slot_armed[SLOTS];
static struct sigaction old_int, old_term;
static int armed_count;

static void on_signal(int sig)
{
	int saved = errno;
	for (int i = 0; i < SLOTS; i++)
		if (slot_armed[i])
			unlink(slot_path[i]);
	/* die of it as before: the action the program had (the default), raised again once
	 * this handler returns and unblocks it */
	sigaction(sig, sig == SIGINT ? &old_int : &old_term, NULL);
	raise(sig);
	errno = saved;
}

static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, NULL, &old_int);
	sigaction(SIGTERM, NULL, &old_term);
	/* a signal the program ignores (a background job's SIGINT) stays ignored */
	if (old_int.sa_handler != SIG_IGN)
		sigaction(SIGINT, &sa, NULL);
	if (old_term.sa_handler != SIG_IGN)
		sigaction(SIGTERM, &sa, NULL);
}

/* Called with SIGINT and SIGTERM blocked, so the handler never sees half a path. */
static void arm(struct dtl_atomic_file *f)
{
	if (strlen(f->tmp_path) >= SLOT_PATH)
		return;
	for (int i = 0; i < SLOTS; i++) {
		if (slot_armed[i])
			continue;
		strcpy(slot_path[i], f->tmp_path);
		slot_armed[i] = 1;
		f->slot = i + 1;
		if (armed_count++ == 0)
			catch_signals();
		return;
	}
}

static void disarm(struct dtl_atomic_file *f)
{
	if (!f->slot)
		return;
	slot_armed[f->slot - 1] = 0;
	f->slot = 0;
	if (--armed_count == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
}

/* Creates the temporary file exclusively, and arms its removal on a signal before one can
 * come. Returns the descriptor, or -1 with errno set. */
static int create_temporary(struct dtl_atomic_file *f, size_t n, mode_t mode)
{
	sigset_t block, old;
	int fd = -1;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
		snprintf(f->tmp_path, n + 32, "%s.dtypelint-%ld-%u", f->target, (long)getpid(),
		         attempt);
		fd = open(f->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	int saved = errno;
	if (fd >= 0)
		arm(f);
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return fd;
}

/* The owner and group of the file replaced, where the writer may give them (root); else its
 * group alone (a group the writer is in); else the writer's, as any new file. Before the
 * mode: a change of owner clears the set-user-ID and set-group-ID bits. */
static int keep_owner(int fd, const struct stat *st)
{
	if (fchown(fd, st->st_uid, st->st_gid) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	if (fchown(fd, (uid_t)-1, st->st_gid) == 0 || errno == EPERM)
		return 0;
	return -errno;
}

static void remember_identity(struct dtl_atomic_file *f, const struct stat *st)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime_s = st->st_mtim.tv_sec;
	f->mtime_ns = (unsigned long long)st->st_mtim.tv_nsec;
}

static bool same_identity(const struct dtl_atomic_file *f, const struct stat *st)
{
	return S_ISREG(st->st_mode) && f->dev == st->st_dev && f->ino == st->st_ino &&
	       f->size == st->st_size && f->mtime_s == st->st_mtim.tv_sec &&
	       f->mtime_ns == (unsigned long long)st->st_mtim.tv_nsec;
}

void dtl_atomic_expect(struct dtl_atomic_file *f, const char *data, size_t size)
{
	f->expect = data;
	f->expect_size = size;
}

/* Whether the target is still the file open saw, holding what dtl_atomic_expect said: its
 * identity, then its bytes (a save within the file system's clock tick keeps the mtime). */
static bool unchanged(const struct dtl_atomic_file *f)
{
	struct stat st;
	char buf[8192];
	size_t at = 0;
	bool same = false;
	int fd = open(f->target, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !same_identity(f, &st) || (size_t)st.st_size != f->expect_size)
		goto out;
	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			same = got == 0 && at == f->expect_size;
			break;
		}
		if ((size_t)got > f->expect_size - at || memcmp(buf, f->expect + at, (size_t)got))
			break;
		at += (size_t)got;
	}
out:
	close(fd);
	return same;
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
	int fd = create_temporary(f, n, mode);
	if (fd < 0) {
		int code = -errno;
		free(f->tmp_path);
		f->tmp_path = NULL;
		dtl_atomic_abort(f);
		return fail(error, path, code, "cannot create a temporary file beside it");
	}
	if (exists) {
		remember_identity(f, &st);
		int code = keep_owner(fd, &st);
		if (code < 0) {
			close(fd);
			dtl_atomic_abort(f);
			return fail(error, path, code, "cannot keep its owner");
		}
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
	if (!code && f->expect && !unchanged(f)) {
		struct dtl_loc loc = {.file = path};
		dtl_error_set(error, loc, -EAGAIN,
		              "the file changed while dtypelint wrote it: it is left as it is "
		              "now; run again");
		dtl_atomic_abort(f);
		return -EAGAIN;
	}
	if (!code && rename(f->tmp_path, f->target) != 0)
		code = -errno;
	if (code) {
		fail(error, path, code, "cannot write"); /* the error keeps its own copy of path */
		dtl_atomic_abort(f);
		return code;
	}
	disarm(f);
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
	disarm(f); /* after the unlink: a signal between them finds nothing left to remove */
	free(f->tmp_path);
	free(f->target);
	f->out = NULL;
	f->tmp_path = f->target = NULL;
}
