/* SPDX-License-Identifier: MIT */
/* Loading the architecture profiles compiled into the binary (rules/architectures/). */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/behavior.h"
#include "dtypelint/model/embedded.h"
#include "dtypelint/model/profile.h"
#include "dtypelint/model/schema.h"

static int parse_status(const struct dtl_schema *s, const struct dtl_node *map, bool *ret_verified)
{
	const struct dtl_node *status = dtl_node_get(map, "status");
	const char *text;
	int r;

	if (!status)
		return dtl_schema_fail(s, map,
		                       "every entry needs a status (verified or from-memory)");
	r = dtl_schema_string(s, status, "status", &text);
	if (r < 0)
		return r;
	if (strcmp(text, "verified") != 0 && strcmp(text, "from-memory") != 0)
		return dtl_schema_fail(s, status,
		                       "'status' must be verified or from-memory, got %s",
		                       dtl_schema_describe(s, status));
	*ret_verified = strcmp(text, "verified") == 0;
	return 0;
}

static int parse_bool_key(const struct dtl_schema *s, const struct dtl_node *map, const char *key,
                          bool *ret)
{
	const struct dtl_node *v = dtl_node_get(map, key);
	if (!v)
		return dtl_schema_fail(s, map, "needs '%s'", key);
	return dtl_schema_bool(s, v, key, ret);
}

static int parse_routers(const struct dtl_schema *s, const struct dtl_node *seq,
                         struct dtl_profile *p)
{
	static const char *const keys[] = {"path", "class", "upcasts", "status", NULL};
	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "routers", "a list");
	p->routers = dtl_arena_calloc(s->arena, seq->seq.count + 1, sizeof(*p->routers));
	if (!p->routers)
		return -ENOMEM;
	for (size_t i = 0; i < seq->seq.count; i++) {
		const struct dtl_node *m = &seq->seq.items[i];
		struct dtl_router_info *ri = &p->routers[i];
		const struct dtl_node *path, *cls;
		int r = dtl_schema_map(s, m, "routers[]");
		if (r < 0 || (r = dtl_schema_check_keys(s, m, "routers[]", keys)) < 0)
			return r;
		if (!(path = dtl_node_get(m, "path")) || !(cls = dtl_node_get(m, "class")))
			return dtl_schema_fail(s, m, "a router needs 'path' and 'class'");
		if ((r = dtl_schema_pattern(s, path, "routers.path", DTL_PATTERN_GLOB, &ri->path)) <
		        0 ||
		    (r = dtl_schema_string(s, cls, "routers.class", &ri->class_name)) < 0 ||
		    (r = parse_bool_key(s, m, "upcasts", &ri->upcasts)) < 0 ||
		    (r = parse_status(s, m, &ri->verified)) < 0)
			return r;
	}
	p->router_count = seq->seq.count;
	return 0;
}

static int parse_buffers(const struct dtl_schema *s, const struct dtl_node *seq,
                         struct dtl_profile *p)
{
	static const char *const keys[] = {"name", "persistent", "self_casting", "status", NULL};
	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "fp32_buffers", "a list");
	p->fp32_buffers = dtl_arena_calloc(s->arena, seq->seq.count + 1, sizeof(*p->fp32_buffers));
	if (!p->fp32_buffers)
		return -ENOMEM;
	for (size_t i = 0; i < seq->seq.count; i++) {
		const struct dtl_node *m = &seq->seq.items[i];
		struct dtl_buffer_info *bi = &p->fp32_buffers[i];
		const struct dtl_node *name;
		int r = dtl_schema_map(s, m, "fp32_buffers[]");
		if (r < 0 || (r = dtl_schema_check_keys(s, m, "fp32_buffers[]", keys)) < 0)
			return r;
		if (!(name = dtl_node_get(m, "name")))
			return dtl_schema_fail(s, m, "an fp32 buffer needs a 'name'");
		if ((r = dtl_schema_pattern(s, name, "fp32_buffers.name", DTL_PATTERN_GLOB,
		                            &bi->name)) < 0 ||
		    (r = parse_bool_key(s, m, "persistent", &bi->persistent)) < 0 ||
		    (r = parse_bool_key(s, m, "self_casting", &bi->self_casting)) < 0 ||
		    (r = parse_status(s, m, &bi->verified)) < 0)
			return r;
	}
	p->fp32_buffer_count = seq->seq.count;
	return 0;
}

static int parse_glob_map(const struct dtl_schema *s, const struct dtl_node *map, const char *what,
                          struct dtl_glob_map **ret, size_t *ret_count)
{
	int r = dtl_schema_map(s, map, what);
	if (r < 0)
		return r;
	struct dtl_glob_map *items = dtl_arena_calloc(s->arena, map->map.count + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < map->map.count; i++) {
		if ((r = dtl_schema_pattern(s, &map->map.pairs[i].key, what, DTL_PATTERN_GLOB,
		                            &items[i].glob)) < 0 ||
		    (r = dtl_schema_string(s, &map->map.pairs[i].value, what, &items[i].value)) < 0)
			return r;
	}
	*ret = items;
	*ret_count = map->map.count;
	return 0;
}

static int parse_tied(const struct dtl_schema *s, const struct dtl_node *seq, struct dtl_profile *p)
{
	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "tied", "a list of name pairs");
	p->tied = dtl_arena_calloc(s->arena, seq->seq.count + 1, sizeof(*p->tied));
	if (!p->tied)
		return -ENOMEM;
	for (size_t i = 0; i < seq->seq.count; i++) {
		struct dtl_patterns names;
		const struct dtl_node *g = &seq->seq.items[i];
		if (g->type != DTL_NODE_SEQ || g->seq.count < 2)
			return dtl_schema_type_error(s, g, "tied", "a list of two or more names");
		int r = dtl_schema_patterns(s, g, "tied", DTL_PATTERN_PLAIN, &names);
		if (r < 0)
			return r;
		p->tied[i].names = names.items;
		p->tied[i].count = names.count;
		p->tied[i].loc = dtl_schema_loc(s, g);
	}
	p->tied_count = seq->seq.count;
	return 0;
}

static int parse_shapes(const struct dtl_schema *s, const struct dtl_node *map,
                        struct dtl_profile *p)
{
	int r = dtl_schema_map(s, map, "shapes");
	if (r < 0)
		return r;
	p->shapes = dtl_arena_calloc(s->arena, map->map.count + 1, sizeof(*p->shapes));
	if (!p->shapes)
		return -ENOMEM;
	for (size_t i = 0; i < map->map.count; i++) {
		struct dtl_shape_rule *rule = &p->shapes[i];
		const struct dtl_node *dims = &map->map.pairs[i].value;
		r = dtl_schema_pattern(s, &map->map.pairs[i].key, "shapes", DTL_PATTERN_GLOB,
		                       &rule->glob);
		if (r < 0)
			return r;
		if (dims->type != DTL_NODE_SEQ)
			return dtl_schema_type_error(s, dims, "shapes", "a list of expressions");
		rule->rank = dims->seq.count;
		rule->dims = dtl_arena_calloc(s->arena, rule->rank + 1, sizeof(*rule->dims));
		if (!rule->dims)
			return -ENOMEM;
		for (size_t d = 0; d < rule->rank; d++) {
			const struct dtl_node *e = &dims->seq.items[d];
			/* a bare number or identifier is an expression too */
			if (e->type == DTL_NODE_STRING)
				rule->dims[d] = e->string.text;
			else if (e->type == DTL_NODE_INT && e->raw)
				rule->dims[d] = dtl_arena_strndup(s->arena, e->raw, e->raw_len);
			else
				return dtl_schema_type_error(s, e, "shapes", "an expression");
			if (!rule->dims[d])
				return -ENOMEM;
		}
	}
	p->shape_count = map->map.count;
	return 0;
}

/* A list of expressions (strings, or bare integers) into *ret_dims. */
static int parse_dims(const struct dtl_schema *s, const struct dtl_node *dims, const char *what,
                      const char ***ret_dims, size_t *ret_rank)
{
	if (dims->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, dims, what, "a list of expressions");
	const char **out = dtl_arena_calloc(s->arena, dims->seq.count + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t d = 0; d < dims->seq.count; d++) {
		const struct dtl_node *e = &dims->seq.items[d];
		if (e->type == DTL_NODE_STRING)
			out[d] = e->string.text;
		else if (e->type == DTL_NODE_INT && e->raw)
			out[d] = dtl_arena_strndup(s->arena, e->raw, e->raw_len);
		else
			return dtl_schema_type_error(s, e, what, "an expression");
		if (!out[d])
			return -ENOMEM;
	}
	*ret_dims = out;
	*ret_rank = dims->seq.count;
	return 0;
}

/* `behaviour: KEY`, a key of rules/versions.yaml: *ret_gate = 1 + its enum; no key: 0 */
static int parse_gate(const struct dtl_schema *s, const struct dtl_node *map, uint16_t *ret_gate)
{
	int b, r = dtl_schema_behavior(s, map, &b);

	*ret_gate = r == 0 && b >= 0 ? (uint16_t)(b + 1) : 0;
	return r;
}

/* `dtype: load` (created under the default dtype, the load dtype), `dtype: float32` (the
 * default) or `dtype: int64` (position ids: an integer buffer carries no dtype contract, but
 * FSDP and ZeRO-3 see it) */
static int parse_created_dtype(const struct dtl_schema *s, const struct dtl_node *map,
                               struct dtl_created_buffer *cb)
{
	const struct dtl_node *key = dtl_node_get(map, "dtype");
	const char *text;
	int r;

	cb->load_dtype = false;
	cb->dtype = DTL_DTYPE_F32;
	if (!key)
		return 0;
	if ((r = dtl_schema_string(s, key, "dtype", &text)) < 0)
		return r;
	if (strcmp(text, "load") == 0)
		cb->load_dtype = true;
	else if (strcmp(text, "int64") == 0)
		cb->dtype = DTL_DTYPE_I64;
	else if (strcmp(text, "bool") == 0)
		cb->dtype = DTL_DTYPE_BOOL;
	else if (strcmp(text, "float32") != 0)
		return dtl_schema_fail(s, key,
		                       "'dtype' must be load, float32, int64 or bool, got %s",
		                       dtl_schema_describe(s, key));
	return 0;
}

/* A created buffer's name: exact, or one per layer with "{layer}" once where the index goes
 * (import-hf.c expands it over num_hidden_layers); any other brace is a typo of it */
static int parse_layer_placeholder(const struct dtl_schema *s, const struct dtl_node *name,
                                   struct dtl_created_buffer *cb)
{
	const size_t hole = sizeof(DTL_LAYER_PLACEHOLDER) - 1;
	size_t braces = 0;

	cb->per_layer = false;
	for (uint32_t i = 0; i < cb->name.len; i++) {
		if (cb->name.text[i] != '{' && cb->name.text[i] != '}')
			continue;
		braces++;
		if (cb->name.text[i] == '{' && cb->name.len - i >= hole &&
		    memcmp(cb->name.text + i, DTL_LAYER_PLACEHOLDER, hole) == 0 && !cb->per_layer) {
			cb->per_layer = true;
			cb->layer_at = i;
		}
	}
	if (braces != (cb->per_layer ? 2u : 0u))
		return dtl_schema_fail(s, name,
		                       "created_buffers.name %s: a brace other than one '{layer}'",
		                       dtl_schema_describe(s, name));
	return 0;
}

/* A list of KEY whose entries are patterns, or `{FIELD: PATTERN, behaviour: BEHAVIOUR}` for
 * an entry true in some versions only: linear_modules (`path`, a module that is an nn.Linear
 * in some versions), no_split_modules (`name`, a class the model's _no_split_modules names in
 * some), no_split_absent (`name`, a class the model's list names in some that it never
 * builds) */
struct gated_list {
	const char *key, *field, *entry, *missing;
	enum dtl_pattern_kind kind;
	struct dtl_patterns *out;
	uint16_t **gates;
};

static int parse_gated(const struct dtl_schema *s, const struct dtl_node *seq,
                       const struct gated_list *g)
{
	const char *const keys[] = {g->field, "behaviour", NULL};
	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, g->key, "a list");
	size_t n = seq->seq.count;
	g->out->items = dtl_arena_calloc(s->arena, n + 1, sizeof(struct dtl_pattern));
	*g->gates = dtl_arena_calloc(s->arena, n + 1, sizeof(**g->gates));
	if (!g->out->items || !*g->gates)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct dtl_node *e = &seq->seq.items[i], *item = e;
		int r = 0;
		if (e->type == DTL_NODE_MAP) {
			if ((r = dtl_schema_check_keys(s, e, g->entry, keys)) < 0)
				return r;
			if (!(item = dtl_node_get(e, g->field)))
				return dtl_schema_fail(s, e, "%s", g->missing);
			r = parse_gate(s, e, &(*g->gates)[i]);
		}
		if (r < 0 ||
		    (r = dtl_schema_pattern(s, item, g->key, g->kind, &g->out->items[i])) < 0)
			return r;
	}
	g->out->count = n;
	g->out->present = true;
	g->out->loc = dtl_schema_loc(s, seq);
	return 0;
}

static int parse_linear_modules(const struct dtl_schema *s, const struct dtl_node *seq,
                                struct dtl_profile *p)
{
	const struct gated_list g = {"linear_modules",   "path",
	                             "linear_modules[]", "a linear_modules entry needs a 'path'",
	                             DTL_PATTERN_GLOB,   &p->linear_modules,
	                             &p->linear_gates};
	return parse_gated(s, seq, &g);
}

static int parse_no_split_modules(const struct dtl_schema *s, const struct dtl_node *seq,
                                  struct dtl_profile *p)
{
	const struct gated_list g = {
	    "no_split_modules",   "name",
	    "no_split_modules[]", "a no_split_modules entry needs a 'name'",
	    DTL_PATTERN_PLAIN,    &p->no_split_modules,
	    &p->no_split_gates};
	return parse_gated(s, seq, &g);
}

static int parse_no_split_absent(const struct dtl_schema *s, const struct dtl_node *seq,
                                 struct dtl_profile *p)
{
	const struct gated_list g = {
	    "no_split_absent",        "name",
	    "no_split_absent[]",      "a no_split_absent entry needs a 'name'",
	    DTL_PATTERN_PLAIN,        &p->no_split_absent,
	    &p->no_split_absent_gates};
	return parse_gated(s, seq, &g);
}

static int parse_created_buffers(const struct dtl_schema *s, const struct dtl_node *seq,
                                 struct dtl_profile *p)
{
	static const char *const keys[] = {"name", "shape", "status", "behaviour", "dtype", NULL};
	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "created_buffers", "a list");
	p->created_buffers =
	    dtl_arena_calloc(s->arena, seq->seq.count + 1, sizeof(*p->created_buffers));
	if (!p->created_buffers)
		return -ENOMEM;
	for (size_t i = 0; i < seq->seq.count; i++) {
		const struct dtl_node *m = &seq->seq.items[i], *name, *shape;
		struct dtl_created_buffer *cb = &p->created_buffers[i];
		int r = dtl_schema_map(s, m, "created_buffers[]");
		if (r < 0 || (r = dtl_schema_check_keys(s, m, "created_buffers[]", keys)) < 0)
			return r;
		if (!(name = dtl_node_get(m, "name")) || !(shape = dtl_node_get(m, "shape")))
			return dtl_schema_fail(s, m,
			                       "a created buffer needs a 'name' and a 'shape'");
		if ((r = dtl_schema_pattern(s, name, "created_buffers.name", DTL_PATTERN_PLAIN,
		                            &cb->name)) < 0 ||
		    (r = parse_layer_placeholder(s, name, cb)) < 0 ||
		    (r = parse_dims(s, shape, "created_buffers.shape", &cb->dims, &cb->rank)) < 0 ||
		    (r = parse_status(s, m, &cb->verified)) < 0 ||
		    (r = parse_gate(s, m, &cb->gate)) < 0 ||
		    (r = parse_created_dtype(s, m, cb)) < 0)
			return r;
	}
	p->created_buffer_count = seq->seq.count;
	return 0;
}

/* subconfig_towers: {MODULE: text_config | vision_config | audio_config} */
static int parse_towers(const struct dtl_schema *s, const struct dtl_node *map,
                        struct dtl_profile *p)
{
	static const char *const configs[] = {[DTL_SUBCONFIG_TEXT] = "text_config",
	                                      [DTL_SUBCONFIG_VISION] = "vision_config",
	                                      [DTL_SUBCONFIG_AUDIO] = "audio_config"};
	int r = dtl_schema_map(s, map, "subconfig_towers");
	if (r < 0)
		return r;
	p->towers = dtl_arena_calloc(s->arena, map->map.count + 1, sizeof(*p->towers));
	if (!p->towers)
		return -ENOMEM;
	for (size_t i = 0; i < map->map.count; i++) {
		struct dtl_subconfig_tower *t = &p->towers[i];
		const char *config;
		size_t k = 0;
		if ((r = dtl_schema_string(s, &map->map.pairs[i].key, "subconfig_towers",
		                           &t->module)) < 0 ||
		    (r = dtl_schema_string(s, &map->map.pairs[i].value, "subconfig_towers",
		                           &config)) < 0)
			return r;
		while (k < sizeof(configs) / sizeof(*configs) && strcmp(config, configs[k]) != 0)
			k++;
		if (k == sizeof(configs) / sizeof(*configs))
			return dtl_schema_fail(s, &map->map.pairs[i].value,
			                       "subconfig_towers: '%s' is none of text_config, "
			                       "vision_config, audio_config",
			                       config);
		t->module_len = strlen(t->module);
		t->config = (enum dtl_subconfig)k;
	}
	p->tower_count = map->map.count;
	return 0;
}

static int parse_profile(const struct dtl_schema *s, const struct dtl_node *root,
                         struct dtl_profile *p)
{
	static const char *const keys[] = {"architecture",
	                                   "aliases",
	                                   "model_type",
	                                   "keep_in_fp32",
	                                   "keep_in_fp32_strict",
	                                   "no_split_modules",
	                                   "no_split_absent",
	                                   "modules",
	                                   "routers",
	                                   "fp32_buffers",
	                                   "tied",
	                                   "tie_word_embeddings_default",
	                                   "linear_modules",
	                                   "shapes",
	                                   "created_buffers",
	                                   "subconfig_towers",
	                                   NULL};
	int r = dtl_schema_map(s, root, "profile");
	if (r < 0 || (r = dtl_schema_check_keys(s, root, "profile", keys)) < 0)
		return r;
	if (!dtl_node_get(root, "architecture"))
		return dtl_schema_fail(s, root, "a profile needs 'architecture'");
	for (size_t i = 0; i < root->map.count && r >= 0; i++) {
		const char *k = root->map.pairs[i].key.string.text;
		const struct dtl_node *v = &root->map.pairs[i].value;
		if (strcmp(k, "architecture") == 0)
			r = dtl_schema_string(s, v, k, &p->architecture);
		else if (strcmp(k, "aliases") == 0)
			r = dtl_schema_strings(s, v, k, &p->aliases, &p->alias_count);
		else if (strcmp(k, "model_type") == 0)
			r = dtl_schema_string(s, v, k, &p->model_type);
		else if (strcmp(k, "keep_in_fp32") == 0)
			r = dtl_schema_patterns(s, v, k, DTL_PATTERN_PLAIN, &p->keep_in_fp32);
		else if (strcmp(k, "keep_in_fp32_strict") == 0)
			r = dtl_schema_patterns(s, v, k, DTL_PATTERN_PLAIN,
			                        &p->keep_in_fp32_strict);
		else if (strcmp(k, "no_split_modules") == 0)
			r = parse_no_split_modules(s, v, p);
		else if (strcmp(k, "no_split_absent") == 0)
			r = parse_no_split_absent(s, v, p);
		else if (strcmp(k, "modules") == 0)
			r = parse_glob_map(s, v, k, &p->modules, &p->module_count);
		else if (strcmp(k, "routers") == 0)
			r = parse_routers(s, v, p);
		else if (strcmp(k, "fp32_buffers") == 0)
			r = parse_buffers(s, v, p);
		else if (strcmp(k, "tied") == 0)
			r = parse_tied(s, v, p);
		else if (strcmp(k, "tie_word_embeddings_default") == 0)
			r = dtl_schema_bool(s, v, k, &p->tie_word_embeddings_default);
		else if (strcmp(k, "linear_modules") == 0)
			r = parse_linear_modules(s, v, p);
		else if (strcmp(k, "shapes") == 0)
			r = parse_shapes(s, v, p);
		else if (strcmp(k, "created_buffers") == 0)
			r = parse_created_buffers(s, v, p);
		else if (strcmp(k, "subconfig_towers") == 0)
			r = parse_towers(s, v, p);
	}
	return r;
}

int dtl_profiles_load(struct dtl_profiles *profiles, const char *architecture,
                      struct dtl_arena *arena, struct dtl_error *error)
{
	struct dtl_limits limits;
	size_t n = 0;

	dtl_limits_default(&limits);
	while (dtl_embedded_architectures[n].name)
		n++;
	profiles->items = dtl_arena_calloc(arena, n + 1, sizeof(*profiles->items));
	profiles->count = 0;
	if (!profiles->items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct dtl_embedded_file *f = &dtl_embedded_architectures[i];
		/* a profile names its architecture and aliases verbatim (a unit test checks it):
		 * one that does not mention the architecture is not parsed (all of them cost more
		 * than linting 10,000 tensors) */
		if (architecture && !memmem(f->data, f->size, architecture, strlen(architecture)))
			continue;
		const char *file = dtl_arena_sprintf(arena, "rules/architectures/%s", f->name);
		struct dtl_schema s = {
		    .file = file, .arena = arena, .limits = &limits, .error = error};
		struct dtl_source source;
		struct dtl_node *root;
		int r;
		if (!file)
			return -ENOMEM;
		r = dtl_source_init_mem(&source, file, f->data, f->size);
		if (r < 0)
			return r;
		r = dtl_doc_parse_yaml(&source, arena, &limits, &root, error);
		if (r >= 0) {
			struct dtl_profile *p = &profiles->items[profiles->count];
			p->file = file;
			r = parse_profile(&s, root, p);
			if (r >= 0)
				profiles->count++;
		}
		dtl_source_fini(&source);
		if (r < 0)
			return r;
	}
	return 0;
}

const struct dtl_profile *dtl_profiles_find(const struct dtl_profiles *profiles,
                                            const char *architecture)
{
	if (!architecture)
		return NULL;
	for (size_t i = 0; i < profiles->count; i++) {
		const struct dtl_profile *p = &profiles->items[i];
		if (strcmp(p->architecture, architecture) == 0)
			return p;
		for (size_t a = 0; a < p->alias_count; a++)
			if (strcmp(p->aliases[a], architecture) == 0)
				return p;
	}
	return NULL;
}
