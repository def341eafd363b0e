/* SPDX-License-Identifier: MIT */
/*
 * Baselines, for adopting dtypelint on a project that already has findings
 * (as ESLint's bulk suppressions, https://eslint.org/docs/latest/use/suppressions, and
 * PHPStan's baseline, https://phpstan.org/user-guide/baseline): --write-baseline records every
 * current finding,
 * --baseline hides the recorded ones. Entries are keyed by rule + file + group/tensor (the
 * message when a finding names neither), never by line, and counted; entries that match
 * fewer findings than their count are stale and reported as notes on standard error.
 *
 *   {"version": 1, "tool": "dtypelint", "entries": [
 *     {"rule": "DT101", "file": "m.yaml", "group": "model.layers.0",
 *      "tensor": "model.layers.0.mlp.gate.weight", "count": 1}]}
 *
 * Files are relative to the baseline file's directory (with ".." when outside it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "dtypelint/core/atomic-file.h"
#include "dtypelint/core/json-writer.h"
#include "dtypelint/model/schema.h"

/* the directory of path, lexically absolute ("-": the working directory) */
static const char *base_dir(const char *path, struct dtl_arena *arena)
{
	char dir[4096];

	if (!dtl_report_abspath(strcmp(path, "-") == 0 ? "." : path, dir, sizeof(dir)))
		return NULL;
	if (strcmp(path, "-") != 0) {
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	return dtl_arena_strndup(arena, dir, strlen(dir));
}

static const char *entry_file(const char *file, const char *dir, struct dtl_arena *arena)
{
	char rel[4096];

	dtl_report_relpath_dots(file, dir, rel, sizeof(rel));
	return dtl_arena_strndup(arena, rel[0] ? rel : file, strlen(rel[0] ? rel : file));
}

/* "rule\0file\0group\ntensor" or "rule\0file\0\n\nmessage", with its length */
static char *index_key(struct dtl_arena *arena, const char *rule, const char *file,
                       const char *group, const char *tensor, const char *message, size_t *ret_len)
{
	bool named = (group && *group) || (tensor && *tensor);
	char *key = named ? dtl_arena_sprintf(arena, "%s%c%s%c%s\n%s", rule, 0, file, 0,
	                                      group ? group : "", tensor ? tensor : "")
	                  : dtl_arena_sprintf(arena, "%s%c%s%c\n\n%s", rule, 0, file, 0,
	                                      message ? message : "");
	if (!key)
		return NULL;
	size_t len = strlen(rule) + 1 + strlen(file) + 1;
	len += strlen(key + len);
	*ret_len = len;
	return key;
}

static const char *finding_group(const struct dtl_finding *f)
{
	return f->group ? f->group->name : NULL;
}

static const char *finding_tensor(const struct dtl_report_input *in, const struct dtl_finding *f)
{
	return f->tensor_count ? f->view.tensors[0].name : NULL;
}

static int optional_string(const struct dtl_schema *s, const struct dtl_node *map, const char *key,
                           const char **ret)
{
	const struct dtl_node *v = dtl_node_get(map, key);

	*ret = NULL;
	if (!v || v->type == DTL_NODE_NULL)
		return 0;
	if (v->type != DTL_NODE_STRING)
		return dtl_schema_type_error(s, v, key, "a string or null");
	*ret = dtl_arena_strndup(s->arena, v->string.text, v->string.len);
	return *ret ? 0 : -ENOMEM;
}

static int parse_entry(const struct dtl_schema *s, const struct dtl_node *map,
                       struct dtl_baseline *b)
{
	static const char *const keys[] = {"rule",    "file",  "group", "tensor",
	                                   "message", "count", NULL};
	struct dtl_baseline_entry *e;
	const struct dtl_node *count;
	int64_t n = 1;
	int r = dtl_schema_map(s, map, "entries[]");

	if (r < 0 || (r = dtl_schema_check_keys(s, map, "entries[]", keys)) < 0)
		return r;
	e = dtl_vec_push(&b->entries, s->arena, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->loc = dtl_schema_loc(s, map);
	if ((r = optional_string(s, map, "rule", &e->rule)) < 0 ||
	    (r = optional_string(s, map, "file", &e->file)) < 0 ||
	    (r = optional_string(s, map, "group", &e->group)) < 0 ||
	    (r = optional_string(s, map, "tensor", &e->tensor)) < 0 ||
	    (r = optional_string(s, map, "message", &e->message)) < 0)
		return r;
	if (!e->rule || !e->file)
		return dtl_schema_fail(s, map, "a baseline entry needs a 'rule' and a 'file'");
	count = dtl_node_get(map, "count");
	if (count && (r = dtl_schema_int(s, count, "count", 1, INT64_MAX, &n)) < 0)
		return r;
	e->count = (size_t)n;
	return 0;
}

int dtl_baseline_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                      struct dtl_baseline *ret, struct dtl_error *error)
{
	static const char *const keys[] = {"version", "tool", "entries", NULL};
	struct dtl_baseline b;
	struct dtl_source source;
	struct dtl_node *root = NULL;
	const struct dtl_node *version, *entries;
	int r;

	memset(&b, 0, sizeof(b));
	b.path = dtl_arena_strndup(arena, path, strlen(path));
	b.dir = base_dir(path, arena);
	if (!b.path || !b.dir)
		return -ENOMEM;
	dtl_strmap_init(&b.index, arena);
	struct dtl_schema s = {.file = b.path, .arena = arena, .limits = limits, .error = error};
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(error, loc, -EISDIR,
		                     "is a directory, expected a baseline file");
	}
	r = dtl_source_read(&source, path, limits, error);
	if (r < 0)
		return r;
	r = dtl_doc_parse(&source, arena, limits, &root, error);
	if (r >= 0)
		r = dtl_schema_root_map(&s, root, "a baseline");
	if (r >= 0)
		r = dtl_schema_check_keys(&s, root, "baseline", keys);
	if (r >= 0) {
		version = dtl_node_get(root, "version");
		entries = dtl_node_get(root, "entries");
		if (!version || version->type != DTL_NODE_INT || version->integer != 1)
			r = dtl_schema_fail(&s, version ? version : root,
			                    "not a dtypelint baseline of version 1 (write one with "
			                    "--write-baseline)");
		else if (!entries || entries->type != DTL_NODE_SEQ)
			r = dtl_schema_fail(&s, entries ? entries : root,
			                    "'entries' must be a list of baseline entries");
		for (size_t i = 0; r >= 0 && i < entries->seq.count; i++)
			r = parse_entry(&s, &entries->seq.items[i], &b);
	}
	dtl_source_fini(&source);
	if (r < 0)
		return r;
	struct dtl_baseline_entry *e = b.entries.items;
	for (size_t i = 0; i < b.entries.count; i++) {
		size_t len;
		char *key = index_key(arena, e[i].rule, e[i].file, e[i].group, e[i].tensor,
		                      e[i].message, &len);
		if (!key)
			return -ENOMEM;
		int64_t first = dtl_strmap_put(&b.index, key, len, (int64_t)i);
		if (first < 0)
			return -ENOMEM;
		if ((size_t)first != i) /* a repeated entry adds to the first one's count */
			e[first].count += e[i].count;
	}
	*ret = b;
	return 0;
}

size_t dtl_baseline_filter(struct dtl_baseline *b, struct dtl_report_input *inputs,
                           struct dtl_findings **findings, size_t n, struct dtl_arena *arena)
{
	struct dtl_baseline_entry *e = b->entries.items;
	size_t removed = 0;

	for (size_t i = 0; i < n; i++) {
		struct dtl_finding *f = findings[i]->items.items;
		size_t kept = 0;
		for (size_t k = 0; k < findings[i]->items.count; k++) {
			const char *file =
			    entry_file(f[k].loc.file ? f[k].loc.file : "-", b->dir, arena);
			size_t len;
			char *key =
			    file ? index_key(arena, f[k].rule->id, file, finding_group(&f[k]),
			                     finding_tensor(&inputs[i], &f[k]), f[k].message, &len)
			         : NULL;
			int64_t at = key ? dtl_strmap_get(&b->index, key, len) : -1;
			if (at >= 0 && e[at].used < e[at].count) {
				e[at].used++;
				removed++;
				continue;
			}
			f[kept++] = f[k];
		}
		findings[i]->items.count = kept;
	}
	return removed;
}

size_t dtl_baseline_report_stale(const struct dtl_baseline *b, FILE *out)
{
	const struct dtl_baseline_entry *e = b->entries.items;
	struct dtl_strmap seen;
	struct dtl_arena scratch;
	size_t stale = 0;

	/* repeated entries were merged into the first: report that one only */
	dtl_arena_init(&scratch);
	dtl_strmap_init(&seen, &scratch);
	for (size_t i = 0; i < b->entries.count; i++) {
		size_t len;
		char *key = index_key(&scratch, e[i].rule, e[i].file, e[i].group, e[i].tensor,
		                      e[i].message, &len);
		int64_t first = key ? dtl_strmap_put(&seen, key, len, (int64_t)i) : -1;
		if (first != (int64_t)i || e[i].used >= e[i].count)
			continue;
		stale++;
		fprintf(out, "%s:%u:%u: note: stale baseline entry: %s in '%s'", b->path,
		        e[i].loc.line, e[i].loc.column, e[i].rule, e[i].file);
		if (e[i].group)
			fprintf(out, ", group '%s'", e[i].group);
		if (e[i].tensor)
			fprintf(out, ", tensor '%s'", e[i].tensor);
		if (!e[i].group && !e[i].tensor && e[i].message)
			fprintf(out, ", message '%s'", e[i].message);
		fprintf(out,
		        " matches %zu of its %zu finding%s; rewrite the baseline with "
		        "--write-baseline\n",
		        e[i].used, e[i].count, e[i].count == 1 ? "" : "s");
	}
	dtl_arena_fini(&scratch);
	return stale;
}

struct row {
	const char *rule, *file, *group, *tensor, *message;
	size_t count;
};

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int compare_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c;

	if ((c = cmp_str(a->file, b->file)) || (c = cmp_str(a->rule, b->rule)) ||
	    (c = cmp_str(a->group, b->group)) || (c = cmp_str(a->tensor, b->tensor)))
		return c;
	return cmp_str(a->message, b->message);
}

static void field(struct dtl_json *w, const char *name, const char *value)
{
	if (value)
		dtl_json_key_string(w, name, value);
}

int dtl_baseline_write(const char *path, const struct dtl_report_input *inputs, size_t n,
                       struct dtl_arena *arena, size_t *ret_entries, struct dtl_error *error)
{
	const char *dir = base_dir(path, arena);
	struct dtl_strmap index;
	struct dtl_vec rows = {0}; /* struct row */
	FILE *out;

	if (!dir)
		return -ENOMEM;
	dtl_strmap_init(&index, arena);
	for (size_t i = 0; i < n; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++) {
			struct row row = {
			    .rule = f[k].rule->id,
			    .file = entry_file(f[k].loc.file ? f[k].loc.file : "-", dir, arena),
			    .group = finding_group(&f[k]),
			    .tensor = finding_tensor(&inputs[i], &f[k]),
			    .count = 1};
			size_t len;
			if (!row.file)
				return -ENOMEM;
			if (!row.group && !row.tensor)
				row.message = f[k].message;
			char *key = index_key(arena, row.rule, row.file, row.group, row.tensor,
			                      row.message, &len);
			if (!key)
				return -ENOMEM;
			int64_t at = dtl_strmap_put(&index, key, len, (int64_t)rows.count);
			if (at < 0)
				return -ENOMEM;
			if ((size_t)at < rows.count) {
				((struct row *)rows.items)[at].count++;
				continue;
			}
			struct row *slot = dtl_vec_push(&rows, arena, sizeof(*slot));
			if (!slot)
				return -ENOMEM;
			*slot = row;
		}
	}
	if (rows.count > 1)
		qsort(rows.items, rows.count, sizeof(struct row), compare_rows);
	struct dtl_atomic_file file = {0};
	if (strcmp(path, "-") == 0) {
		out = stdout;
	} else {
		int rc = dtl_atomic_open(&file, path, error);
		if (rc < 0)
			return rc;
		out = file.out;
	}
	struct dtl_json w;
	dtl_json_init(&w, out);
	dtl_json_begin_object(&w);
	dtl_json_key_uint(&w, "version", 1);
	dtl_json_key_string(&w, "tool", "dtypelint");
	dtl_json_key(&w, "entries");
	dtl_json_begin_array_block(&w);
	const struct row *r = rows.items;
	for (size_t i = 0; i < rows.count; i++) {
		dtl_json_begin_object(&w);
		dtl_json_key_string(&w, "rule", r[i].rule);
		field(&w, "file", r[i].file);
		field(&w, "group", r[i].group);
		field(&w, "tensor", r[i].tensor);
		field(&w, "message", r[i].message);
		dtl_json_key_uint(&w, "count", r[i].count);
		dtl_json_end_object(&w);
	}
	dtl_json_end_array(&w);
	dtl_json_end_object(&w);
	if (out != stdout) {
		int rc = dtl_atomic_commit(&file, error);
		if (rc < 0)
			return rc;
	} else if (dtl_json_finish(&w) < 0 || fflush(out) != 0) {
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(error, loc, -EIO, "cannot write the baseline");
	}
	*ret_entries = rows.count;
	return 0;
}
