/* SPDX-License-Identifier: MIT */
/*
 * Lexical paths: repo-relative URIs (SARIF, GitLab, GitHub annotations), baseline entries
 * relative to the baseline file, per-file-ignores relative to the config file. Lexical means
 * "." and ".." are resolved as text, without following links, so the result depends only on
 * the working directory and the paths as given.
 */
#include <string.h>
#include <unistd.h>

#include "dtypelint/report/report.h"

/* Appends path's segments to buf (an absolute path without trailing '/', or ""), resolving
 * "." and "..". Returns false when buf is too small. */
static bool push_segments(char *buf, size_t size, const char *path)
{
	size_t used = strlen(buf);
	const char *p = path;

	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(buf, '/');
			if (slash) {
				*slash = '\0';
				used = (size_t)(slash - buf);
			}
		} else {
			if (used + 1 + len + 1 > size)
				return false;
			buf[used++] = '/';
			memcpy(buf + used, p, len);
			used += len;
			buf[used] = '\0';
		}
		p += len;
	}
	return true;
}

bool dtl_report_abspath(const char *path, char *buf, size_t size)
{
	if (size < 2)
		return false;
	buf[0] = '\0';
	if (path[0] != '/') {
		char cwd[4096];
		if (!getcwd(cwd, sizeof(cwd)) || !push_segments(buf, size, cwd)) {
			buf[0] = '\0';
			return false;
		}
	}
	if (!push_segments(buf, size, path)) {
		buf[0] = '\0';
		return false;
	}
	if (!buf[0])
		strcpy(buf, "/");
	return true;
}

bool dtl_report_relpath(const char *path, const char *base_dir, char *buf, size_t size)
{
	char abs[4096], base[4096];
	size_t n;

	if (!dtl_report_abspath(path, abs, sizeof(abs)) ||
	    !dtl_report_abspath(base_dir ? base_dir : ".", base, sizeof(base))) {
		if (size)
			buf[0] = '\0';
		return false;
	}
	n = strcmp(base, "/") == 0 ? 0 : strlen(base);
	if (strncmp(abs, base, n) != 0 || (abs[n] != '/' && abs[n] != '\0')) {
		if (strlen(abs) + 1 > size) {
			if (size)
				buf[0] = '\0';
			return false;
		}
		strcpy(buf, abs);
		return false;
	}
	const char *rest = abs[n] == '/' ? abs + n + 1 : abs + n;
	if (!*rest)
		rest = ".";
	if (strlen(rest) + 1 > size) {
		if (size)
			buf[0] = '\0';
		return false;
	}
	strcpy(buf, rest);
	return true;
}

bool dtl_report_relpath_dots(const char *path, const char *base_dir, char *buf, size_t size)
{
	char abs[4096], base[4096];
	size_t common = 0, used = 0;

	if (size)
		buf[0] = '\0';
	if (!dtl_report_abspath(path, abs, sizeof(abs)) ||
	    !dtl_report_abspath(base_dir ? base_dir : ".", base, sizeof(base)))
		return false;
	if (strcmp(base, "/") == 0)
		base[0] = '\0';
	if (strcmp(abs, "/") == 0)
		abs[0] = '\0';
	/* the longest common prefix that ends at a segment boundary */
	for (size_t i = 0;; i++) {
		bool a_end = abs[i] == '\0' || abs[i] == '/',
		     b_end = base[i] == '\0' || base[i] == '/';
		if (a_end && b_end)
			common = i;
		if (abs[i] != base[i] || !abs[i])
			break;
	}
	/* one ".." per segment of base after the common prefix */
	for (const char *p = base + common; *p; p++) {
		if (*p != '/')
			continue;
		if (used + 3 >= size)
			return false;
		memcpy(buf + used, "../", 3);
		used += 3;
	}
	const char *rest = abs + common;
	if (*rest == '/')
		rest++;
	if (!*rest && used) {
		used--; /* "../" -> ".." */
	} else if (!*rest) {
		rest = ".";
	}
	if (used + strlen(rest) + 1 > size) {
		buf[0] = '\0';
		return false;
	}
	memcpy(buf + used, rest, strlen(rest) + 1);
	return true;
}
