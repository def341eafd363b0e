/* SPDX-License-Identifier: MIT */
/*
 * .dtypelint.yaml: found upward from each input's directory, the nearest wins and is not
 * merged with others, as ruff's (https://docs.astral.sh/ruff/configuration/#config-file-discovery)
 * and ShellCheck's .shellcheckrc
 * (https://github.com/koalaman/shellcheck/blob/v0.10.0/shellcheck.1.md#rc-files).
 * Validated through the positioned document tree, so an unknown key or a bad value is an
 * error at its line and column.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dtypelint/model/schema.h"

#define CONFIG_NAME ".dtypelint.yaml"

/* Why a config found at candidate (in dir) is not trusted, or NULL: anyone else who can write
 * it could change what the linter reports (ssh's StrictModes, git's safe.directory). Under a
 * world-writable ancestor (/tmp), every folder below it and the file must be ours or root's. */
static const char *untrusted(const char *dir, const char *candidate)
{
	char up[4096];
	struct stat st;
	uid_t me = geteuid();

	if (stat(candidate, &st) != 0 || (st.st_mode & S_IWOTH))
		return "the file is writable by every user";
	bool foreign = st.st_uid != me && st.st_uid != 0;
	if (stat(dir, &st) != 0 || (st.st_mode & S_IWOTH))
		return "its folder is writable by every user";
	snprintf(up, sizeof(up), "%s", dir);
	for (;;) {
		foreign = foreign || (st.st_uid != me && st.st_uid != 0);
		char *slash = strrchr(up, '/');
		if (!slash || strcmp(up, "/") == 0)
			return NULL;
		if (slash == up)
			up[1] = '\0';
		else
			*slash = '\0';
		if (stat(up, &st) != 0)
			return NULL;
		if ((st.st_mode & S_IWOTH) && foreign)
			return "it lies under a folder writable by every user and another user "
			       "owns it";
	}
}

int dtl_config_find(const char *input, struct dtl_arena *arena, const char **ret_path,
                    const char **ret_ignored, const char **ret_reason)
{
	char dir[4096], candidate[4096 + sizeof(CONFIG_NAME) + 1], shown[4096];
	struct stat st;

	*ret_path = NULL;
	*ret_ignored = *ret_reason = NULL;
	if (!dtl_report_abspath(input, dir, sizeof(dir)))
		return 0;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	for (;;) {
		snprintf(candidate, sizeof(candidate), "%s%s" CONFIG_NAME, dir,
		         strcmp(dir, "/") == 0 ? "" : "/");
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) {
			const char *path = candidate;
			if (input[0] != '/' &&
			    dtl_report_relpath(candidate, NULL, shown, sizeof(shown)))
				path = shown;
			const char *why = untrusted(dir, candidate);
			if (!why) {
				*ret_path = dtl_arena_strndup(arena, path, strlen(path));
				return *ret_path ? 0 : -ENOMEM;
			}
			if (!*ret_ignored) {
				*ret_ignored = dtl_arena_strndup(arena, path, strlen(path));
				*ret_reason = why;
				if (!*ret_ignored)
					return -ENOMEM;
			}
		}
		if (strcmp(dir, "/") == 0)
			return 0;
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0';
		else
			*slash = '\0';
	}
}

static const char *copy_string(const struct dtl_schema *s, const struct dtl_node *node)
{
	return dtl_arena_strndup(s->arena, node->string.text, node->string.len);
}

/* A rule list: a list of selectors or one comma-separated string; every selector must name
 * a rule. */
static int parse_rules(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                       struct dtl_vec *ret_rules)
{
	const struct dtl_node *items = node;
	size_t count = 1;

	if (node->type == DTL_NODE_SEQ) {
		items = node->seq.items;
		count = node->seq.count;
	} else if (node->type != DTL_NODE_STRING) {
		return dtl_schema_type_error(s, node, what,
		                             "a list of rules (ids, names, id prefixes or ALL)");
	}
	for (size_t i = 0; i < count; i++) {
		const struct dtl_node *item = &items[i];
		if (item->type != DTL_NODE_STRING)
			return dtl_schema_type_error(s, item, what,
			                             "a rule id, name, id prefix or ALL");
		const char *p = item->string.text;
		while (*p) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			const char *start = p;
			while (len && (*start == ' ' || *start == '\t')) {
				start++;
				len--;
			}
			while (len && (start[len - 1] == ' ' || start[len - 1] == '\t'))
				len--;
			if (len) {
				const char **slot =
				    dtl_vec_push(ret_rules, s->arena, sizeof(*slot));
				if (!slot || !(*slot = dtl_arena_strndup(s->arena, start, len)))
					return -ENOMEM;
				if (!dtl_lint_selector_known(*slot))
					return dtl_schema_fail(
					    s, item, "'%s': '%s' names no rule (see --list-rules)",
					    what, *slot);
			}
			if (!comma)
				break;
			p = comma + 1;
		}
	}
	return 0;
}

static int parse_severity(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                          enum dtl_severity *ret_severity)
{
	if (node->type != DTL_NODE_STRING ||
	    dtl_lint_severity_parse(node->string.text, ret_severity) < 0)
		return dtl_schema_fail(s, node, "'%s' must be error, warning or info, got %s", what,
		                       dtl_schema_describe(s, node));
	return 0;
}

static int parse_overrides(const struct dtl_schema *s, const struct dtl_node *map,
                           struct dtl_config *c)
{
	int r = dtl_schema_map(s, map, "severity");

	for (size_t i = 0; r >= 0 && i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		struct dtl_severity_override *o;
		if (key->type != DTL_NODE_STRING)
			return dtl_schema_type_error(s, key, "severity", "keyed by rule");
		o = dtl_vec_push(&c->overrides, s->arena, sizeof(*o));
		if (!o || !(o->selector = copy_string(s, key)))
			return -ENOMEM;
		if (!dtl_lint_selector_known(o->selector))
			return dtl_schema_fail(s, key,
			                       "'severity': '%s' names no rule (see --list-rules)",
			                       o->selector);
		r = parse_severity(s, &map->map.pairs[i].value, "severity", &o->severity);
	}
	return r;
}

static int parse_file_ignores(const struct dtl_schema *s, const struct dtl_node *map,
                              struct dtl_config *c)
{
	int r = dtl_schema_map(s, map, "per-file-ignores");

	for (size_t i = 0; r >= 0 && i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		struct dtl_file_ignore *fi;
		if (key->type != DTL_NODE_STRING || key->string.len == 0)
			return dtl_schema_type_error(s, key, "per-file-ignores",
			                             "keyed by non-empty path globs");
		fi = dtl_vec_push(&c->file_ignores, s->arena, sizeof(*fi));
		if (!fi || !(fi->glob = copy_string(s, key)))
			return -ENOMEM;
		r = parse_rules(s, &map->map.pairs[i].value, "per-file-ignores", &fi->rules);
	}
	return r;
}

static int parse_plan(const struct dtl_schema *s, const struct dtl_node *map, struct dtl_config *c)
{
	/* defaults for what a team shares; the rest of a plan belongs to the manifest */
	static const char *const keys[] = {"strategy", "precision", "world_size", "versions", NULL};
	int r = dtl_schema_map(s, map, "plan");

	if (r < 0 || (r = dtl_schema_check_keys(s, map, "plan", keys)) < 0)
		return r;
	dtl_plan_init(&c->plan);
	c->has_plan = true;
	return dtl_plan_parse(map, s->file, s->arena, &c->plan, s->error);
}

static int parse_limits(const struct dtl_schema *s, const struct dtl_node *map,
                        struct dtl_config *c)
{
	int r = dtl_schema_map(s, map, "limits");

	for (size_t i = 0; r >= 0 && i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		const struct dtl_node *v = &map->map.pairs[i].value;
		int which = -1;
		for (int k = 0; k < DTL_LIMIT_COUNT && key->type == DTL_NODE_STRING; k++)
			if (strcmp(key->string.text, dtl_cli_limit_name(k)) == 0)
				which = k;
		if (which < 0) {
			if (key->type == DTL_NODE_STRING && strncmp(key->string.text, "x-", 2) == 0)
				continue;
			return dtl_schema_fail(
			    s, key,
			    "unknown key %s in 'limits' (expected one of: max-file-size, "
			    "max-depth, "
			    "max-alias-nodes, max-tensors, max-name-length, max-rank, "
			    "max-header-size)",
			    dtl_schema_describe(s, key));
		}
		const char *text = v->type == DTL_NODE_STRING ? v->string.text
		                   : v->type == DTL_NODE_INT
		                       ? dtl_arena_strndup(s->arena, v->raw, v->raw_len)
		                       : NULL;
		if (v->type == DTL_NODE_INT && !text)
			return -ENOMEM;
		if (!text || dtl_cli_limit_parse(which, text, &c->limits.values[which]) < 0)
			return dtl_schema_fail(s, v,
			                       "'limits.%s' must be a positive integer (with an "
			                       "optional K, M or G suffix) within range, got %s",
			                       dtl_cli_limit_name(which),
			                       dtl_schema_describe(s, v));
		/* a config may lower a limit, never raise it: a pull request editing the config
		 * must not lift the bounds on what the linter reads (only options can) */
		struct dtl_limits defaults;
		dtl_limits_default(&defaults);
		uint64_t cap = dtl_cli_limit_get(&defaults, which);
		if (c->limits.values[which] > cap)
			return dtl_schema_fail(s, v,
			                       "'limits.%s' is above its default of %llu: a "
			                       "configuration file can only lower limits; raise it "
			                       "with --%s",
			                       dtl_cli_limit_name(which), (unsigned long long)cap,
			                       dtl_cli_limit_name(which));
		c->limits.set |= 1u << which;
	}
	return r;
}

/* "a/b/../c/./d" -> "a/c/d" in place, lexically (as the report shows it; the file is opened
 * by this name, so a ".." is only dropped after a real segment, never a leading one) */
static void lexical_normalize(char *path)
{
	char *out = path, *p = path;
	bool absolute = *p == '/';
	size_t kept = 0; /* segments written that a ".." may remove */

	if (absolute)
		out = ++p;
	while (*p) {
		char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.' && kept > 0) {
			out--; /* the slash after the last segment */
			while (out > path + absolute && out[-1] != '/')
				out--;
			kept--;
		} else {
			memmove(out, p, n);
			out += n;
			*out++ = '/';
			if (!(n == 2 && p[0] == '.' && p[1] == '.'))
				kept++;
		}
		p += n + (end ? 1 : 0);
	}
	if (out > path + absolute && out[-1] == '/')
		out--;
	if (out == path)
		*out++ = '.';
	*out = '\0';
}

/* A set-up's path: relative to the config's folder as the config is shown (so relative to the
 * working directory when the config is), unless absolute. */
static int setup_path(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                      const struct dtl_config *c, const char **ret)
{
	if (v->type != DTL_NODE_STRING || v->string.len == 0)
		return dtl_schema_type_error(s, v, what, "a path, relative to the config's folder");
	const char *slash = strrchr(c->path, '/');
	char *joined;
	if (v->string.text[0] == '/' || !slash)
		joined = dtl_arena_strndup(s->arena, v->string.text, v->string.len);
	else
		joined = dtl_arena_sprintf(s->arena, "%.*s/%s", (int)(slash - c->path), c->path,
		                           v->string.text);
	if (!joined)
		return -ENOMEM;
	lexical_normalize(joined);
	*ret = joined;
	return 0;
}

/* The last set-up's name is new: names maps each name to its set-up (a hash set, not a
 * comparison with every earlier one: 24,000 names of 200 bytes took 3 s pairwise). */
static int setup_unique(const struct dtl_schema *s, struct dtl_strmap *names,
                        const struct dtl_config *c, const struct dtl_node *name)
{
	const struct dtl_lint_job *jobs = c->setups.items;
	size_t last = c->setups.count - 1;
	int64_t first =
	    dtl_strmap_put(names, jobs[last].setup, strlen(jobs[last].setup), (int64_t)last);
	if (first < 0)
		return (int)first;
	if ((size_t)first != last)
		return dtl_schema_fail(s, name, "set-up %s is defined twice (first at line %u)",
		                       dtl_schema_describe(s, name), jobs[first].loc.line);
	return 0;
}

/* setups: a list of {name, model, plan, deepspeed, accelerate, peft, trainer-args, launch,
 * with, versions} */
static int parse_setups(const struct dtl_schema *s, const struct dtl_node *list,
                        struct dtl_config *c)
{
	static const char *const keys[] = {
	    "name",         "model",  "plan", "deepspeed", "accelerate", "peft",
	    "trainer-args", "launch", "with", "versions",  NULL};
	if (list->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, list, "setups", "a list of set-ups");
	struct dtl_strmap names_map, *names = &names_map;
	dtl_strmap_init(names, s->arena);
	for (size_t i = 0; i < list->seq.count; i++) {
		const struct dtl_node *map = &list->seq.items[i];
		int r = dtl_schema_map(s, map, "setups[]");
		if (r < 0 || (r = dtl_schema_check_keys(s, map, "setups[]", keys)) < 0)
			return r;
		struct dtl_lint_job *job = dtl_vec_push(&c->setups, s->arena, sizeof(*job));
		if (!job)
			return -ENOMEM;
		memset(job, 0, sizeof(*job));
		dtl_plan_init(&job->versions);
		job->loc = dtl_schema_loc(s, map);
		const struct dtl_node *name = dtl_node_get(map, "name");
		if (!name || name->type != DTL_NODE_STRING || name->string.len == 0)
			return dtl_schema_fail(s, name ? name : map,
			                       "a set-up needs a 'name' (a non-empty string)");
		job->setup = copy_string(s, name);
		if (!job->setup)
			return -ENOMEM;
		r = setup_unique(s, names, c, name);
		if (r < 0)
			return r;
		if (!dtl_node_get(map, "model"))
			return dtl_schema_fail(s, map,
			                       "set-up '%s' needs a 'model' (a manifest or an HF "
			                       "model folder)",
			                       job->setup);
		for (size_t k = 0; k < map->map.count; k++) {
			const char *key = map->map.pairs[k].key.string.text;
			const struct dtl_node *v = &map->map.pairs[k].value;
			if (strcmp(key, "model") == 0)
				r = setup_path(s, v, "model", c, &job->input);
			else if (strcmp(key, "plan") == 0)
				r = setup_path(s, v, "plan", c, &job->plan_file);
			else if (strcmp(key, "deepspeed") == 0)
				r = setup_path(s, v, "deepspeed", c, &job->deepspeed_file);
			else if (strcmp(key, "accelerate") == 0)
				r = setup_path(s, v, "accelerate", c, &job->accelerate_file);
			else if (strcmp(key, "peft") == 0)
				r = setup_path(s, v, "peft", c, &job->peft_file);
			else if (strcmp(key, "trainer-args") == 0)
				r = setup_path(s, v, "trainer-args", c, &job->trainer_args_file);
			else if (strcmp(key, "launch") == 0)
				r = setup_path(s, v, "launch", c, &job->launch_file);
			else if (strcmp(key, "versions") == 0)
				r = setup_path(s, v, "versions", c, &job->versions_file);
			else if (strcmp(key, "with") == 0)
				r = dtl_plan_parse_versions(v, s->file, s->arena, &job->versions,
				                            s->error);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Only blanks and comments? */
static bool blank(const struct dtl_source *source)
{
	bool comment = false;

	for (size_t i = 0; i < source->size; i++) {
		char ch = source->data[i];
		if (ch == '\n')
			comment = false;
		else if (ch == '#')
			comment = true;
		else if (!comment && ch != ' ' && ch != '\t' && ch != '\r')
			return false;
	}
	return true;
}

int dtl_config_load(const char *path, struct dtl_arena *arena, const struct dtl_limits *limits,
                    struct dtl_config *ret_config, struct dtl_error *error)
{
	static const char *const keys[] = {
	    "select",           "extend-select", "ignore", "severity", "fail-on",
	    "per-file-ignores", "plan",          "limits", "setups",   NULL};
	struct dtl_source source;
	struct dtl_node *root = NULL;
	struct dtl_config c;
	char dir[4096];
	int r;

	memset(&c, 0, sizeof(c));
	c.path = dtl_arena_strndup(arena, path, strlen(path));
	if (!c.path)
		return -ENOMEM;
	if (!dtl_report_abspath(path, dir, sizeof(dir))) {
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(error, loc, -ENAMETOOLONG, "path too long");
	}
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	c.dir = dtl_arena_strndup(arena, dir, strlen(dir));
	if (!c.dir)
		return -ENOMEM;
	struct dtl_schema s = {.file = c.path, .arena = arena, .limits = limits, .error = error};
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct dtl_loc loc = {.file = path};
		return dtl_error_set(error, loc, -EISDIR,
		                     "is a directory, expected a configuration file");
	}
	/* a .dtypelint.yaml that is a link out of the tree would be read, and its errors shown */
	if ((r = dtl_confine_check(path, NULL, (struct dtl_loc){0}, error)) < 0)
		return r;
	r = dtl_source_read(&source, path, limits, error);
	if (r < 0)
		return r;
	if (blank(&source))
		goto out; /* nothing but comments: all defaults */
	r = dtl_doc_parse(&source, arena, limits, &root, error);
	if (r >= 0 && root->type == DTL_NODE_NULL)
		goto out;
	if (r >= 0 && root->type != DTL_NODE_MAP)
		r = dtl_schema_root_map(&s, root, "a config file");
	if (r >= 0)
		r = dtl_schema_check_keys(&s, root, "config", keys);
	for (size_t i = 0; r >= 0 && i < root->map.count; i++) {
		const char *k = root->map.pairs[i].key.string.text;
		const struct dtl_node *v = &root->map.pairs[i].value;
		if (strcmp(k, "select") == 0) {
			c.has_select = true;
			r = parse_rules(&s, v, "select", &c.select);
		} else if (strcmp(k, "extend-select") == 0) {
			r = parse_rules(&s, v, "extend-select", &c.extend_select);
		} else if (strcmp(k, "ignore") == 0) {
			r = parse_rules(&s, v, "ignore", &c.ignore);
		} else if (strcmp(k, "severity") == 0) {
			r = parse_overrides(&s, v, &c);
		} else if (strcmp(k, "fail-on") == 0) {
			c.has_fail_on = true;
			r = parse_severity(&s, v, "fail-on", &c.fail_on);
		} else if (strcmp(k, "per-file-ignores") == 0) {
			r = parse_file_ignores(&s, v, &c);
		} else if (strcmp(k, "plan") == 0) {
			r = parse_plan(&s, v, &c);
		} else if (strcmp(k, "limits") == 0) {
			r = parse_limits(&s, v, &c);
		} else if (strcmp(k, "setups") == 0) {
			r = parse_setups(&s, v, &c);
		}
	}
out:
	dtl_source_fini(&source);
	if (r < 0)
		return r;
	*ret_config = c;
	return 0;
}
