/* SPDX-License-Identifier: MIT */
/*
 * The line-oriented dependency files (requirements and constraint files with their -r/-c
 * includes, `pip freeze` output, a Dockerfile's `pip install` lines), which file is which (the
 * YAML, JSON and TOML ones are read into a tree and handed to requirements.c), and finding
 * them beside a set-up up to its repository's root (requirements.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtypelint/input/doc.h"
#include "requirements-private.h"

enum { MAX_INCLUDE_DEPTH = 8, MAX_FILES = 64 };

enum file_kind { KIND_TEXT, KIND_DOCKER, KIND_TREE, KIND_TOML };

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && strcmp(s + n - t, tail) == 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static enum file_kind kind_of(const char *path)
{
	const char *b = base_name(path);

	if (strcmp(b, "Dockerfile") == 0 || strncmp(b, "Dockerfile.", 11) == 0 ||
	    ends_with(b, ".Dockerfile") || strcmp(b, "Containerfile") == 0)
		return KIND_DOCKER;
	if (ends_with(b, ".json") || ends_with(b, ".yml") || ends_with(b, ".yaml") ||
	    strcmp(b, "Pipfile.lock") == 0)
		return KIND_TREE;
	if (ends_with(b, ".toml") || ends_with(b, ".lock"))
		return KIND_TOML;
	return KIND_TEXT;
}

static int read_file(struct dtl_req_reader *rd, const char *path, struct dtl_loc at);

/* "-r FILE", "--requirement=FILE", "-c FILE", "--constraint FILE": the path, or NULL */
static const char *include_path(const char *t, size_t n, size_t *ret_len)
{
	static const char *const opts[] = {"--requirement", "--constraint", "-r", "-c"};
	for (size_t k = 0; k < 4; k++) {
		size_t ol = strlen(opts[k]);
		if (n <= ol || memcmp(t, opts[k], ol) != 0 ||
		    !(t[ol] == ' ' || t[ol] == '\t' || t[ol] == '='))
			continue;
		t += ol + 1;
		n -= ol + 1;
		while (n && (*t == ' ' || *t == '\t'))
			t++, n--;
		size_t len = 0;
		while (len < n && t[len] != ' ' && t[len] != '\t' && t[len] != '\r')
			len++;
		*ret_len = len;
		return len ? t : NULL;
	}
	return NULL;
}

static int include(struct dtl_req_reader *rd, const char *t, size_t n, struct dtl_loc at)
{
	size_t len;
	const char *p = include_path(t, n, &len);

	if (!p)
		return 0; /* another option: --index-url, -e, --hash, ... */
	if (rd->depth >= MAX_INCLUDE_DEPTH || rd->files >= MAX_FILES)
		return dtl_error_set(rd->error, at, -ELOOP,
		                     "requirement files include each other more than %d deep or "
		                     "more than %d files",
		                     MAX_INCLUDE_DEPTH, MAX_FILES);
	char *rel = dtl_arena_strndup(rd->arena, p, len);
	const char *slash = strrchr(rd->file, '/');
	const char *path =
	    rel && rel[0] != '/' && slash
	        ? dtl_arena_sprintf(rd->arena, "%.*s/%s", (int)(slash - rd->file), rd->file, rel)
	        : rel;
	if (!path)
		return -ENOMEM;
	/* an include must stay in the repository: a pull request must not make the linter read
	 * a runner's files (the same rule as every file another file names) */
	int r = dtl_confine_check(path, rd->file, at, rd->error);
	if (r < 0)
		return r;
	const char *outer = rd->file;
	rd->depth++;
	r = read_file(rd, path, at);
	rd->depth--;
	rd->file = outer;
	return r;
}

/* requirements.txt, constraints.txt, pip freeze: one requirement per line */
static int read_text(struct dtl_req_reader *rd, const struct dtl_source *src)
{
	const char *s = src->data, *end = s + src->size;
	uint32_t line = 0;
	int r = 0;

	while (s < end && r == 0) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		size_t i = 0;
		line++;
		while (i < n && (s[i] == ' ' || s[i] == '\t'))
			i++;
		struct dtl_loc loc = {rd->file, line, (uint32_t)i + 1};
		if (i < n && s[i] == '-')
			r = include(rd, s + i, n - i, loc);
		else if (i < n && s[i] != '#')
			r = dtl_req_record(rd, s + i, n - i, loc, false, NULL);
		s += n + (nl != NULL);
	}
	return r;
}

/* pip options that take a value: their value is not a requirement */
static bool takes_value(const char *t, size_t n)
{
	static const char *const opts[] = {"-r",
	                                   "-c",
	                                   "-i",
	                                   "-f",
	                                   "-t",
	                                   "-e",
	                                   "--requirement",
	                                   "--constraint",
	                                   "--index-url",
	                                   "--extra-index-url",
	                                   "--find-links",
	                                   "--target",
	                                   "--prefix",
	                                   "--editable",
	                                   "--root",
	                                   "--platform",
	                                   "--python-version"};
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
		if (strlen(opts[k]) == n && memcmp(t, opts[k], n) == 0)
			return true;
	return false;
}

struct docker_scan {
	int state; /* 0: outside, 1: saw pip (or pip3), 2: in `pip install`'s arguments */
	bool skip_next;
};

static int docker_word(struct dtl_req_reader *rd, struct docker_scan *ds, const char *w, size_t n,
                       struct dtl_loc loc)
{
	if ((n == 2 && memcmp(w, "&&", 2) == 0) || (n == 2 && memcmp(w, "||", 2) == 0) ||
	    (n == 1 && (*w == ';' || *w == '|'))) {
		ds->state = 0;
		return 0;
	}
	if (ds->state == 0) {
		bool pip = (n == 3 && memcmp(w, "pip", 3) == 0) ||
		           (n == 4 && memcmp(w, "pip3", 4) == 0) ||
		           (n > 4 && memcmp(w + n - 4, "/pip", 4) == 0);
		ds->state = pip ? 1 : 0;
		return 0;
	}
	if (ds->state == 1) {
		ds->state = n == 7 && memcmp(w, "install", 7) == 0 ? 2 : 0;
		return 0;
	}
	if (ds->skip_next) {
		ds->skip_next = false;
		return 0;
	}
	if (w[0] == '-') {
		ds->skip_next = takes_value(w, n);
		return 0;
	}
	if (n >= 2 && (w[0] == '"' || w[0] == '\'') && w[n - 1] == w[0]) {
		w++, n -= 2;
		loc.column++;
	}
	return dtl_req_record(rd, w, n, loc, false, NULL);
}

/* A Dockerfile: the requirements of every `pip install` (RUN lines, `\` continuations,
 * `&&` chains); `pip install -r FILE` names a file in the image, not read */
static int read_docker(struct dtl_req_reader *rd, const struct dtl_source *src)
{
	struct docker_scan ds = {0};
	const char *s = src->data;
	size_t n = src->size, i = 0, line_start = 0;
	uint32_t line = 1;
	int r = 0;

	while (i < n && r == 0) {
		char c = s[i];
		if (c == '\n') {
			/* a line not continued by `\` ends the RUN instruction */
			size_t k = i;
			while (k > line_start && (s[k - 1] == ' ' || s[k - 1] == '\r'))
				k--;
			if (!(k > line_start && s[k - 1] == '\\'))
				ds.state = 0;
			line++;
			line_start = ++i;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\\') {
			i++;
			continue;
		}
		size_t start = i;
		char quote = (c == '"' || c == '\'') ? c : 0;
		i++;
		while (i < n && s[i] != '\n' &&
		       (quote ? s[i - 1] != quote || i - 1 == start
		              : s[i] != ' ' && s[i] != '\t' && s[i] != '\r'))
			i++;
		struct dtl_loc loc = {rd->file, line, (uint32_t)(start - line_start) + 1};
		r = docker_word(rd, &ds, s + start, i - start, loc);
	}
	return r;
}

static int read_tree(struct dtl_req_reader *rd, const struct dtl_source *src)
{
	struct dtl_node *root;
	int r = dtl_doc_parse(src, rd->arena, rd->limits, &root, rd->error);
	return r < 0 ? r : dtl_req_read_tree(rd, root);
}

/* pyproject.toml, uv.lock, poetry.lock, pylock.toml (the TOML reader of src/input) */
static int read_toml(struct dtl_req_reader *rd, const struct dtl_source *src)
{
	struct dtl_node *root;
	int r = dtl_doc_parse_toml(src, rd->arena, rd->limits, &root, rd->error);
	return r < 0 ? r : dtl_req_read_toml(rd, root);
}

static int read_file(struct dtl_req_reader *rd, const char *path, struct dtl_loc at)
{
	struct dtl_source src;
	enum file_kind kind = kind_of(path);
	int r;

	rd->file = dtl_arena_strndup(rd->arena, path, strlen(path));
	if (!rd->file)
		return -ENOMEM;
	rd->files++;
	r = dtl_source_read(&src, path, rd->limits, rd->error);
	if (r < 0)
		return r;
	if (kind == KIND_DOCKER)
		r = read_docker(rd, &src);
	else if (kind == KIND_TREE)
		r = read_tree(rd, &src);
	else if (kind == KIND_TOML)
		r = read_toml(rd, &src);
	else
		r = read_text(rd, &src);
	dtl_source_fini(&src);
	return r;
}

int dtl_requirements_read(const char *path, struct dtl_arena *arena,
                          const struct dtl_limits *limits, struct dtl_requirements *into,
                          struct dtl_error *error)
{
	struct dtl_req_reader rd = {.arena = arena, .limits = limits, .into = into, .error = error};
	int r = read_file(&rd, path, (struct dtl_loc){0});

	if (r < 0)
		return r;
	for (int fw = 0; fw < DTL_FW_COUNT; fw++)
		if (rd.got[fw].present && !into->fw[fw].present)
			into->fw[fw] = rd.got[fw];
	into->files += rd.files;
	return 0;
}

/* The order files are read in within one folder: what is installed (locks, freezes) before
 * what is asked for; -1: not a dependency file */
static int rank_of(const char *name)
{
	if (strcmp(name, "uv.lock") == 0 || strcmp(name, "poetry.lock") == 0 ||
	    strcmp(name, "pylock.toml") == 0 ||
	    (strncmp(name, "pylock.", 7) == 0 && ends_with(name, ".toml")) ||
	    strcmp(name, "Pipfile.lock") == 0 || strcmp(name, "conda-lock.yml") == 0 ||
	    ends_with(name, ".conda-lock.yml"))
		return 0;
	if ((strncmp(name, "requirements", 12) == 0 || strncmp(name, "constraints", 11) == 0) &&
	    ends_with(name, ".txt"))
		return 1;
	if (strcmp(name, "pyproject.toml") == 0)
		return 2;
	if (strcmp(name, "environment.yml") == 0 || strcmp(name, "environment.yaml") == 0)
		return 3;
	if (strcmp(name, "Dockerfile") == 0)
		return 4;
	return -1;
}

struct found {
	const char *name;
	int rank;
};

static int by_rank(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/* dir/name, or name alone for "." */
static const char *join(struct dtl_arena *arena, const char *dir, const char *name)
{
	if (strcmp(dir, ".") == 0)
		return dtl_arena_strndup(arena, name, strlen(name));
	return dtl_arena_sprintf(arena, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", name);
}

static int read_folder(const char *dir, struct dtl_arena *arena, const struct dtl_limits *limits,
                       struct dtl_requirements *into, struct dtl_error *error)
{
	struct found list[32];
	size_t count = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && count < sizeof(list) / sizeof(list[0])) {
		int rank = rank_of(e->d_name);
		if (rank < 0)
			continue;
		list[count].name = dtl_arena_strndup(arena, e->d_name, strlen(e->d_name));
		list[count].rank = rank;
		if (!list[count++].name) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	qsort(list, count, sizeof(list[0]), by_rank);
	for (size_t i = 0; i < count && r == 0; i++) {
		const char *path = join(arena, dir, list[i].name);
		struct stat st;
		if (!path)
			return -ENOMEM;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		r = dtl_confine_check(path, NULL, (struct dtl_loc){0}, error);
		if (r == 0)
			r = dtl_requirements_read(path, arena, limits, into, error);
	}
	return r;
}

/* The folder above dir, lexically: "a/b" -> "a", "a" -> ".", "." -> "..", ".." -> "../.." */
static const char *parent_of(struct dtl_arena *arena, const char *dir)
{
	const char *b = base_name(dir);
	if (strcmp(dir, ".") == 0)
		return "..";
	if (strcmp(b, "..") == 0)
		return join(arena, dir, "..");
	if (b == dir)
		return ".";
	if (b - 1 == dir)
		return "/";
	return dtl_arena_strndup(arena, dir, (size_t)(b - 1 - dir));
}

static bool is_repo_root(struct dtl_arena *arena, const char *dir)
{
	struct stat st;
	const char *git = join(arena, dir, ".git");
	return git && lstat(git, &st) == 0;
}

static bool same_folder(const char *a, const char *b)
{
	struct stat x, y;
	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int dtl_requirements_find(const char *start, struct dtl_arena *arena,
                          const struct dtl_limits *limits, struct dtl_requirements *into,
                          struct dtl_error *error)
{
	struct stat st;
	const char *dir = start, *folders[64];
	size_t n = 0;
	bool in_repo = false;

	if (stat(start, &st) < 0 || !S_ISDIR(st.st_mode)) {
		const char *slash = strrchr(start, '/');
		dir = !slash           ? "."
		      : slash == start ? "/"
		                       : dtl_arena_strndup(arena, start, (size_t)(slash - start));
	}
	/* the folders from start's up to the repository root, nearest first */
	while (dir && n < sizeof(folders) / sizeof(folders[0])) {
		folders[n++] = dir;
		if (is_repo_root(arena, dir)) {
			in_repo = true;
			break;
		}
		const char *up = parent_of(arena, dir);
		if (!up || same_folder(up, dir))
			break;
		dir = up;
	}
	if (!dir)
		return -ENOMEM;
	if (!in_repo)
		n = 1;
	for (size_t i = 0; i < n; i++) {
		int r = read_folder(folders[i], arena, limits, into, error);
		if (r < 0)
			return r;
	}
	return 0;
}
