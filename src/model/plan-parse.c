/* SPDX-License-Identifier: MIT */
/* Validation of a training plan (docs/design.md §3 `training:`): its keys, their types and
 * where each is stored are the rows of plan-keys.h; this file reads a value of each type. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtypelint/model/manifest.h"
#include "dtypelint/model/schema.h"
#include "dtypelint/model/plan-key.h"

static int parse_versions(const struct dtl_schema *s, const struct dtl_node *map,
                          struct dtl_plan *plan)
{
	int r = dtl_schema_map(s, map, "versions");
	if (r < 0)
		return r;
	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		const struct dtl_node *value = &map->map.pairs[i].value;
		enum dtl_framework fw;
		if (key->type != DTL_NODE_STRING ||
		    dtl_framework_parse(key->string.text, &fw) < 0) {
			if (key->type == DTL_NODE_STRING && key->string.len >= 2 &&
			    memcmp(key->string.text, "x-", 2) == 0)
				continue;
			return dtl_schema_fail(
			    s, key,
			    "unknown framework %s in 'versions' (expected one of: "
			    "torch, transformers, peft, deepspeed, accelerate, trl, "
			    "bitsandbytes, nemo-automodel)",
			    dtl_schema_describe(s, key));
		}
		/* YAML reads 2.1 as a number: take its spelling */
		const char *text = value->type == DTL_NODE_STRING ? value->string.text : value->raw;
		size_t len = value->type == DTL_NODE_STRING ? value->string.len : value->raw_len;
		if ((value->type != DTL_NODE_STRING && value->type != DTL_NODE_FLOAT &&
		     value->type != DTL_NODE_INT) ||
		    !text || dtl_version_parse(text, len, &plan->versions[fw]) < 0)
			return dtl_schema_fail(
			    s, value, "'versions.%s' must be a version like \"2.7.1\", got %s",
			    dtl_framework_name(fw), dtl_schema_describe(s, value));
		plan->version_locs[fw] = dtl_schema_loc(s, value);
	}
	return 0;
}

static int parse_threshold(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                           bool allow_auto, int64_t *ret_value, bool *ret_auto)
{
	if (allow_auto && v->type == DTL_NODE_STRING && strcmp(v->string.text, "auto") == 0) {
		*ret_auto = true;
		*ret_value = -1;
		return 0;
	}
	if (v->type == DTL_NODE_NULL) {
		*ret_value = -1;
		return 0;
	}
	if (v->type == DTL_NODE_STRING)
		return dtl_schema_fail(s, v, "'%s' must be a non-negative integer%s, got %s", what,
		                       allow_auto ? " or \"auto\"" : "", dtl_schema_describe(s, v));
	return dtl_schema_int(s, v, what, 0, INT64_MAX, ret_value);
}

static int parse_offload(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                         enum dtl_offload *ret_offload)
{
	const char *text;
	int r = dtl_schema_string(s, v, what, &text);

	if (r < 0)
		return r;
	if (strcmp(text, "none") == 0)
		*ret_offload = DTL_OFFLOAD_NONE;
	else if (strcmp(text, "cpu") == 0)
		*ret_offload = DTL_OFFLOAD_CPU;
	else if (strcmp(text, "nvme") == 0)
		*ret_offload = DTL_OFFLOAD_NVME;
	else
		return dtl_schema_fail(s, v, "'%s' must be none, cpu or nvme, got %s", what,
		                       dtl_schema_describe(s, v));
	return 0;
}

/* zero.Init(tensor_overrides=[DeepSpeedTensorOverride.dtype, .device]) as names */
static int parse_tensor_overrides(const struct dtl_schema *s, const struct dtl_node *v,
                                  const char *what, enum dtl_tristate *override)
{
	char items[160];
	if (v->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, v, what, "a list of dtype and device");
	*override = DTL_FALSE;
	snprintf(items, sizeof(items), "%s[]", what);
	for (size_t i = 0; i < v->seq.count; i++) {
		const struct dtl_node *item = &v->seq.items[i];
		const char *text;
		int r = dtl_schema_string(s, item, items, &text);
		if (r < 0)
			return r;
		if (strcmp(text, "dtype") == 0)
			*override = DTL_TRUE;
		else if (strcmp(text, "device") != 0)
			return dtl_schema_fail(s, item,
			                       "'%s' items must be dtype or device "
			                       "(DeepSpeedTensorOverride), got %s",
			                       what, dtl_schema_describe(s, item));
	}
	return 0;
}

int dtl_plan_parse_versions(const struct dtl_node *map, const char *file, struct dtl_arena *arena,
                            struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_limits limits;
	dtl_limits_default(&limits);
	struct dtl_schema s = {.file = file, .arena = arena, .limits = &limits, .error = error};
	return parse_versions(&s, map, plan);
}

/* "80GiB" or a number of bytes (YAML reads 8e10 as a float: take its spelling) */
static int parse_device_memory(const struct dtl_schema *s, const struct dtl_node *v,
                               const char *what, int64_t *ret_bytes)
{
	const char *text = v->type == DTL_NODE_STRING ? v->string.text : v->raw;
	char buf[64];

	if ((v->type == DTL_NODE_STRING || v->type == DTL_NODE_INT) && text) {
		size_t len = v->type == DTL_NODE_STRING ? v->string.len : v->raw_len;
		if (len < sizeof(buf)) {
			memcpy(buf, text, len);
			buf[len] = 0;
			int r = dtl_bytes_parse(buf, ret_bytes);
			if (r == 0)
				return 0;
		}
	}
	return dtl_schema_fail(s, v,
	                       "'%s' must be a size such as \"80GiB\", \"40GB\" or a number of "
	                       "bytes (at least 1, at most 2^62), got %s",
	                       what, dtl_schema_describe(s, v));
}

/* one of an enumeration's words ("a, b, c") */
static bool listed(const char *values, const char *text)
{
	size_t n = strlen(text);
	for (const char *v = values; v; v = strchr(v, ',') ? strchr(v, ',') + 2 : NULL)
		if (strncmp(v, text, n) == 0 && (v[n] == ',' || v[n] == 0))
			return true;
	return false;
}

/* strategy, precision, optimizer and trainer: one of the row's words */
static int parse_enum(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                      const struct dtl_plan_key *key, void *field)
{
	const char *text;
	int r = dtl_schema_string(s, v, what, &text), bad = 0;

	if (r < 0)
		return r;
	if (key->type == DTL_PLAN_STRATEGY)
		bad = dtl_strategy_parse(text, field) < 0;
	else if (key->type == DTL_PLAN_PRECISION)
		bad = dtl_precision_parse(text, field) < 0;
	else if (key->type == DTL_PLAN_OPTIMIZER)
		bad = dtl_optimizer_parse(text, field) < 0;
	else if (!(bad = !listed(key->values, text)))
		*(const char **)field = text;
	if (bad)
		return dtl_schema_fail(s, v, "'%s' must be one of %s, got %s", what, key->values,
		                       dtl_schema_describe(s, v));
	return 0;
}

static int parse_float_dtype(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                             enum dtl_dtype *dtype)
{
	int r = dtl_schema_dtype(s, v, what, true, dtype);
	if (r >= 0 && *dtype != DTL_DTYPE_NONE && !dtl_dtype_is_floating(*dtype))
		r = dtl_schema_fail(s, v, "'%s' must be a floating dtype, got %s", what,
		                    dtl_schema_describe(s, v));
	return r;
}

static int parse_map(const struct dtl_schema *s, struct dtl_plan *plan, enum dtl_plan_key_id parent,
                     const struct dtl_node *map, const char *what, const char *prefix);

/* One key's value into its FIELD, by its row's type */
static int parse_value(const struct dtl_schema *s, struct dtl_plan *plan, enum dtl_plan_key_id id,
                       const struct dtl_node *v, const char *what)
{
	const struct dtl_plan_key *key = &dtl_plan_keys[id];
	void *field = dtl_plan_key_field(plan, id);
	bool unused_auto = false;

	switch (key->type) {
	case DTL_PLAN_SWITCH:
		*(enum dtl_tristate *)field = DTL_FALSE;
		return parse_map(s, plan, id, v, what, what);
	case DTL_PLAN_MAP:
		return parse_map(s, plan, id, v, what, what);
	case DTL_PLAN_STRATEGY:
	case DTL_PLAN_PRECISION:
	case DTL_PLAN_OPTIMIZER:
	case DTL_PLAN_TRAINER:
		return parse_enum(s, v, what, key, field);
	case DTL_PLAN_RANKS:
		return dtl_schema_int(s, v, what, 1, 1 << 24, field);
	case DTL_PLAN_VERSIONS:
		return parse_versions(s, v, plan);
	case DTL_PLAN_GLOBS:
		return dtl_schema_patterns(s, v, what, DTL_PATTERN_GLOB, field);
	case DTL_PLAN_DTYPE:
		return dtl_schema_dtype(s, v, what, true, field);
	case DTL_PLAN_FLOAT_DTYPE:
		return parse_float_dtype(s, v, what, field);
	case DTL_PLAN_TRISTATE:
		return dtl_schema_tristate(s, v, what, field);
	case DTL_PLAN_THRESHOLD:
		return parse_threshold(s, v, what, false, field, &unused_auto);
	case DTL_PLAN_THRESHOLD_AUTO: /* the one key with "auto": its flag is zero3's */
		return parse_threshold(s, v, what, true, field, &plan->zero3.persistence_auto);
	case DTL_PLAN_OFFLOAD:
		return parse_offload(s, v, what, field);
	case DTL_PLAN_TENSOR_OVERRIDES:
		return parse_tensor_overrides(s, v, what, field);
	case DTL_PLAN_BYTES:
		return parse_device_memory(s, v, what, field);
	}
	return -EINVAL;
}

/* A mapping of the plan (the top level: parent ROOT, prefix NULL): its keys checked against
 * the table's rows under parent, each read in document order; what names it in errors */
static int parse_map(const struct dtl_schema *s, struct dtl_plan *plan, enum dtl_plan_key_id parent,
                     const struct dtl_node *map, const char *what, const char *prefix)
{
	const char *names[DTL_PLAN_KEY_COUNT + 1];
	enum dtl_plan_key_id ids[DTL_PLAN_KEY_COUNT];
	size_t n = 0;
	int r = dtl_schema_map(s, map, what);

	for (int id = 0; id < DTL_PLAN_KEY_COUNT; id++)
		if (dtl_plan_keys[id].parent == parent)
			ids[n] = (enum dtl_plan_key_id)id, names[n++] = dtl_plan_keys[id].name;
	names[n] = NULL;
	if (r < 0 || (r = dtl_schema_check_keys(s, map, what, names)) < 0)
		return r;
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		for (size_t j = 0; j < n && r >= 0; j++) {
			const struct dtl_plan_key *key = &dtl_plan_keys[ids[j]];
			char path[128];
			if (strcmp(k, key->name) != 0)
				continue;
			struct dtl_loc *loc = dtl_plan_key_loc(plan, ids[j]);
			if (loc)
				*loc = dtl_schema_loc(s, v);
			snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "",
			         prefix ? "." : "", key->name);
			r = parse_value(s, plan, ids[j], v, path);
		}
	}
	return r;
}

int dtl_plan_key_read(const struct dtl_schema *s, const struct dtl_node *section, const char *name,
                      struct dtl_plan *plan, enum dtl_plan_key_id id)
{
	const struct dtl_node *v = dtl_node_get(section, name);
	struct dtl_loc *loc = dtl_plan_key_loc(plan, id);

	if (!v)
		return 0;
	if (loc)
		*loc = dtl_schema_loc(s, v);
	return parse_value(s, plan, id, v, name);
}

int dtl_plan_parse(const struct dtl_node *map, const char *file, struct dtl_arena *arena,
                   struct dtl_plan *plan, struct dtl_error *error)
{
	struct dtl_limits limits;
	dtl_limits_default(&limits);
	struct dtl_schema s = {.file = file, .arena = arena, .limits = &limits, .error = error};

	plan->file = file;
	plan->loc = dtl_schema_loc(&s, map);
	return parse_map(&s, plan, DTL_PLAN_KEY_ROOT, map, "training", NULL);
}
