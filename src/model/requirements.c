/* SPDX-License-Identifier: MIT */
/*
 * Reading framework versions from the files a Python project keeps (requirements.h). Only the
 * frameworks dtypelint models are read (rules/versions.yaml's newest:); every other line is left
 * alone, since these files hold much that is not ours to judge (index URLs, editable installs,
 * markers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtypelint/input/doc.h"
#include "dtypelint/model/requirements.h"
#include "requirements-private.h"

/* PyPI's names (PEP 503 normalized) and conda's for each framework */
static const struct {
	const char *name;
	enum dtl_framework fw;
} known_names[] = {
    {"torch", DTL_FW_TORCH},
    {"pytorch", DTL_FW_TORCH},
    {"transformers", DTL_FW_TRANSFORMERS},
    {"peft", DTL_FW_PEFT},
    {"deepspeed", DTL_FW_DEEPSPEED},
    {"accelerate", DTL_FW_ACCELERATE},
    {"trl", DTL_FW_TRL},
    {"bitsandbytes", DTL_FW_BITSANDBYTES},
    {"nemo-automodel", DTL_FW_AUTOMODEL},
};

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

/* PEP 503: case-insensitive, runs of -_. are one '-' */
int dtl_req_framework(const char *name, size_t len, enum dtl_framework *ret)
{
	char norm[32];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (c == '_' || c == '.')
			c = '-';
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == '-' && n > 0 && norm[n - 1] == '-')
			continue;
		if (n + 1 >= sizeof(norm))
			return -ENOENT;
		norm[n++] = c;
	}
	norm[n] = 0;
	for (size_t k = 0; k < sizeof(known_names) / sizeof(known_names[0]); k++)
		if (strcmp(norm, known_names[k].name) == 0) {
			*ret = known_names[k].fw;
			return 0;
		}
	return -ENOENT;
}

static int cmp_bound(const struct dtl_version *a, const struct dtl_version *b)
{
	return dtl_version_compare(a, b);
}

static void raise_lo(struct dtl_requirement *r, const struct dtl_version *v, bool strict)
{
	int c = r->lo.set ? cmp_bound(v, &r->lo) : 1;
	if (c > 0 || (c == 0 && strict)) {
		r->lo = *v;
		r->lo_strict = strict;
	}
}

static void lower_hi(struct dtl_requirement *r, const struct dtl_version *v, bool strict)
{
	int c = r->hi.set ? cmp_bound(v, &r->hi) : -1;
	if (c < 0 || (c == 0 && strict)) {
		r->hi = *v;
		r->hi_strict = strict;
	}
}

/* The release after the first n parts: 1.6 (n = 1) -> 2.0, 2.4.1 (n = 2) -> 2.5 */
static struct dtl_version bump(const struct dtl_version *v, int n)
{
	struct dtl_version next = {.set = true};
	for (int i = 0; i < n && i < 4; i++)
		next.part[i] = v->part[i];
	if (n >= 1 && n <= 4)
		next.part[n - 1]++;
	next.pre = -4000; /* before any .dev of it: `<2.5` excludes 2.5.dev0 */
	return next;
}

static int parts_written(const char *text, size_t len)
{
	int n = 1;
	for (size_t i = 0; i < len && text[i] != '+'; i++)
		if (text[i] == '.' && i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '9')
			n++;
	return n;
}

/* One specifier ("~=1.6", ">=0.18", "==2.4.*") into r; -EINVAL when malformed */
static int apply_one(const char *s, size_t n, struct dtl_requirement *r)
{
	static const char *const ops[] = {"===", "==", "!=", "~=", ">=", "<=", ">", "<"};
	size_t op = 0, ol = 0;
	struct dtl_version v;

	for (op = 0; op < sizeof(ops) / sizeof(ops[0]); op++) {
		ol = strlen(ops[op]);
		if (n >= ol && memcmp(s, ops[op], ol) == 0)
			break;
	}
	if (op == sizeof(ops) / sizeof(ops[0]))
		return -EINVAL;
	s += ol;
	n -= ol;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	bool star = n >= 2 && s[n - 2] == '.' && s[n - 1] == '*';
	size_t vl = star ? n - 2 : n;
	if (vl == 0 || dtl_version_parse(s, vl, &v) < 0 || (star && op != 1 && op != 2))
		return -EINVAL;
	switch (op) {
	case 0:
	case 1:
		raise_lo(r, &v, false);
		if (star) {
			struct dtl_version next = bump(&v, parts_written(s, vl));
			lower_hi(r, &next, true);
		} else {
			lower_hi(r, &v, false);
		}
		break;
	case 2: /* != excludes one version: the range around it is still allowed */
		break;
	case 3: {
		int parts = parts_written(s, vl);
		if (parts < 2)
			return -EINVAL;
		struct dtl_version next = bump(&v, parts - 1);
		raise_lo(r, &v, false);
		lower_hi(r, &next, true);
		break;
	}
	case 4:
		raise_lo(r, &v, false);
		break;
	case 5:
		lower_hi(r, &v, false);
		break;
	case 6:
		raise_lo(r, &v, true);
		break;
	default:
		lower_hi(r, &v, true);
		break;
	}
	return 0;
}

/* "conda" match specs: "=2.4.1" and "2.4.1" mean 2.4.1.*, "=2.4.1=py311_0" a build of it */
static int apply_conda(const char *s, size_t n, struct dtl_requirement *r)
{
	char buf[96];
	size_t k = 0;

	if (n && s[0] == '=' && (n < 2 || s[1] != '='))
		s++, n--;
	else if (!(n && s[0] >= '0' && s[0] <= '9'))
		return -ENOENT; /* not the conda form */
	while (k < n && s[k] != '=' && s[k] != ' ' && s[k] != '*')
		k++;
	if (k == 0 || k + 5 > sizeof(buf))
		return -EINVAL;
	memcpy(buf, "==", 2);
	memcpy(buf + 2, s, k);
	if (buf[k + 1] == '.')
		k--;
	memcpy(buf + 2 + k, ".*", 2);
	return apply_one(buf, k + 4, r);
}

/* The specifiers of one requirement, comma-separated, perhaps in parentheses */
static int apply_specs(const char *s, size_t n, bool conda, struct dtl_requirement *r)
{
	while (n && (s[0] == ' ' || s[0] == '\t' || s[0] == '('))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == ')' || s[n - 1] == '\r'))
		n--;
	if (n == 0)
		return 0;
	if (conda) {
		int c = apply_conda(s, n, r);
		if (c != -ENOENT)
			return c;
	}
	while (n) {
		size_t k = 0;
		while (k < n && s[k] != ',')
			k++;
		size_t m = k;
		const char *p = s;
		while (m && (*p == ' ' || *p == '\t'))
			p++, m--;
		while (m && (p[m - 1] == ' ' || p[m - 1] == '\t'))
			m--;
		if (m && apply_one(p, m, r) < 0)
			return -EINVAL;
		s += k < n ? k + 1 : k;
		n -= k < n ? k + 1 : k;
	}
	return 0;
}

static bool same_version(const struct dtl_version *a, const struct dtl_version *b)
{
	return a->set == b->set && (!a->set || dtl_version_compare(a, b) == 0);
}

/* One file (with its includes) may name a framework twice, a requirement and a constraint:
 * both hold, and the line of the narrower one is the one to show. */
static int merge(struct dtl_req_reader *rd, enum dtl_framework fw,
                 const struct dtl_requirement *got)
{
	struct dtl_requirement *r = &rd->got[fw];

	if (!r->present) {
		*r = *got;
	} else {
		/* the line shown is the one that narrowed the range last */
		struct dtl_requirement before = *r;
		if (got->lo.set)
			raise_lo(r, &got->lo, got->lo_strict);
		if (got->hi.set)
			lower_hi(r, &got->hi, got->hi_strict);
		if (!same_version(&before.lo, &r->lo) || !same_version(&before.hi, &r->hi) ||
		    before.lo_strict != r->lo_strict || before.hi_strict != r->hi_strict) {
			r->loc = got->loc;
			r->spec = got->spec;
		}
	}
	if (r->lo.set && r->hi.set &&
	    (cmp_bound(&r->lo, &r->hi) > 0 ||
	     (cmp_bound(&r->lo, &r->hi) == 0 && (r->lo_strict || r->hi_strict))))
		return dtl_error_set(rd->error, got->loc, -EINVAL,
		                     "'%s' allows no version of %s here (with what this file "
		                     "asks of it before)",
		                     got->spec, dtl_framework_name(fw));
	return 0;
}

int dtl_req_record(struct dtl_req_reader *rd, const char *text, size_t len, struct dtl_loc loc,
                   bool conda, const struct dtl_loc *spec_loc)
{
	size_t i = 0, name_end;
	enum dtl_framework fw;

	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '"' || text[i] == '\''))
		i++;
	size_t start = i;
	while (i < len && name_char(text[i]))
		i++;
	name_end = i;
	if (name_end == start || dtl_req_framework(text + start, name_end - start, &fw) < 0)
		return 0;
	loc.column += (uint32_t)start;
	/* conda's channel prefix ("conda-forge::pytorch") was cut by the caller */
	if (i < len && text[i] == '[') {
		while (i < len && text[i] != ']')
			i++;
		i += i < len;
	}
	size_t end = i;
	while (end < len && text[end] != ';' && text[end] != '#' && text[end] != '@' &&
	       text[end] != '"' && text[end] != '\'')
		end++;
	if (end < len && text[end] == '@')
		return 0; /* a direct URL names no version */
	if (rd->into->fw[fw].present)
		return 0;
	struct dtl_requirement got = {.present = true, .loc = loc};
	const char *spec = text + i;
	size_t spec_len = end - i;
	while (spec_len && (*spec == ' ' || *spec == '\t'))
		spec++, spec_len--;
	while (spec_len && (spec[spec_len - 1] == ' ' || spec[spec_len - 1] == '\t' ||
	                    spec[spec_len - 1] == '\r'))
		spec_len--;
	if (apply_specs(spec, spec_len, conda, &got) < 0)
		return dtl_error_set(
		    rd->error, spec_loc ? *spec_loc : loc, -EINVAL,
		    "'%.*s' is not a version specifier dtypelint can read (PEP 440: "
		    "==, >=, <=, >, <, ~=, !=, ==X.*)",
		    (int)(spec_len > 80 ? 80 : spec_len), spec);
	got.spec = dtl_arena_strndup(rd->arena, spec, spec_len);
	if (!got.spec)
		return -ENOMEM;
	return merge(rd, fw, &got);
}

bool dtl_requirement_pinned(const struct dtl_requirement *r)
{
	return r->present && r->lo.set && r->hi.set && !r->lo_strict && !r->hi_strict &&
	       dtl_version_compare(&r->lo, &r->hi) == 0;
}

bool dtl_requirement_allows(const struct dtl_requirement *r, const struct dtl_version *v)
{
	if (r->lo.set) {
		int c = dtl_version_compare(v, &r->lo);
		if (c < 0 || (c == 0 && r->lo_strict))
			return false;
	}
	if (r->hi.set) {
		int c = dtl_version_compare(v, &r->hi);
		if (c > 0 || (c == 0 && r->hi_strict))
			return false;
	}
	return true;
}

/* A YAML or JSON string node as one requirement */
static int record_node(struct dtl_req_reader *rd, const struct dtl_node *v, bool conda)
{
	if (v->type != DTL_NODE_STRING)
		return 0;
	struct dtl_loc loc = dtl_node_loc(v, rd->file);
	const char *t = v->string.text;
	size_t n = v->string.len;
	const char *colons = conda ? strstr(t, "::") : NULL;
	if (colons) {
		loc.column += (uint32_t)(colons + 2 - t);
		n -= (size_t)(colons + 2 - t);
		t = colons + 2;
	}
	/* conda's "pytorch 2.4.1" and "pytorch=2.4.1": the name ends at a space or '=' */
	return dtl_req_record(rd, t, n, loc, conda, NULL);
}

/* environment.yml: dependencies: [conda specs..., {pip: [pip requirements...]}] */
static int read_conda_env(struct dtl_req_reader *rd, const struct dtl_node *root)
{
	const struct dtl_node *deps = dtl_node_get(root, "dependencies");
	int r = 0;

	if (!deps || deps->type != DTL_NODE_SEQ)
		return 0;
	for (size_t i = 0; i < deps->seq.count && r == 0; i++) {
		const struct dtl_node *d = &deps->seq.items[i];
		const struct dtl_node *pip = dtl_node_get(d, "pip");
		if (d->type == DTL_NODE_STRING)
			r = record_node(rd, d, true);
		else if (pip && pip->type == DTL_NODE_SEQ)
			for (size_t k = 0; k < pip->seq.count && r == 0; k++)
				r = record_node(rd, &pip->seq.items[k], false);
	}
	return r;
}

/* A name and an exact version from two nodes (conda-lock, pip list) */
static int record_pin(struct dtl_req_reader *rd, const struct dtl_node *name,
                      const struct dtl_node *version)
{
	enum dtl_framework fw;
	struct dtl_version v;

	if (!name || !version || name->type != DTL_NODE_STRING ||
	    version->type != DTL_NODE_STRING ||
	    dtl_req_framework(name->string.text, name->string.len, &fw) < 0 ||
	    rd->into->fw[fw].present)
		return 0;
	struct dtl_loc loc = dtl_node_loc(version, rd->file);
	if (dtl_version_parse(version->string.text, version->string.len, &v) < 0)
		return dtl_error_set(rd->error, loc, -EINVAL, "'%.*s' is not a version of %s",
		                     (int)(version->string.len > 80 ? 80 : version->string.len),
		                     version->string.text, dtl_framework_name(fw));
	struct dtl_requirement got = {.present = true, .lo = v, .hi = v, .loc = loc};
	got.spec = dtl_arena_sprintf(rd->arena, "==%s", version->string.text);
	if (!got.spec)
		return -ENOMEM;
	return merge(rd, fw, &got);
}

/* conda-lock.yml: package: [{name, version, manager}]; pip list --format=json:
 * [{name, version}] */
static int read_pin_list(struct dtl_req_reader *rd, const struct dtl_node *list)
{
	int r = 0;
	for (size_t i = 0; i < list->seq.count && r == 0; i++) {
		const struct dtl_node *p = &list->seq.items[i];
		if (p->type == DTL_NODE_MAP)
			r = record_pin(rd, dtl_node_get(p, "name"), dtl_node_get(p, "version"));
	}
	return r;
}

/* Pipfile.lock: {"default": {"deepspeed": {"version": "==0.19.2"}}, "develop": {...}} */
static int read_pipfile_lock(struct dtl_req_reader *rd, const struct dtl_node *root)
{
	static const char *const sections[] = {"default", "develop"};
	int r = 0;

	for (size_t s = 0; s < 2 && r == 0; s++) {
		const struct dtl_node *sec = dtl_node_get(root, sections[s]);
		if (!sec || sec->type != DTL_NODE_MAP)
			continue;
		for (size_t i = 0; i < sec->map.count && r == 0; i++) {
			const struct dtl_pair *p = &sec->map.pairs[i];
			const struct dtl_node *v = dtl_node_get(&p->value, "version");
			enum dtl_framework fw;
			if (p->key.type != DTL_NODE_STRING || !v || v->type != DTL_NODE_STRING ||
			    dtl_req_framework(p->key.string.text, p->key.string.len, &fw) < 0)
				continue;
			char *line = dtl_arena_sprintf(rd->arena, "%s%s", p->key.string.text,
			                               v->string.text);
			if (!line)
				return -ENOMEM;
			struct dtl_loc loc = dtl_node_loc(v, rd->file);
			loc.column = p->key.column;
			loc.line = p->key.line;
			struct dtl_loc at = dtl_node_loc(v, rd->file);
			r = dtl_req_record(rd, line, strlen(line), loc, false, &at);
		}
	}
	return r;
}

/* A YAML or JSON dependency file: its shape tells which */
int dtl_req_read_tree(struct dtl_req_reader *rd, const struct dtl_node *root)
{
	const struct dtl_node *package = dtl_node_get(root, "package");

	if (root->type == DTL_NODE_SEQ)
		return read_pin_list(rd, root);
	if (package && package->type == DTL_NODE_SEQ)
		return read_pin_list(rd, package);
	if (dtl_node_get(root, "default") || dtl_node_get(root, "develop"))
		return read_pipfile_lock(rd, root);
	return read_conda_env(rd, root);
}

/* A list of PEP 508 strings: dependencies = ["torch>=2.4", ...] */
static int read_string_list(struct dtl_req_reader *rd, const struct dtl_node *list)
{
	int r = 0;
	if (!list || list->type != DTL_NODE_SEQ)
		return 0;
	for (size_t i = 0; i < list->seq.count && r == 0; i++)
		r = record_node(rd, &list->seq.items[i], false);
	return r;
}

/* Every list of a table of lists: [project.optional-dependencies], [dependency-groups] */
static int read_list_table(struct dtl_req_reader *rd, const struct dtl_node *table)
{
	int r = 0;
	if (!table || table->type != DTL_NODE_MAP)
		return 0;
	for (size_t i = 0; i < table->map.count && r == 0; i++)
		r = read_string_list(rd, &table->map.pairs[i].value);
	return r;
}

/* Poetry's constraint syntax as PEP 440: "0.19.2" is ==, "^0.19.2" is >=0.19.2,<0.20
 * (the leftmost non-zero part may not change), "~0.19.2" is >=0.19.2,<0.20, "*" anything;
 * the rest (">=0.18,<0.20") is PEP 440 already.
 * https://python-poetry.org/docs/dependency-specification/#version-constraints */
static const char *poetry_spec(const char *t, struct dtl_arena *arena)
{
	struct dtl_version v;
	char next[40];
	size_t n = strlen(t);

	if (n == 0 || strcmp(t, "*") == 0)
		return "";
	if ((t[0] >= '0' && t[0] <= '9'))
		return dtl_arena_sprintf(arena, "==%s", t);
	if ((t[0] != '^' && t[0] != '~') || (t[0] == '~' && t[1] == '=') ||
	    dtl_version_parse(t + 1, n - 1, &v) < 0)
		return t;
	int parts = parts_written(t + 1, n - 1), keep;
	if (t[0] == '~')
		keep = parts == 1 ? 1 : 2;
	else
		for (keep = 1; keep < parts && v.part[keep - 1] == 0; keep++)
			;
	struct dtl_version hi = bump(&v, keep);
	hi.pre = 0;
	dtl_version_format(&hi, next, sizeof(next));
	return dtl_arena_sprintf(arena, ">=%s,<%s", t + 1, next);
}

/* [tool.poetry.dependencies] and [tool.poetry.group.NAME.dependencies]:
 * deepspeed = "^0.19" or deepspeed = {version = "^0.19", ...} */
static int read_poetry_table(struct dtl_req_reader *rd, const struct dtl_node *deps)
{
	int r = 0;
	if (!deps || deps->type != DTL_NODE_MAP)
		return 0;
	for (size_t i = 0; i < deps->map.count && r == 0; i++) {
		const struct dtl_pair *p = &deps->map.pairs[i];
		const struct dtl_node *v = &p->value;
		enum dtl_framework fw;
		if (v->type == DTL_NODE_MAP)
			v = dtl_node_get(v, "version");
		if (!v || v->type != DTL_NODE_STRING || p->key.type != DTL_NODE_STRING ||
		    dtl_req_framework(p->key.string.text, p->key.string.len, &fw) < 0)
			continue;
		const char *spec = poetry_spec(v->string.text, rd->arena);
		const char *line =
		    spec ? dtl_arena_sprintf(rd->arena, "%s%s", p->key.string.text, spec) : NULL;
		if (!line)
			return -ENOMEM;
		struct dtl_loc loc = dtl_node_loc(&p->key, rd->file),
		               at = dtl_node_loc(v, rd->file);
		r = dtl_req_record(rd, line, strlen(line), loc, false, &at);
	}
	return r;
}

static int read_poetry(struct dtl_req_reader *rd, const struct dtl_node *poetry)
{
	const struct dtl_node *groups = dtl_node_get(poetry, "group");
	int r = read_poetry_table(rd, dtl_node_get(poetry, "dependencies"));

	if (r == 0 && groups && groups->type == DTL_NODE_MAP)
		for (size_t i = 0; i < groups->map.count && r == 0; i++)
			r = read_poetry_table(
			    rd, dtl_node_get(&groups->map.pairs[i].value, "dependencies"));
	if (r == 0)
		r = read_poetry_table(rd, dtl_node_get(poetry, "dev-dependencies"));
	return r;
}

/* pyproject.toml: what uv constrains and overrides first, then what the project asks for */
static int read_pyproject(struct dtl_req_reader *rd, const struct dtl_node *root)
{
	const struct dtl_node *tool = dtl_node_get(root, "tool");
	const struct dtl_node *uv = dtl_node_get(tool, "uv");
	const struct dtl_node *project = dtl_node_get(root, "project");
	int r = 0;

	if (uv && uv->type == DTL_NODE_MAP &&
	    ((r = read_string_list(rd, dtl_node_get(uv, "override-dependencies"))) < 0 ||
	     (r = read_string_list(rd, dtl_node_get(uv, "constraint-dependencies"))) < 0 ||
	     (r = read_string_list(rd, dtl_node_get(uv, "dev-dependencies"))) < 0))
		return r;
	if (project && project->type == DTL_NODE_MAP &&
	    ((r = read_string_list(rd, dtl_node_get(project, "dependencies"))) < 0 ||
	     (r = read_list_table(rd, dtl_node_get(project, "optional-dependencies"))) < 0))
		return r;
	if ((r = read_list_table(rd, dtl_node_get(root, "dependency-groups"))) < 0)
		return r;
	return read_poetry(rd, dtl_node_get(tool, "poetry"));
}

int dtl_req_read_toml(struct dtl_req_reader *rd, const struct dtl_node *root)
{
	const struct dtl_node *package = dtl_node_get(root, "package");
	const struct dtl_node *packages = dtl_node_get(root, "packages");

	if (package && package->type == DTL_NODE_SEQ) /* uv.lock, poetry.lock */
		return read_pin_list(rd, package);
	if (packages && packages->type == DTL_NODE_SEQ) /* pylock.toml (PEP 751) */
		return read_pin_list(rd, packages);
	return read_pyproject(rd, root);
}
