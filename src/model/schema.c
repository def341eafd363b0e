/* SPDX-License-Identifier: MIT */
/*
 * Typed reads from the document tree (schema.h), with which the manifest parser and the
 * importers turn trees into structs: each checks one node's type or range and fails with
 * "file:line:col: 'x' must be ..." through the schema's error, quoting the input only through
 * a short description (dtl_schema_describe). Returns 0 or -EINVAL; strings stay in the tree's
 * arena.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtypelint/core/glob.h"
#include "dtypelint/model/behavior.h"
#include "dtypelint/model/schema.h"

struct dtl_loc dtl_schema_loc(const struct dtl_schema *s, const struct dtl_node *node)
{
	return dtl_node_loc(node, s->file);
}

int dtl_schema_fail(const struct dtl_schema *s, const struct dtl_node *node, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	dtl_error_setv(s->error, dtl_schema_loc(s, node), -EINVAL, fmt, args);
	va_end(args);
	return -EINVAL;
}

const char *dtl_schema_describe(const struct dtl_schema *s, const struct dtl_node *node)
{
	const char *text;

	switch (node->type) {
	case DTL_NODE_STRING:
		text = dtl_arena_sprintf(s->arena, "'%.*s'",
		                         (int)(node->string.len > 80 ? 80 : node->string.len),
		                         node->string.text);
		break;
	case DTL_NODE_INT:
		text = dtl_arena_sprintf(s->arena, "%lld", (long long)node->integer);
		break;
	case DTL_NODE_FLOAT:
	case DTL_NODE_BOOL:
		text = node->raw ? dtl_arena_sprintf(s->arena, "%.*s",
		                                     (int)(node->raw_len > 80 ? 80 : node->raw_len),
		                                     node->raw)
		                 : NULL;
		if (!text && node->type == DTL_NODE_BOOL)
			text = node->boolean ? "true" : "false";
		break;
	case DTL_NODE_NULL:
		text = "null";
		break;
	default:
		text = dtl_node_type_name(node->type);
		break;
	}
	return text ? text : dtl_node_type_name(node->type);
}

int dtl_schema_type_error(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                          const char *expected)
{
	return dtl_schema_fail(s, node, "'%s' must be %s, got %s", what, expected,
	                       dtl_schema_describe(s, node));
}

int dtl_schema_root_map(const struct dtl_schema *s, const struct dtl_node *root, const char *what)
{
	if (root->type == DTL_NODE_MAP)
		return 0;
	/* the file may be anything a hostile set-up names (a token file): say what it is and
	 * where reading stopped, never a byte of it (issue 35) */
	return dtl_schema_fail(s, root,
	                       "not %s: the file's document is %s, not a mapping (its text is not "
	                       "shown)",
	                       what, dtl_node_type_name(root->type));
}

int dtl_schema_check_keys(const struct dtl_schema *s, const struct dtl_node *map,
                          const char *section, const char *const *allowed)
{
	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		bool ok = false;
		if (key->type != DTL_NODE_STRING)
			return dtl_schema_fail(s, key, "keys of '%s' must be strings, got %s",
			                       section, dtl_schema_describe(s, key));
		if (key->string.len >= 2 && memcmp(key->string.text, "x-", 2) == 0)
			continue;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = strlen(*a) == key->string.len &&
			     memcmp(*a, key->string.text, key->string.len) == 0;
		if (!ok) {
			char list[512] = "";
			size_t used = 0;
			for (const char *const *a = allowed; *a; a++) {
				int n = snprintf(list + used, sizeof(list) - used, "%s%s",
				                 used ? ", " : "", *a);
				if (n < 0 || (size_t)n >= sizeof(list) - used)
					break;
				used += (size_t)n;
			}
			return dtl_schema_fail(s, key,
			                       "unknown key '%.*s' in '%s' (expected one of: %s)",
			                       (int)(key->string.len > 80 ? 80 : key->string.len),
			                       key->string.text, section, list);
		}
	}
	return 0;
}

int dtl_schema_map(const struct dtl_schema *s, const struct dtl_node *node, const char *what)
{
	if (node->type != DTL_NODE_MAP)
		return dtl_schema_type_error(s, node, what, "a mapping");
	return 0;
}

int dtl_schema_string(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                      const char **ret_text)
{
	if (node->type != DTL_NODE_STRING)
		return dtl_schema_type_error(s, node, what, "a string");
	*ret_text = node->string.text;
	return 0;
}

int dtl_schema_bool(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                    bool *ret_value)
{
	if (node->type != DTL_NODE_BOOL)
		return dtl_schema_type_error(s, node, what, "true or false");
	*ret_value = node->boolean;
	return 0;
}

int dtl_schema_tristate(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                        enum dtl_tristate *ret_value)
{
	bool value;
	int r;

	if (node->type == DTL_NODE_NULL) {
		*ret_value = DTL_UNSET;
		return 0;
	}
	r = dtl_schema_bool(s, node, what, &value);
	if (r < 0)
		return r;
	*ret_value = value ? DTL_TRUE : DTL_FALSE;
	return 0;
}

int dtl_schema_int(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                   int64_t min, int64_t max, int64_t *ret_value)
{
	if (node->type == DTL_NODE_FLOAT && isfinite(node->number) &&
	    node->number == floor(node->number) && fabs(node->number) < 9.0e15) {
		/* 1e5 and 100000.0 are integers as far as a config is concerned */
		int64_t v = (int64_t)node->number;
		if (v >= min && v <= max) {
			*ret_value = v;
			return 0;
		}
	}
	if (node->type != DTL_NODE_INT)
		return dtl_schema_fail(s, node, "'%s' must be an integer from %lld to %lld, got %s",
		                       what, (long long)min, (long long)max,
		                       dtl_schema_describe(s, node));
	if (node->integer < min || node->integer > max)
		return dtl_schema_fail(s, node,
		                       "'%s' must be an integer from %lld to %lld, got %lld", what,
		                       (long long)min, (long long)max, (long long)node->integer);
	*ret_value = node->integer;
	return 0;
}

int dtl_schema_float(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                     double min, double max, double *ret_value)
{
	double v;

	if (node->type == DTL_NODE_INT)
		v = (double)node->integer;
	else if (node->type == DTL_NODE_FLOAT && isfinite(node->number))
		v = node->number;
	else
		return dtl_schema_fail(s, node, "'%s' must be a number from %g to %g, got %s", what,
		                       min, max, dtl_schema_describe(s, node));
	if (v < min || v > max)
		return dtl_schema_fail(s, node, "'%s' must be a number from %g to %g, got %g", what,
		                       min, max, v);
	*ret_value = v;
	return 0;
}

int dtl_schema_dtype(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                     bool allow_null, enum dtl_dtype *ret_dtype)
{
	enum dtl_dtype dtype;

	if (allow_null && node->type == DTL_NODE_NULL) {
		*ret_dtype = DTL_DTYPE_NONE;
		return 0;
	}
	if (node->type != DTL_NODE_STRING)
		return dtl_schema_fail(s, node, "'%s' must be a dtype name, got %s; valid: %s",
		                       what, dtl_schema_describe(s, node), dtl_dtype_valid_names());
	dtype = dtl_dtype_parse(node->string.text, node->string.len);
	if (dtype == DTL_DTYPE_NONE)
		return dtl_schema_fail(s, node, "unknown dtype %s for '%s'; valid: %s",
		                       dtl_schema_describe(s, node), what, dtl_dtype_valid_names());
	*ret_dtype = dtype;
	return 0;
}

int dtl_schema_pattern(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                       enum dtl_pattern_kind kind, struct dtl_pattern *ret_pattern)
{
	if (node->type != DTL_NODE_STRING)
		return dtl_schema_type_error(s, node, what, "a string");
	if (node->string.len == 0)
		return dtl_schema_fail(s, node, "'%s' must not be an empty string", what);
	if (node->string.len > s->limits->max_name_length)
		return dtl_schema_fail(s, node, "'%s' is %zu bytes long, over the limit of %zu",
		                       what, node->string.len, s->limits->max_name_length);
	if (kind == DTL_PATTERN_GLOB) {
		const char *problem = dtl_glob_check(node->string.text, node->string.len);
		if (problem)
			return dtl_schema_fail(s, node, "bad glob %s in '%s': %s",
			                       dtl_schema_describe(s, node), what, problem);
	}
	ret_pattern->text = node->string.text;
	ret_pattern->len = (uint32_t)node->string.len;
	ret_pattern->loc = dtl_schema_loc(s, node);
	return 0;
}

int dtl_schema_patterns(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                        enum dtl_pattern_kind kind, struct dtl_patterns *ret_patterns)
{
	struct dtl_patterns out = {.present = true, .loc = dtl_schema_loc(s, node)};
	int r;

	if (node->type == DTL_NODE_NULL) {
		*ret_patterns = out;
		return 0;
	}
	if (node->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, node, what, "a list of strings");
	out.count = node->seq.count;
	out.items = dtl_arena_calloc(s->arena, out.count ? out.count : 1, sizeof(*out.items));
	if (!out.items)
		return -ENOMEM;
	for (size_t i = 0; i < out.count; i++) {
		r = dtl_schema_pattern(s, &node->seq.items[i], what, kind, &out.items[i]);
		if (r < 0)
			return r;
	}
	*ret_patterns = out;
	return 0;
}

int dtl_schema_strings(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                       const char ***ret, size_t *ret_count)
{
	struct dtl_patterns p;
	int r = dtl_schema_patterns(s, node, what, DTL_PATTERN_PLAIN, &p);
	if (r < 0)
		return r;
	const char **out = dtl_arena_calloc(s->arena, p.count ? p.count : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < p.count; i++)
		out[i] = p.items[i].text;
	*ret = out;
	*ret_count = p.count;
	return 0;
}

int dtl_schema_behavior(const struct dtl_schema *s, const struct dtl_node *map, int *ret)
{
	const struct dtl_node *key = dtl_node_get(map, "behaviour");
	const char *text;
	int r;

	*ret = -1;
	if (!key)
		return 0;
	if ((r = dtl_schema_string(s, key, "behaviour", &text)) < 0)
		return r;
	if ((*ret = dtl_behavior_lookup(text, strlen(text))) < 0)
		return dtl_schema_fail(s, key,
		                       "'behaviour' must be a key of rules/versions.yaml, got %s",
		                       dtl_schema_describe(s, key));
	return 0;
}
