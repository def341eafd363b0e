/* SPDX-License-Identifier: MIT */
/*
 * Reading an input file into memory (source.h), the first step of the flow: only a regular file
 * within --max-file-size, or a pipe, is read (a directory or a device is refused with an error),
 * into one malloc'd buffer with a NUL after it; dtl_source_init_mem() wraps bytes already in
 * memory the same way.
 * dtl_source_loc_at() turns a byte offset into the file:line:col of a message (counting lines
 * then, not before: most inputs have no error). Opening never blocks on a FIFO nor makes a
 * terminal the process's controlling one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/input/source.h"
#include "huge-pages.h"

static int fail(struct dtl_error *error, const char *path, int code, const char *what)
{
	struct dtl_loc loc = {.file = path, .line = 0, .column = 0};
	return dtl_error_set(error, loc, code, "%s", what);
}

static int fail_errno(struct dtl_error *error, const char *path, int e, const char *what)
{
	struct dtl_loc loc = {.file = path};
	return dtl_error_set(error, loc, -e, "%s: %s", what, strerror(e));
}

/* "-": standard input, under the same limits (a dup, so that closing it keeps fd 0);
 * O_NONBLOCK: opening a FIFO nobody writes to must not wait for a writer (it reads as
 * empty); reads block again once we know what the file is (check_input) */
static int open_input(const char *path, struct dtl_error *error, int *ret_fd)
{
	int fd;

	if (strcmp(path, "-") == 0)
		fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	else
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return fail_errno(error, path, errno, "cannot open");
	*ret_fd = fd;
	return 0;
}

/* Only a regular file within the size limit, or a pipe, is an input. */
static int check_input(int fd, const char *path, const struct stat *st,
                       const struct dtl_limits *limits, struct dtl_error *error)
{
	if (S_ISDIR(st->st_mode))
		return fail(error, path, -EISDIR, "is a directory, expected a manifest file");
	/* devices (/dev/zero, /dev/urandom, a tty) are no input and may never end */
	if (!S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode))
		return fail(error, path, -EINVAL, "not a regular file or a pipe");
	if (S_ISFIFO(st->st_mode)) {
		int flags = fcntl(fd, F_GETFL);
		if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
			return fail_errno(error, path, errno, "cannot read");
	}
	if (S_ISREG(st->st_mode) && (uint64_t)st->st_size > limits->max_file_size) {
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(
		    error, loc, -EFBIG,
		    "file is %lld bytes, over the limit of %zu bytes (--max-file-size)",
		    (long long)st->st_size, limits->max_file_size);
	}
	return 0;
}

/* Reads fd to its end into a malloc'd buffer with a NUL after the *ret_size bytes. */
static int read_all(int fd, const char *path, const struct stat *st,
                    const struct dtl_limits *limits, struct dtl_error *error, char **ret_data,
                    size_t *ret_size)
{
	/* room for max_file_size bytes at most: a pipe, or a file that grows, is cut off one byte
	 * past the limit, never read to the end */
	size_t most = limits->max_file_size < SIZE_MAX ? limits->max_file_size + 1 : SIZE_MAX;
	size_t capacity = S_ISREG(st->st_mode) ? (size_t)st->st_size + 1 : 65536, size = 0;
	char *data;
	int r = 0;

	if (capacity > most)
		capacity = most;
	data = malloc(capacity);
	if (!data)
		return fail(error, path, -ENOMEM, "out of memory");
	dtl_advise_huge_pages(data, capacity); /* read() copies the file into it page by page */
	for (;;) {
		char probe;
		char *into = data + size;
		size_t room = capacity - size - 1;
		if (room == 0) {
			/* full at the size fstat() gave: read one byte more to see the end of
			 * the file (or that it grew, or that it is a stream) */
			into = &probe;
			room = 1;
		}
		ssize_t n = read(fd, into, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = fail_errno(error, path, errno, "cannot read");
			goto out;
		}
		if (n == 0)
			break;
		if (into == &probe) {
			if (size >= limits->max_file_size) {
				struct dtl_loc loc = {.file = path};
				r = dtl_error_set(
				    error, loc, -EFBIG,
				    "input is over the limit of %zu bytes (--max-file-size)",
				    limits->max_file_size);
				goto out;
			}
			size_t grown = capacity > most / 2 ? most : capacity * 2;
			char *bigger = realloc(data, grown);
			if (!bigger) {
				r = fail(error, path, -ENOMEM, "out of memory");
				goto out;
			}
			data = bigger;
			capacity = grown;
			data[size] = probe;
		}
		size += (size_t)n;
	}
	data[size] = '\0';
	*ret_data = data;
	*ret_size = size;
	data = NULL;
out:
	free(data);
	return r;
}

int dtl_source_read(struct dtl_source *source, const char *path, const struct dtl_limits *limits,
                    struct dtl_error *error)
{
	struct stat st;
	char *data = NULL, *path_copy = NULL;
	size_t size = 0;
	int fd = -1, r;

	r = open_input(path, error, &fd);
	if (r < 0)
		return r;
	if (fstat(fd, &st) < 0) {
		r = fail_errno(error, path, errno, "cannot stat");
		goto out;
	}
	if (S_ISREG(st.st_mode))
		dtl_read_log_note(st.st_dev, st.st_ino); /* no output may replace it */
	if ((r = check_input(fd, path, &st, limits, error)) < 0 ||
	    (r = read_all(fd, path, &st, limits, error, &data, &size)) < 0)
		goto out;
	path_copy = strdup(path);
	if (!path_copy) {
		r = fail(error, path, -ENOMEM, "out of memory");
		goto out;
	}
	source->path = path_copy;
	source->data = data;
	source->size = size;
	data = NULL;
out:
	close(fd);
	free(data);
	return r;
}

int dtl_source_init_mem(struct dtl_source *source, const char *path, const char *data, size_t size)
{
	char *copy = malloc(size + 1);
	char *path_copy = strdup(path);

	if (!copy || !path_copy) {
		free(copy);
		free(path_copy);
		return -ENOMEM;
	}
	if (size)
		memcpy(copy, data, size);
	copy[size] = '\0';
	source->path = path_copy;
	source->data = copy;
	source->size = size;
	return 0;
}

void dtl_source_fini(struct dtl_source *source)
{
	if (!source)
		return;
	free(source->path);
	free(source->data);
	source->path = NULL;
	source->data = NULL;
	source->size = 0;
}

struct dtl_loc dtl_source_loc_at(const struct dtl_source *source, size_t offset)
{
	struct dtl_loc loc = {.file = source->path, .line = 1, .column = 1};

	if (offset > source->size)
		offset = source->size;
	for (size_t i = 0; i < offset; i++) {
		unsigned char c = (unsigned char)source->data[i];
		if (c == '\n') {
			loc.line++;
			loc.column = 1;
		} else if (c == '\r') {
			if (i + 1 < source->size && source->data[i + 1] == '\n')
				continue;
			loc.line++;
			loc.column = 1;
		} else if ((c & 0xC0) != 0x80) {
			loc.column++;
		}
	}
	return loc;
}

size_t dtl_source_find_invalid_utf8(const struct dtl_source *source)
{
	const unsigned char *s = (const unsigned char *)source->data;
	size_t n = source->size, i = 0;

	while (i < n) {
		/* ASCII fast path: 32 bytes without a high bit at a time, then 8 */
		uint64_t word[4];
		if (n - i >= 32) {
			memcpy(word, s + i, 32);
			if (!((word[0] | word[1] | word[2] | word[3]) &
			      UINT64_C(0x8080808080808080))) {
				i += 32;
				continue;
			}
		}
		if (n - i >= 8) {
			memcpy(word, s + i, 8);
			if (!(word[0] & UINT64_C(0x8080808080808080))) {
				i += 8;
				continue;
			}
		}
		unsigned char c = s[i];
		size_t len;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			len = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			len = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (i + len > n)
			return i;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return i;
		i += len;
	}
	return (size_t)-1;
}
