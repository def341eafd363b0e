/* SPDX-License-Identifier: MIT */
/* Validation of a manifest (docs/design.md §3, schema version 1) into struct dtl_manifest. */
#include <errno.h>
#include <string.h>

#include "dtypelint/model/manifest.h"
#include "import-util.h"
#include "load.h"
#include "dtypelint/model/schema.h"

static int parse_glob_map(const struct dtl_schema *s, const struct dtl_node *map, const char *what,
                          struct dtl_glob_map **ret_items, size_t *ret_count)
{
	int r = dtl_schema_map(s, map, what);
	if (r < 0)
		return r;
	struct dtl_glob_map *items =
	    dtl_arena_calloc(s->arena, map->map.count ? map->map.count : 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < map->map.count; i++) {
		r = dtl_schema_pattern(s, &map->map.pairs[i].key, what, DTL_PATTERN_GLOB,
		                       &items[i].glob);
		if (r < 0)
			return r;
		r = dtl_schema_string(s, &map->map.pairs[i].value, what, &items[i].value);
		if (r < 0)
			return r;
		if (!items[i].value[0])
			return dtl_schema_fail(s, &map->map.pairs[i].value,
			                       "'%s' values must not be empty", what);
	}
	*ret_items = items;
	*ret_count = map->map.count;
	return 0;
}

static int parse_tied(const struct dtl_schema *s, const struct dtl_node *seq,
                      struct dtl_model_info *model)
{
	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "model.tied",
		                             "a list of lists of tensor names");
	model->tied =
	    dtl_arena_calloc(s->arena, seq->seq.count ? seq->seq.count : 1, sizeof(*model->tied));
	if (!model->tied)
		return -ENOMEM;
	for (size_t i = 0; i < seq->seq.count; i++) {
		const struct dtl_node *group = &seq->seq.items[i];
		struct dtl_patterns names;
		if (group->type != DTL_NODE_SEQ || group->seq.count < 2)
			return dtl_schema_type_error(s, group, "model.tied",
			                             "a list of lists of two or more tensor names");
		int r = dtl_schema_patterns(s, group, "model.tied", DTL_PATTERN_PLAIN, &names);
		if (r < 0)
			return r;
		model->tied[i].names = names.items;
		model->tied[i].count = names.count;
		model->tied[i].loc = dtl_schema_loc(s, group);
	}
	model->tied_count = seq->seq.count;
	return 0;
}

static int parse_model(const struct dtl_schema *s, const struct dtl_node *map,
                       struct dtl_model_info *model)
{
	static const char *const keys[] = {"name",
	                                   "architecture",
	                                   "checkpoint_dtype",
	                                   "load_dtype",
	                                   "hidden_size",
	                                   "max_position_embeddings",
	                                   "keep_in_fp32",
	                                   "keep_in_fp32_strict",
	                                   "no_split_modules",
	                                   "modules",
	                                   "routers",
	                                   "tied",
	                                   "kernels",
	                                   NULL};
	int r = dtl_schema_map(s, map, "model");
	if (r < 0 || (r = dtl_schema_check_keys(s, map, "model", keys)) < 0)
		return r;
	model->loc = dtl_schema_loc(s, map);
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		if (strcmp(k, "name") == 0) {
			r = dtl_schema_string(s, v, "model.name", &model->name);
		} else if (strcmp(k, "architecture") == 0) {
			r = dtl_schema_string(s, v, "model.architecture", &model->architecture);
			model->architecture_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "checkpoint_dtype") == 0) {
			r = dtl_schema_dtype(s, v, "model.checkpoint_dtype", false,
			                     &model->checkpoint_dtype);
			model->checkpoint_dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "load_dtype") == 0) {
			model->load_dtype_loc = dtl_schema_loc(s, v);
			if (v->type == DTL_NODE_STRING && strcmp(v->string.text, "as-is") == 0)
				model->load_mode = DTL_LOAD_AS_IS;
			else if (v->type == DTL_NODE_STRING && strcmp(v->string.text, "auto") == 0)
				model->load_mode = DTL_LOAD_AUTO;
			else if ((v->type == DTL_NODE_STRING &&
			          strcmp(v->string.text, "none") == 0) ||
			         v->type == DTL_NODE_NULL)
				model->load_mode = DTL_LOAD_NONE;
			else {
				if (v->type == DTL_NODE_STRING &&
				    dtl_dtype_parse(v->string.text, v->string.len) ==
				        DTL_DTYPE_NONE)
					return dtl_schema_fail(
					    s, v,
					    "'model.load_dtype' must be as-is, auto, "
					    "none or a dtype, got %s; dtypes: %s",
					    dtl_schema_describe(s, v), dtl_dtype_valid_names());
				model->load_mode = DTL_LOAD_DTYPE;
				r = dtl_schema_dtype(s, v, "model.load_dtype", false,
				                     &model->load_dtype);
			}
		} else if (strcmp(k, "hidden_size") == 0) {
			r = dtl_schema_int(s, v, "model.hidden_size", 1, INT64_C(1) << 40,
			                   &model->hidden_size);
			model->hidden_size_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "max_position_embeddings") == 0) {
			r = dtl_schema_int(s, v, "model.max_position_embeddings", 1,
			                   INT64_C(1) << 40, &model->max_position_embeddings);
		} else if (strcmp(k, "keep_in_fp32") == 0) {
			r = dtl_schema_patterns(s, v, "model.keep_in_fp32", DTL_PATTERN_PLAIN,
			                        &model->keep_in_fp32);
		} else if (strcmp(k, "keep_in_fp32_strict") == 0) {
			r = dtl_schema_patterns(s, v, "model.keep_in_fp32_strict",
			                        DTL_PATTERN_PLAIN, &model->keep_in_fp32_strict);
		} else if (strcmp(k, "no_split_modules") == 0) {
			r = dtl_schema_patterns(s, v, "model.no_split_modules", DTL_PATTERN_PLAIN,
			                        &model->no_split_modules);
		} else if (strcmp(k, "modules") == 0) {
			r = parse_glob_map(s, v, "model.modules", &model->modules,
			                   &model->module_count);
		} else if (strcmp(k, "routers") == 0) {
			r = dtl_schema_patterns(s, v, "model.routers", DTL_PATTERN_GLOB,
			                        &model->routers);
		} else if (strcmp(k, "tied") == 0) {
			r = parse_tied(s, v, model);
		} else if (strcmp(k, "kernels") == 0) {
			r = parse_glob_map(s, v, "model.kernels", &model->kernels,
			                   &model->kernel_count);
		}
	}
	return r;
}

static int check_tensor_name(const struct dtl_schema *s, const struct dtl_node *node)
{
	const char *name = node->string.text;
	size_t len = node->string.len;

	if (len == 0)
		return dtl_schema_fail(s, node, "a tensor 'name' must not be empty");
	if (len > s->limits->max_name_length)
		return dtl_schema_fail(s, node,
		                       "tensor name is %zu bytes long, over the limit of %zu", len,
		                       s->limits->max_name_length);
	/* the common case, a clean name, from dot to dot (glibc's memmem() sets up a two-way
	 * search for every call: 400 instructions a name); else the loop below finds the first
	 * fault */
	bool clean = name[0] != '.' && name[len - 1] != '.' && !memchr(name, '*', len);
	for (const char *dot = memchr(name, '.', len); clean && dot;
	     dot = memchr(dot + 1, '.', len - (size_t)(dot + 1 - name)))
		clean = dot[1] != '.'; /* the last byte is no '.': dot[1] is in the name */
	if (clean)
		return 0;
	for (size_t i = 0; i < len; i++) {
		bool edge = i == 0 || i + 1 == len;
		if (name[i] == '.' && (edge || name[i + 1] == '.'))
			return dtl_schema_fail(
			    s, node,
			    "tensor name %s has an empty path segment (a leading, "
			    "trailing or double '.')",
			    dtl_schema_describe(s, node));
		if (name[i] == '*')
			return dtl_schema_fail(s, node,
			                       "tensor name %s contains '*': names are not globs",
			                       dtl_schema_describe(s, node));
	}
	return 0;
}

static int parse_shape(const struct dtl_schema *s, const struct dtl_node *v,
                       struct dtl_tensor_decl *t)
{
	if (v->type != DTL_NODE_SEQ)
		return dtl_schema_fail(s, v,
		                       "'shape' must be a list of non-negative integers, got %s",
		                       dtl_schema_describe(s, v));
	if (v->seq.count > s->limits->max_rank)
		return dtl_schema_fail(s, v, "'shape' has %zu dimensions, over the limit of %u",
		                       v->seq.count, s->limits->max_rank);
	t->rank = (uint32_t)v->seq.count;
	t->shape = dtl_arena_calloc(s->arena, t->rank ? t->rank : 1, sizeof(int64_t));
	if (!t->shape)
		return -ENOMEM;
	int64_t numel = 1;
	for (uint32_t d = 0; d < t->rank; d++) {
		const struct dtl_node *dim = &v->seq.items[d];
		if (dim->type != DTL_NODE_INT || dim->integer < 0)
			return dtl_schema_fail(
			    s, dim, "'shape' must be a list of non-negative integers, got %s",
			    dtl_schema_describe(s, dim));
		t->shape[d] = dim->integer;
		if (numel != 0 && dim->integer > DTL_NUMEL_MAX / (numel ? numel : 1))
			return dtl_schema_fail(s, dim,
			                       "'shape' of '%s' has 2^60 elements or more (its "
			                       "bytes in float64 would not fit in 63 bits)",
			                       t->name);
		numel *= dim->integer;
	}
	t->numel = numel;
	return 0;
}

static int parse_tensor(const struct dtl_schema *s, const struct dtl_node *map,
                        struct dtl_tensor_decl *t)
{
	static const char *const keys[] = {"name",      "shape",      "dtype", "kind",
	                                   "trainable", "persistent", NULL};
	const struct dtl_node *name;
	int r;

	if (map->type != DTL_NODE_MAP)
		return dtl_schema_fail(s, map, "each entry of 'tensors' must be a mapping, got %s",
		                       dtl_schema_describe(s, map));
	r = dtl_schema_check_keys(s, map, "tensors[]", keys);
	if (r < 0)
		return r;
	t->loc = dtl_schema_loc(s, map);
	t->dtype_loc = t->loc;
	t->numel = -1;
	t->trainable = DTL_UNSET;
	t->persistent = true;
	name = dtl_node_get(map, "name");
	if (!name)
		return dtl_schema_fail(s, map, "a tensor needs a 'name'");
	if (name->type != DTL_NODE_STRING)
		return dtl_schema_type_error(s, name, "name", "a string");
	r = check_tensor_name(s, name);
	if (r < 0)
		return r;
	t->name = name->string.text;
	t->name_len = (uint32_t)name->string.len;
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		if (strcmp(k, "shape") == 0) {
			r = parse_shape(s, v, t);
		} else if (strcmp(k, "dtype") == 0) {
			r = dtl_schema_dtype(s, v, "dtype", false, &t->dtype);
			t->dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "kind") == 0) {
			if (v->type == DTL_NODE_STRING && strcmp(v->string.text, "param") == 0)
				t->kind = DTL_KIND_PARAM;
			else if (v->type == DTL_NODE_STRING &&
			         strcmp(v->string.text, "buffer") == 0)
				t->kind = DTL_KIND_BUFFER;
			else
				r = dtl_schema_fail(s, v, "'kind' must be param or buffer, got %s",
				                    dtl_schema_describe(s, v));
		} else if (strcmp(k, "trainable") == 0) {
			r = dtl_schema_tristate(s, v, "trainable", &t->trainable);
		} else if (strcmp(k, "persistent") == 0) {
			r = dtl_schema_bool(s, v, "persistent", &t->persistent);
		}
	}
	if (r >= 0 && t->kind == DTL_KIND_BUFFER && t->trainable == DTL_TRUE)
		r = dtl_schema_fail(s, map, "buffer '%s' cannot be trainable", t->name);
	const struct dtl_node *persistent = dtl_node_get(map, "persistent");
	if (r >= 0 && t->kind == DTL_KIND_PARAM && persistent)
		r = dtl_schema_fail(s, persistent,
		                    "'persistent' applies to buffers only ('%s' is a param)",
		                    t->name);
	return r;
}

void dtl_tensor_stream_init(struct dtl_tensor_stream *ts, const char *file, struct dtl_arena *arena,
                            const struct dtl_limits *limits)
{
	memset(ts, 0, sizeof(*ts));
	ts->file = file;
	ts->arena = arena;
	ts->limits = limits;
	dtl_strmap_init(&ts->names, arena);
}

/* Once ESTIMATE_AFTER tensors are read, the bytes they took say about how many the rest of
 * the file holds: the name map is sized for them then, and does not grow (rehashing a map of
 * 100k names read every name again, from memory long out of the cache). An estimate too high
 * (a file whose tensors are followed by something large) costs untouched pages. */
#define ESTIMATE_AFTER 1024

static int reserve_names(struct dtl_tensor_stream *ts, size_t end)
{
	const struct dtl_doc_stream *doc = ts->doc;

	if (!doc || end <= doc->first || end > doc->size)
		return 0;
	size_t per_tensor = (end - doc->first) / ts->count;
	size_t estimate = ts->count + (doc->size - end) / (per_tensor ? per_tensor : 1);
	if (estimate > ts->limits->max_tensors)
		estimate = ts->limits->max_tensors;
	return dtl_strmap_reserve(&ts->names, estimate);
}

/* Adds tensor i's name to names (hash: its dtl_strmap_hash() there); a name that came
 * before is an error at name_loc (its 'name' value). 0, -ENOMEM, or the error. */
static int index_name(const struct dtl_schema *s, struct dtl_strmap *names,
                      const struct dtl_tensor_decl *decls, size_t i, struct dtl_loc name_loc,
                      uint64_t hash)
{
	int64_t first =
	    dtl_strmap_put_hash(names, decls[i].name, decls[i].name_len, hash, (int64_t)i);

	if (first < 0)
		return -ENOMEM;
	if ((size_t)first == i)
		return 0;
	return dtl_error_set(s->error, name_loc, -EINVAL,
	                     "duplicate tensor '%s' (first at line %u)", decls[i].name,
	                     decls[first].loc.line);
}

/* The steps after the conversion of tensor i, the element that ended at offset end: the
 * name map sized, the name against the names before it. */
static int stream_index(struct dtl_tensor_stream *ts, const struct dtl_schema *s, size_t i,
                        struct dtl_loc name_loc, size_t end, uint64_t hash)
{
	if (ts->count == ESTIMATE_AFTER && reserve_names(ts, end) < 0)
		return -ENOMEM;
	int r = index_name(s, &ts->names, ts->decls.items, i, name_loc, hash);
	if (r == -ENOMEM)
		return r;
	ts->failed = r;
	return 0;
}

/* What parse_tensors() does for one element, in the same order: the tensor, then its name
 * against the names before it. The first error is kept; later elements are only counted. */
int dtl_tensor_stream_element(void *ctx, const struct dtl_node *item)
{
	struct dtl_tensor_stream *ts = ctx;
	struct dtl_schema s = {
	    .file = ts->file, .arena = ts->arena, .limits = ts->limits, .error = &ts->error};
	size_t i = ts->count++;

	/* past --max-tensors the list is refused whole (parse_tensors): keep nothing */
	if (ts->failed || i >= ts->limits->max_tensors)
		return 0;
	struct dtl_tensor_decl *t = dtl_vec_push(&ts->decls, ts->arena, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* the name's slot loads while the rest of the tensor is converted */
	const struct dtl_node *name =
	    dtl_strmap_is_large(&ts->names) ? dtl_node_get(item, "name") : NULL;
	if (name && name->type == DTL_NODE_STRING)
		dtl_strmap_prefetch(&ts->names, name->string.text, name->string.len);
	int r = parse_tensor(&s, item, t);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		ts->failed = r;
		return 0;
	}
	return stream_index(ts, &s, i, dtl_schema_loc(&s, dtl_node_get(item, "name")),
	                    ts->doc ? ts->doc->end : 0,
	                    dtl_strmap_hash(&ts->names, t->name, t->name_len));
}

bool dtl_tensor_stream_open(const struct dtl_tensor_stream *ts)
{
	return !ts->failed && ts->count < ts->limits->max_tensors;
}

int dtl_tensor_stream_add(struct dtl_tensor_stream *ts, const struct dtl_tensor_decl *decl,
                          const char *name, uint64_t name_hash, const int64_t *dims,
                          struct dtl_loc name_loc, size_t end)
{
	struct dtl_schema s = {
	    .file = ts->file, .arena = ts->arena, .limits = ts->limits, .error = &ts->error};
	size_t i = ts->count++;
	struct dtl_tensor_decl *t = dtl_vec_push(&ts->decls, ts->arena, sizeof(*t));

	if (!t)
		return -ENOMEM;
	*t = *decl;
	/* what parse_tensor() keeps: the name in the arena (the reader's copy of a string),
	 * and a shape as parse_shape() allocates it */
	t->name = dtl_arena_strndup(ts->arena, name, decl->name_len);
	if (!t->name)
		return -ENOMEM;
	if (dims) {
		t->shape = dtl_arena_calloc(ts->arena, t->rank ? t->rank : 1, sizeof(int64_t));
		if (!t->shape)
			return -ENOMEM;
		memcpy(t->shape, dims, t->rank * sizeof(int64_t));
	}
	return stream_index(ts, &s, i, name_loc, end, name_hash);
}

/* The tensors the reader streamed: the checks parse_tensors() makes first, then the first
 * conversion error, if any. */
static int streamed_tensors(const struct dtl_schema *s, const struct dtl_node *seq,
                            const struct dtl_tensor_stream *ts, struct dtl_manifest *m)
{
	if (ts->count > s->limits->max_tensors)
		return dtl_schema_fail(s, seq, "%zu tensors, over the limit of %zu (--max-tensors)",
		                       ts->count, s->limits->max_tensors);
	if (ts->failed) {
		dtl_error_copy(s->error, &ts->error);
		return ts->failed;
	}
	m->tensor_count = ts->count;
	m->tensors = ts->decls.items;
	m->tensor_index = ts->names;
	if (!m->tensors)
		m->tensors = dtl_arena_calloc(s->arena, 1, sizeof(*m->tensors));
	return m->tensors ? 0 : -ENOMEM;
}

static int parse_tensors(const struct dtl_schema *s, const struct dtl_node *seq,
                         struct dtl_manifest *m)
{
	struct dtl_strmap *names = &m->tensor_index;
	int r = 0;

	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "tensors", "a list of tensors");
	if (seq->seq.count > s->limits->max_tensors)
		return dtl_schema_fail(s, seq, "%zu tensors, over the limit of %zu (--max-tensors)",
		                       seq->seq.count, s->limits->max_tensors);
	m->tensor_count = seq->seq.count;
	m->tensors =
	    dtl_arena_calloc(s->arena, m->tensor_count ? m->tensor_count : 1, sizeof(*m->tensors));
	if (!m->tensors)
		return -ENOMEM;
	dtl_strmap_init(names, s->arena);
	if (dtl_strmap_reserve(names, m->tensor_count) < 0)
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < m->tensor_count; i++) {
		struct dtl_tensor_decl *t = &m->tensors[i];
		r = parse_tensor(s, &seq->seq.items[i], t);
		if (r >= 0)
			r = index_name(s, names, m->tensors, i,
			               dtl_schema_loc(s, dtl_node_get(&seq->seq.items[i], "name")),
			               dtl_strmap_hash(names, t->name, t->name_len));
	}
	return r;
}

static int parse_quantization(const struct dtl_schema *s, const struct dtl_node *map,
                              struct dtl_quantization *q)
{
	static const char *const keys[] = {"method",     "compute_dtype", "quant_storage",
	                                   "quant_type", "skip_modules",  NULL};
	const struct dtl_node *method;
	int r = dtl_schema_map(s, map, "quantization");

	if (r < 0 || (r = dtl_schema_check_keys(s, map, "quantization", keys)) < 0)
		return r;
	q->loc = dtl_schema_loc(s, map);
	method = dtl_node_get(map, "method");
	if (!method)
		return dtl_schema_fail(s, map,
		                       "'quantization' needs a 'method' (bnb-4bit or bnb-8bit)");
	q->method_loc = dtl_schema_loc(s, method);
	if (method->type == DTL_NODE_STRING && strcmp(method->string.text, "bnb-4bit") == 0)
		q->method = DTL_QUANT_BNB_4BIT;
	else if (method->type == DTL_NODE_STRING && strcmp(method->string.text, "bnb-8bit") == 0)
		q->method = DTL_QUANT_BNB_8BIT;
	else
		return dtl_schema_fail(s, method,
		                       "'quantization.method' must be bnb-4bit or bnb-8bit, got %s",
		                       dtl_schema_describe(s, method));
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		if (strcmp(k, "compute_dtype") == 0) {
			r = dtl_schema_dtype(s, v, "quantization.compute_dtype", true,
			                     &q->compute_dtype);
			q->compute_dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "quant_storage") == 0) {
			r = dtl_schema_dtype(s, v, "quantization.quant_storage", true,
			                     &q->quant_storage);
			q->quant_storage_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "quant_type") == 0) {
			r = dtl_schema_string(s, v, "quantization.quant_type", &q->quant_type);
			if (r >= 0 && strcmp(q->quant_type, "nf4") != 0 &&
			    strcmp(q->quant_type, "fp4") != 0)
				r = dtl_schema_fail(
				    s, v, "'quantization.quant_type' must be nf4 or fp4, got %s",
				    dtl_schema_describe(s, v));
		} else if (strcmp(k, "skip_modules") == 0) {
			r = dtl_schema_patterns(s, v, "quantization.skip_modules",
			                        DTL_PATTERN_PLAIN, &q->skip_modules);
		}
	}
	return r;
}

static int parse_adapter(const struct dtl_schema *s, const struct dtl_node *map,
                         struct dtl_adapter *a)
{
	static const char *const keys[] = {"type",
	                                   "name",
	                                   "target_modules",
	                                   "r",
	                                   "alpha",
	                                   "autocast_adapter_dtype",
	                                   "modules_to_save",
	                                   "prepare_kbit_training",
	                                   "use_dora",
	                                   "lora_dropout",
	                                   "target_parameters",
	                                   "task_type",
	                                   "added_with",
	                                   NULL};
	int r = dtl_schema_map(s, map, "adapter");
	int64_t unused;

	if (r < 0 || (r = dtl_schema_check_keys(s, map, "adapter", keys)) < 0)
		return r;
	a->present = true;
	a->loc = dtl_schema_loc(s, map);
	a->type = "lora";
	a->name = "default";
	a->autocast_adapter_dtype = DTL_UNSET;
	a->prepare_kbit_training = DTL_UNSET;
	a->use_dora = DTL_UNSET;
	a->lora_dropout = -1;
	a->r = 8;
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const char *k = map->map.pairs[i].key.string.text;
		const struct dtl_node *v = &map->map.pairs[i].value;
		if (strcmp(k, "type") == 0) {
			r = dtl_schema_string(s, v, "adapter.type", &a->type);
			if (r >= 0 && strcmp(a->type, "lora") != 0)
				r = dtl_schema_fail(s, v, "'adapter.type' must be lora, got %s",
				                    dtl_schema_describe(s, v));
		} else if (strcmp(k, "name") == 0) {
			r = dtl_schema_string(s, v, "adapter.name", &a->name);
			if (r >= 0 && (!a->name[0] || strchr(a->name, '.')))
				r = dtl_schema_fail(
				    s, v,
				    "'adapter.name' must be a non-empty name without "
				    "'.', got %s",
				    dtl_schema_describe(s, v));
		} else if (strcmp(k, "target_modules") == 0) {
			if (v->type == DTL_NODE_STRING) {
				a->target_modules_string = v->string.text;
				a->target_modules.present = true;
				a->target_modules.loc = dtl_schema_loc(s, v);
			} else {
				r = dtl_schema_patterns(s, v, "adapter.target_modules",
				                        DTL_PATTERN_PLAIN, &a->target_modules);
			}
		} else if (strcmp(k, "r") == 0) {
			r = dtl_schema_int(s, v, "adapter.r", 1, 1 << 20, &a->r);
		} else if (strcmp(k, "alpha") == 0) {
			r = dtl_schema_int(s, v, "adapter.alpha", 0, 1 << 24, &unused);
		} else if (strcmp(k, "autocast_adapter_dtype") == 0) {
			r = dtl_schema_tristate(s, v, "adapter.autocast_adapter_dtype",
			                        &a->autocast_adapter_dtype);
			a->autocast_adapter_dtype_loc = dtl_schema_loc(s, v);
		} else if (strcmp(k, "modules_to_save") == 0) {
			r = dtl_schema_patterns(s, v, "adapter.modules_to_save", DTL_PATTERN_PLAIN,
			                        &a->modules_to_save);
		} else if (strcmp(k, "prepare_kbit_training") == 0) {
			r = dtl_schema_tristate(s, v, "adapter.prepare_kbit_training",
			                        &a->prepare_kbit_training);
		} else if (strcmp(k, "use_dora") == 0) {
			a->use_dora_loc = dtl_schema_loc(s, v);
			r = dtl_schema_tristate(s, v, "adapter.use_dora", &a->use_dora);
		} else if (strcmp(k, "lora_dropout") == 0) {
			a->lora_dropout_loc = dtl_schema_loc(s, v);
			r = dtl_schema_float(s, v, "adapter.lora_dropout", 0, 1, &a->lora_dropout);
		} else if (strcmp(k, "target_parameters") == 0) {
			r = dtl_schema_patterns(s, v, "adapter.target_parameters",
			                        DTL_PATTERN_PLAIN, &a->target_parameters);
		} else if (strcmp(k, "task_type") == 0) {
			r = dtl_adapter_task_type(s, v, "adapter.task_type", a);
		} else if (strcmp(k, "added_with") == 0) {
			r = dtl_adapter_added_with(s, v, a);
		}
	}
	return r;
}

static int parse_suppress(const struct dtl_schema *s, const struct dtl_node *seq,
                          struct dtl_manifest *m)
{
	static const char *const keys[] = {"rule", "tensors", "reason", NULL};

	if (seq->type != DTL_NODE_SEQ)
		return dtl_schema_type_error(s, seq, "suppress", "a list of suppressions");
	m->suppress =
	    dtl_arena_calloc(s->arena, seq->seq.count ? seq->seq.count : 1, sizeof(*m->suppress));
	if (!m->suppress)
		return -ENOMEM;
	for (size_t i = 0; i < seq->seq.count; i++) {
		const struct dtl_node *map = &seq->seq.items[i];
		struct dtl_suppression *sup = &m->suppress[i];
		const struct dtl_node *rule, *tensors, *reason;
		int r = dtl_schema_map(s, map, "suppress[]");
		if (r < 0 || (r = dtl_schema_check_keys(s, map, "suppress[]", keys)) < 0)
			return r;
		sup->loc = dtl_schema_loc(s, map);
		rule = dtl_node_get(map, "rule");
		reason = dtl_node_get(map, "reason");
		tensors = dtl_node_get(map, "tensors");
		if (!rule)
			return dtl_schema_fail(s, map, "a suppression needs a 'rule'");
		if (!reason)
			return dtl_schema_fail(
			    s, map, "a suppression needs a 'reason' (say why it is safe)");
		if ((r = dtl_schema_string(s, rule, "suppress.rule", &sup->rule)) < 0 ||
		    (r = dtl_schema_string(s, reason, "suppress.reason", &sup->reason)) < 0)
			return r;
		if (!sup->reason[0])
			return dtl_schema_fail(s, reason, "'suppress.reason' must not be empty");
		if (tensors && (r = dtl_schema_pattern(s, tensors, "suppress.tensors",
		                                       DTL_PATTERN_GLOB, &sup->tensors)) < 0)
			return r;
	}
	m->suppress_count = seq->seq.count;
	return 0;
}

/* A file of the set-up given where the manifest goes: say what it is and which option takes
 * it, rather than "unknown key". The keys are each kind's own (a DeepSpeed JSON's
 * zero_optimization, an accelerate YAML's distributed_type, ...). */
#define AND_MODEL ", and the model (a manifest or an HF folder) as INPUT"
static int other_kind_of_file(const struct dtl_schema *s, const struct dtl_node *root)
{
	static const struct {
		const char *key, *what, *how;
	} kinds[] = {
	    {"zero_optimization", "a DeepSpeed config", "pass it with --deepspeed FILE" AND_MODEL},
	    {"train_micro_batch_size_per_gpu", "a DeepSpeed config",
	     "pass it with --deepspeed FILE" AND_MODEL},
	    {"distributed_type", "an accelerate config",
	     "pass it with --accelerate FILE" AND_MODEL},
	    {"compute_environment", "an accelerate config",
	     "pass it with --accelerate FILE" AND_MODEL},
	    {"peft_type", "a PEFT adapter_config.json", "pass it with --peft FILE" AND_MODEL},
	    {"weight_map", "a safetensors index", "pass the model folder that holds it as INPUT"},
	    {"architectures", "an HF model config.json",
	     "pass the model folder that holds it as INPUT"},
	    {"model_type", "an HF model config.json",
	     "pass the model folder that holds it as INPUT"},
	    {"model_name_or_path", "a training recipe",
	     "pass it with --trainer-args FILE" AND_MODEL},
	    {"base_model", "a training recipe", "pass it with --trainer-args FILE" AND_MODEL},
	    {"output_dir", "a training recipe", "pass it with --trainer-args FILE" AND_MODEL},
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		for (size_t k = 0; k < root->map.count; k++) {
			const struct dtl_node *key = &root->map.pairs[k].key;
			if (key->type == DTL_NODE_STRING &&
			    strcmp(key->string.text, kinds[i].key) == 0)
				return dtl_schema_fail(s, key,
				                       "this is %s (it has '%s'), not a dtypelint "
				                       "manifest: %s",
				                       kinds[i].what, kinds[i].key, kinds[i].how);
		}
	return 0;
}
#undef AND_MODEL

int dtl_manifest_parse(const struct dtl_node *root, const char *file, struct dtl_arena *arena,
                       const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                       struct dtl_error *error)
{
	return dtl_manifest_parse_streamed(root, file, arena, limits, NULL, ret_manifest, error);
}

int dtl_manifest_parse_streamed(const struct dtl_node *root, const char *file,
                                struct dtl_arena *arena, const struct dtl_limits *limits,
                                const struct dtl_tensor_stream *ts,
                                struct dtl_manifest *ret_manifest, struct dtl_error *error)
{
	bool streamed = false;
	static const char *const keys[] = {"dtypelint", "model",        "tensors",
	                                   "frozen",    "quantization", "adapter",
	                                   "training",  "suppress",     NULL};
	struct dtl_schema s = {.file = file, .arena = arena, .limits = limits, .error = error};
	struct dtl_manifest m;
	const struct dtl_node *version, *tensors;
	int r;

	memset(&m, 0, sizeof(m));
	dtl_plan_init(&m.plan);
	m.file = file;
	if (root->type != DTL_NODE_MAP)
		return dtl_schema_root_map(&s, root, "a manifest");
	if (!dtl_node_get(root, "dtypelint") && (r = other_kind_of_file(&s, root)) < 0)
		return r;
	r = dtl_schema_check_keys(&s, root, "manifest", keys);
	if (r < 0)
		return r;
	version = dtl_node_get(root, "dtypelint");
	if (!version)
		return dtl_schema_fail(&s, root,
		                       "not a dtypelint manifest: the key 'dtypelint: 1' (schema "
		                       "version) is missing");
	if (version->type != DTL_NODE_INT || version->integer != 1)
		return dtl_schema_fail(
		    &s, version,
		    "unsupported manifest schema version %s (this dtypelint reads "
		    "version 1)",
		    dtl_schema_describe(&s, version));
	tensors = dtl_node_get(root, "tensors");
	if (!tensors)
		return dtl_schema_fail(&s, root, "a manifest needs 'tensors'");
	for (size_t i = 0; i < root->map.count && r >= 0; i++) {
		const char *k = root->map.pairs[i].key.string.text;
		const struct dtl_node *v = &root->map.pairs[i].value;
		if (strcmp(k, "model") == 0)
			r = parse_model(&s, v, &m.model);
		else if (strcmp(k, "tensors") == 0 && ts && !streamed) {
			/* the reader streamed the first "tensors" (a second is a duplicate key,
			 * which the reader refused) */
			streamed = true;
			r = streamed_tensors(&s, v, ts, &m);
		} else if (strcmp(k, "tensors") == 0)
			r = parse_tensors(&s, v, &m);
		else if (strcmp(k, "frozen") == 0)
			r = dtl_schema_patterns(&s, v, "frozen", DTL_PATTERN_GLOB, &m.frozen);
		else if (strcmp(k, "quantization") == 0)
			r = parse_quantization(&s, v, &m.quantization);
		else if (strcmp(k, "adapter") == 0)
			r = parse_adapter(&s, v, &m.adapter);
		else if (strcmp(k, "training") == 0) {
			m.has_training = true;
			r = dtl_plan_parse(v, file, arena, &m.plan, error);
		} else if (strcmp(k, "suppress") == 0)
			r = parse_suppress(&s, v, &m);
	}
	if (r < 0)
		return r;
	*ret_manifest = m;
	return 0;
}
