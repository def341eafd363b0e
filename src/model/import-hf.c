/* SPDX-License-Identifier: MIT */
/*
 * A Hugging Face model folder: config.json (architecture, dtype, quantization_config,
 * tie_word_embeddings, hidden_size, sub-configs) and either the safetensors shards (only their
 * headers are read) or model.safetensors.index.json alone, whose names get dtypes from the
 * config and shapes from the architecture profile's expressions over config.json keys.
 *
 * Names: the safetensors keys, the checkpoint's. transformers renames and merges some at load
 * (rules/conversions.yaml): the manifest carries that conversion, which the lint applies at
 * the plan's transformers version (hf-conversion.c).
 *
 * Order: a folder does not record registration order; tensors are taken in the natural order
 * of their names (layers.2 before layers.10), which matches named_parameters() for modules and
 * layers but not always within a layer. A manifest exported from a live model has the real order.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dtypelint/core/glob.h"
#include "dtypelint/model/hf-conversion.h"
#include "dtypelint/model/import.h"
#include "dtypelint/model/profile.h"
#include "dtypelint/input/safetensors.h"
#include "import-util.h"

struct entry {
	const char *name;
	uint32_t len;
	enum dtl_dtype dtype;
	int64_t *shape;
	uint32_t rank;
	int64_t numel;
	struct dtl_loc loc;
	const char *dtype_reason; /* NULL: the header's, or the config's dtype */
	struct dtl_loc dtype_loc;
	bool created;    /* a non-persistent buffer the model code creates (profile) */
	uint16_t gate;   /* the profile's created buffer exists in some versions only */
	bool load_dtype; /* ... created in the default dtype, the load dtype */
};

struct folder {
	const char *dir;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_error *error;
	const struct dtl_node *config;
	const struct dtl_node *text_config;
	struct dtl_vec entries; /* struct entry */
	struct dtl_strmap names;
	bool double_quant; /* bnb_4bit_use_double_quant: absmax is itself quantized (uint8) */
};

/* A config key: top level, else text_config; "SECTION.key" (one dot) reads a nested section,
 * for shapes of a tower other than the text model (vision_config.hidden_size). */
static const struct dtl_node *config_value(const struct folder *f, const char *key)
{
	const char *dot = strchr(key, '.');
	if (dot) {
		char section[128];
		size_t n = (size_t)(dot - key);
		if (n >= sizeof(section) || strchr(dot + 1, '.'))
			return NULL;
		memcpy(section, key, n);
		section[n] = '\0';
		const struct dtl_node *sub = dtl_node_get(f->config, section);
		return sub && sub->type == DTL_NODE_MAP ? dtl_node_get(sub, dot + 1) : NULL;
	}
	const struct dtl_node *v = dtl_node_get(f->config, key);
	if (!v && f->text_config)
		v = dtl_node_get(f->text_config, key);
	return v;
}

/* A config key's integer value for a shape expression. head_dim that the config leaves out (or
 * null) is what the modelling code uses then: hidden_size / num_attention_heads
 * (getattr(config, "head_dim", None) or hidden_size // num_attention_heads). */
static bool config_int(const struct folder *f, const char *key, int64_t *ret)
{
	const struct dtl_node *v = config_value(f, key);
	if (v && v->type == DTL_NODE_INT && v->integer >= 0) {
		*ret = v->integer;
		return true;
	}
	if (strcmp(key, "head_dim") != 0)
		return false;
	int64_t hidden, heads;
	if (!config_int(f, "hidden_size", &hidden) ||
	    !config_int(f, "num_attention_heads", &heads) || heads <= 0)
		return false;
	*ret = hidden / heads;
	return true;
}

/* ---- shape expressions: identifiers (config keys), integers, + - * / ( ) ---- */
struct expr {
	const char *p;
	const struct folder *f;
	bool ok;
	bool overflow; /* a value beyond int64: an input error, never a wrapped number */
};

/* checked arithmetic for shape expressions (issue 35: config values are hostile) */
static void checked(struct expr *e, bool wrapped)
{
	if (wrapped) {
		e->ok = false;
		e->overflow = true;
	}
}

static int64_t expr_sum(struct expr *e);

static void skip_space(struct expr *e)
{
	while (*e->p == ' ')
		e->p++;
}

static int64_t expr_atom(struct expr *e)
{
	skip_space(e);
	if (*e->p == '(') {
		e->p++;
		int64_t v = expr_sum(e);
		skip_space(e);
		if (*e->p != ')')
			e->ok = false;
		else
			e->p++;
		return v;
	}
	if (*e->p >= '0' && *e->p <= '9') {
		int64_t v = 0;
		while (*e->p >= '0' && *e->p <= '9') {
			bool wrapped = __builtin_mul_overflow(v, 10, &v);
			wrapped |= __builtin_add_overflow(v, *e->p++ - '0', &v);
			checked(e, wrapped);
		}
		return v;
	}
	const char *start = e->p;
	while ((*e->p >= 'a' && *e->p <= 'z') || (*e->p >= 'A' && *e->p <= 'Z') || *e->p == '_' ||
	       (e->p > start && ((*e->p >= '0' && *e->p <= '9') || *e->p == '.')))
		e->p++;
	if (e->p == start) {
		e->ok = false;
		return 0;
	}
	char key[128];
	size_t n = (size_t)(e->p - start);
	if (n >= sizeof(key)) {
		e->ok = false;
		return 0;
	}
	memcpy(key, start, n);
	key[n] = '\0';
	int64_t value;
	if (!config_int(e->f, key, &value)) {
		e->ok = false;
		return 0;
	}
	return value;
}

static int64_t expr_product(struct expr *e)
{
	int64_t v = expr_atom(e);
	for (;;) {
		skip_space(e);
		char op = *e->p;
		if (op != '*' && op != '/')
			return v;
		e->p++;
		int64_t rhs = expr_atom(e);
		if (op == '*') {
			checked(e, __builtin_mul_overflow(v, rhs, &v));
		} else if (rhs == 0 || (v == INT64_MIN && rhs == -1)) {
			e->ok = false;
		} else {
			v /= rhs;
		}
	}
}

static int64_t expr_sum(struct expr *e)
{
	int64_t v = expr_product(e);
	for (;;) {
		skip_space(e);
		char op = *e->p;
		if (op != '+' && op != '-')
			return v;
		e->p++;
		int64_t rhs = expr_product(e);
		bool wrapped = op == '+' ? __builtin_add_overflow(v, rhs, &v)
		                         : __builtin_sub_overflow(v, rhs, &v);
		checked(e, wrapped);
	}
}

/* Evaluates a shape's expressions into out: 1, 0 when a key is missing, -ERANGE when a
 * dimension or the element count is beyond int64 (config values are hostile: a wrapped count
 * would make a 2^73-byte embedding "fit"). */
static int eval_shape(const struct folder *f, const char *const *dims, size_t rank,
                      struct entry *out)
{
	int64_t *shape = dtl_arena_calloc(f->arena, rank + 1, sizeof(int64_t));
	int64_t numel = 1;
	if (!shape)
		return -ENOMEM;
	for (size_t d = 0; d < rank; d++) {
		struct expr e = {.p = dims[d], .f = f, .ok = true};
		shape[d] = expr_sum(&e);
		skip_space(&e);
		if (e.overflow)
			return -ERANGE;
		if (!e.ok || *e.p || shape[d] < 0)
			return 0;
		if (__builtin_mul_overflow(numel, shape[d], &numel) || numel > DTL_NUMEL_MAX)
			return -ERANGE;
	}
	out->shape = shape;
	out->rank = (uint32_t)rank;
	out->numel = numel;
	return 1;
}

static int shape_from_profile(const struct folder *f, const struct dtl_profile *p, const char *name,
                              uint32_t len, struct entry *out)
{
	if (!p)
		return 0;
	for (size_t i = 0; i < p->shape_count; i++) {
		const struct dtl_shape_rule *rule = &p->shapes[i];
		if (dtl_glob_match(rule->glob.text, rule->glob.len, name, len))
			return eval_shape(f, rule->dims, rule->rank, out);
	}
	return 0;
}

/* natural order of the entries' names (dtl_natural_cmp) */
static int natural_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	return dtl_natural_cmp(a->name, b->name);
}

static int add_entry(struct folder *f, const char *name, size_t len, struct entry **ret)
{
	if (dtl_strmap_get(&f->names, name, len) >= 0)
		return -EEXIST;
	struct entry *e = dtl_vec_push(&f->entries, f->arena, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->name = name;
	e->len = (uint32_t)len;
	e->numel = -1;
	if (dtl_strmap_put(&f->names, name, len, (int64_t)f->entries.count) < 0)
		return -ENOMEM;
	*ret = e;
	return 0;
}

static struct entry *entry_named(struct folder *f, const char *name, size_t len)
{
	int64_t i = dtl_strmap_get(&f->names, name, len);
	return i > 0 ? &((struct entry *)f->entries.items)[i - 1] : NULL;
}

/* A second created buffer of an existing name, in other versions (Llama's causal_mask: int64
 * in 4.38.0 and 4.38.1, bool in 4.38.2): both gated, the lint keeps the one of the plan's
 * versions (the profile's behaviours do not overlap). -EEXIST: a checkpoint entry, or an
 * ungated one, which stays the only one. */
static int gated_variant(struct folder *f, const struct dtl_created_buffer *cb, const char *name,
                         size_t len, struct entry **ret)
{
	const struct entry *first = entry_named(f, name, len);
	if (!cb->gate || !first || !first->created || !first->gate || first->gate == cb->gate)
		return -EEXIST;
	struct entry *e = dtl_vec_push(&f->entries, f->arena, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*e = (struct entry){.name = name, .len = (uint32_t)len, .numel = -1};
	*ret = e;
	return 0;
}

/* The created buffer's dtype and gate on a checkpoint entry (stored_buffer), which keeps
 * its shape and place */
static int take_over(struct entry *e, const struct dtl_created_buffer *cb,
                     enum dtl_dtype checkpoint)
{
	e->created = true;
	e->gate = cb->gate;
	e->load_dtype = cb->load_dtype;
	e->dtype = cb->load_dtype && checkpoint != DTL_DTYPE_NONE ? checkpoint : cb->dtype;
	e->dtype_reason =
	    cb->load_dtype ? "the checkpoint's dtype: created by the model code under "
	                     "the default dtype, the checkpoint's values copied in"
	                   : "created by the model code in its own dtype; the checkpoint's values "
	                     "are copied in (load_state_dict keeps the buffer's dtype)";
	e->dtype_loc = e->loc;
	return 0;
}

/* A checkpoint entry of a created buffer's name (Llama's per-attention inv_freq, persistent
 * to transformers 4.31.0, so checkpoints of that time store it): the module creates the
 * buffer all the same, and load_state_dict copies the stored values into it (copy_ keeps the
 * buffer's dtype), or a later release ignores the unexpected key. The buffer replaces the
 * entry, in the checkpoint's shape and place; an entry already taken over stays. */
static int stored_buffer(struct folder *f, const char *name, size_t len, struct entry **ret)
{
	struct entry *e = entry_named(f, name, len);
	if (!e || e->created)
		return -EEXIST;
	*ret = e;
	return 1;
}

/* One created buffer named name: non-persistent (one the checkpoint stores too is taken
 * over: stored_buffer); float32, int64 (position ids) or bool (a causal mask), or for one
 * created under the default dtype the checkpoint's (the load stage gives it the load dtype). */
static int created_buffer(struct folder *f, const struct dtl_created_buffer *cb, const char *name,
                          size_t len, enum dtl_dtype checkpoint, struct dtl_loc loc)
{
	struct entry *e;
	int r = add_entry(f, name, len, &e);
	if (r == -EEXIST && (r = gated_variant(f, cb, name, len, &e)) == -EEXIST &&
	    (r = stored_buffer(f, name, len, &e)) == -EEXIST)
		return 0;
	if (r < 0)
		return r;
	if (r == 1)
		return take_over(e, cb, checkpoint);
	e->created = true;
	e->gate = cb->gate;
	e->load_dtype = cb->load_dtype;
	e->loc = e->dtype_loc = loc;
	e->dtype = cb->dtype;
	e->dtype_reason = cb->dtype == DTL_DTYPE_I64
	                      ? "int64, created by the model code, not in the checkpoint "
	                        "(a non-persistent buffer)"
	                  : cb->dtype == DTL_DTYPE_BOOL
	                      ? "bool, created by the model code, not in the checkpoint "
	                        "(a non-persistent buffer)"
	                      : "float32, created by the model code, not in the checkpoint "
	                        "(a non-persistent buffer)";
	if (cb->load_dtype && checkpoint != DTL_DTYPE_NONE) {
		e->dtype = checkpoint;
		e->dtype_reason = "the checkpoint's dtype: created by the model code under "
		                  "the default dtype, not in the checkpoint (a "
		                  "non-persistent buffer)";
	}
	if ((r = eval_shape(f, cb->dims, cb->rank, e)) == -ERANGE)
		return dtl_error_set(f->error, loc, -ERANGE,
		                     "buffer '%.*s': the shape config.json gives it has 2^60 "
		                     "elements or more",
		                     (int)e->len, e->name);
	if (r <= 0) {
		e->shape = NULL;
		e->rank = 0;
		e->numel = -1;
	}
	return 0;
}

/* A per-layer created buffer (its name holds "{layer}", one rotary module per
 * attention in transformers 4.x): one name per layer of config.json's num_hidden_layers (in
 * text_config for a composite model). No count, no buffers, as a shape with a missing key; a
 * count that takes the folder past the tensor limit is an input error, not 2^63 names. */
static int per_layer_buffers(struct folder *f, const struct dtl_created_buffer *cb,
                             enum dtl_dtype checkpoint, struct dtl_loc loc)
{
	const size_t hole = sizeof(DTL_LAYER_PLACEHOLDER) - 1, head = cb->layer_at;
	const size_t tail = cb->name.len - head - hole;
	const char *after = cb->name.text + head + hole;
	int64_t layers;

	if (!config_int(f, "num_hidden_layers", &layers))
		return 0;
	if (f->entries.count > f->limits->max_tensors ||
	    (uint64_t)layers > f->limits->max_tensors - f->entries.count)
		return dtl_error_set(f->error, loc, -ERANGE,
		                     "config.json num_hidden_layers is %lld, over the limit of %zu "
		                     "tensors",
		                     (long long)layers, f->limits->max_tensors);
	for (int64_t l = 0; l < layers; l++) {
		const char *name = dtl_arena_sprintf(f->arena, "%.*s%lld%.*s", (int)head,
		                                     cb->name.text, (long long)l, (int)tail, after);
		int r = name ? created_buffer(f, cb, name, strlen(name), checkpoint, loc) : -ENOMEM;
		if (r < 0)
			return r;
	}
	return 0;
}

/* The buffers the model code creates and no checkpoint stores (rotary inv_freq), from the
 * profile: one each, or one per layer for a name with the layer placeholder. */
static int created_buffers(struct folder *f, const struct dtl_profile *p, enum dtl_dtype checkpoint,
                           struct dtl_loc loc)
{
	for (size_t i = 0; p && i < p->created_buffer_count; i++) {
		const struct dtl_created_buffer *cb = &p->created_buffers[i];
		int r = cb->per_layer
		            ? per_layer_buffers(f, cb, checkpoint, loc)
		            : created_buffer(f, cb, cb->name.text, cb->name.len, checkpoint, loc);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_shard(struct folder *f, const char *path)
{
	struct dtl_safetensors_header h;
	struct dtl_loc at = {.file = path};
	int r = dtl_confine_check(path, f->dir, at, f->error);
	if (r < 0)
		return r;
	r = dtl_safetensors_read_header(path, f->limits, f->arena, &h, f->error);
	const char *file = dtl_arena_strndup(f->arena, path, strlen(path));

	if (r < 0)
		return r;
	if (!file)
		return -ENOMEM;
	for (size_t i = 0; i < h.tensor_count; i++) {
		const struct dtl_safetensors_tensor *t = &h.tensors[i];
		struct entry *e;
		r = add_entry(f, t->name, t->name_len, &e);
		if (r == -EEXIST) {
			struct dtl_loc loc = {.file = file, .line = 1, .column = t->name_column};
			return dtl_error_set(f->error, loc, -EINVAL,
			                     "tensor '%s' is stored in more than one shard",
			                     t->name);
		}
		if (r < 0)
			return r;
		e->dtype = t->dtype;
		e->shape = t->shape;
		e->rank = t->rank;
		e->numel = t->numel;
		e->loc = (struct dtl_loc){.file = file, .line = 1, .column = t->name_column};
	}
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static enum dtl_dtype config_dtype(const struct folder *f)
{
	const struct dtl_node *v = config_value(f, "dtype");
	if (!v || v->type != DTL_NODE_STRING)
		v = config_value(f, "torch_dtype");
	if (!v || v->type != DTL_NODE_STRING)
		return DTL_DTYPE_NONE;
	return dtl_dtype_parse(v->string.text, v->string.len);
}

/*
 * A quantization_config dtypelint does not simulate. The tensors it touches are named by the
 * checkpoint's own layout: MXFP4 stores each quantized weight as <name>_blocks (packed FP4)
 * and <name>_scales (UE8 exponents), as gpt-oss's weight_map and original/dtypes.json show
 * (fixtures/corpus/SOURCES.md); the FP8 formats store weight_scale / weight_scale_inv beside
 * each fp8 weight.
 */
static int unmodelled_quantization(const struct dtl_schema *s, struct dtl_manifest *m,
                                   const struct dtl_node *method)
{
	const char *name = method->string.text;
	struct dtl_unmodelled u = {
	    .loc = dtl_schema_loc(s, method),
	    .what = dtl_arena_sprintf(s->arena,
	                              "%s quantization (quantization_config.quant_method "
	                              "%s)",
	                              strcmp(name, "mxfp4") == 0 ? "MXFP4" : name, name),
	    .touches = "the quantized weights and their scales, traced as the config's dtype "
	               "declares them, not as the quantizer stores and computes them"};

	if (!u.what)
		return -ENOMEM;
	if (strcmp(name, "mxfp4") == 0) {
		u.touches = "the quantized experts' weights, stored as *_blocks (packed FP4) and "
		            "*_scales (UE8) and traced here as the config's dtype";
		u.suffixes[0] = "_blocks";
		u.suffixes[1] = "_scales";
	} else if (strstr(name, "fp8") || strcmp(name, "compressed-tensors") == 0) {
		u.suffixes[0] = ".weight_scale_inv";
		u.suffixes[1] = ".weight_scale";
	}
	return dtl_plan_unmodelled(&m->plan, s->arena, &u);
}

static int read_quantization(struct folder *f, const struct dtl_schema *s, struct dtl_manifest *m)
{
	const struct dtl_node *q = dtl_node_get(f->config, "quantization_config"), *v;
	if (!q || q->type != DTL_NODE_MAP)
		return 0;
	v = dtl_node_get(q, "quant_method");
	if (v && v->type == DTL_NODE_STRING) {
		m->quantization.checkpoint_method = v->string.text;
		m->quantization.checkpoint_method_loc = dtl_schema_loc(s, v);
	}
	/* only bitsandbytes is simulated; other methods (fp8, mxfp4, gptq, ...) leave the
	 * checkpoint's dtypes as they are, and are reported as not modelled (DT604) */
	if (v && v->type == DTL_NODE_STRING && strcmp(v->string.text, "bitsandbytes") != 0)
		return unmodelled_quantization(s, m, v);
	if (!v || v->type != DTL_NODE_STRING)
		return 0;
	struct dtl_quantization *out = &m->quantization;
	const struct dtl_node *b4 = dtl_node_get(q, "load_in_4bit"),
	                      *b8 = dtl_node_get(q, "load_in_8bit");
	if (!b4)
		b4 = dtl_node_get(q, "_load_in_4bit");
	if (!b8)
		b8 = dtl_node_get(q, "_load_in_8bit");
	if (b4 && b4->type == DTL_NODE_BOOL && b4->boolean)
		out->method = DTL_QUANT_BNB_4BIT;
	else if (b8 && b8->type == DTL_NODE_BOOL && b8->boolean)
		out->method = DTL_QUANT_BNB_8BIT;
	else
		return 0;
	out->loc = out->method_loc = dtl_schema_loc(s, q);
	int r;
	if ((v = dtl_node_get(q, "bnb_4bit_compute_dtype")) && v->type != DTL_NODE_NULL) {
		if ((r = dtl_schema_dtype(s, v, "bnb_4bit_compute_dtype", true,
		                          &out->compute_dtype)) < 0)
			return r;
		out->compute_dtype_loc = dtl_schema_loc(s, v);
	}
	if ((v = dtl_node_get(q, "bnb_4bit_quant_storage")) && v->type != DTL_NODE_NULL) {
		if ((r = dtl_schema_dtype(s, v, "bnb_4bit_quant_storage", true,
		                          &out->quant_storage)) < 0)
			return r;
		out->quant_storage_loc = dtl_schema_loc(s, v);
	}
	if ((v = dtl_node_get(q, "bnb_4bit_use_double_quant")) && v->type == DTL_NODE_BOOL)
		f->double_quant = v->boolean;
	/* transformers writes quantization_config into config.json only when it saves a
	 * quantized model: the weights are stored quantized */
	out->prequantized = true;
	if ((v = dtl_node_get(q, "llm_int8_skip_modules")) && v->type == DTL_NODE_SEQ &&
	    (r = dtl_schema_patterns(s, v, "llm_int8_skip_modules", DTL_PATTERN_PLAIN,
	                             &out->skip_modules)) < 0)
		return r;
	return 0;
}

/*
 * A pre-quantized bitsandbytes checkpoint read from its index alone (no shard headers): the
 * dtypes its entries are stored in, which the config's dtype does not give.
 * bitsandbytes QuantState.as_dict(packed=True) stores absmax (uint8 with double quant, else
 * float32), quant_map, nested_absmax and nested_quant_map (float32) and
 * quant_state.bitsandbytes__<type> (packed uint8); LLM.int8 stores SCB (float32 row scales)
 * and weight_format (one uint8). The weight beside them is stored in bnb_4bit_quant_storage
 * (uint8 by default), packed two 4-bit codes a byte; an LLM.int8 weight is int8.
 */
static const struct {
	const char *suffix;
	bool eight_bit;
	enum dtl_dtype dtype;
	const char *reason;
} quant_state_entries[] = {
    {".absmax", false, DTL_DTYPE_F32, "bitsandbytes 4-bit quantization state: absmax, float32"},
    {".quant_map", false, DTL_DTYPE_F32,
     "bitsandbytes 4-bit quantization state: quant_map, float32"},
    {".nested_absmax", false, DTL_DTYPE_F32,
     "bitsandbytes 4-bit quantization state: nested_absmax, float32"},
    {".nested_quant_map", false, DTL_DTYPE_F32,
     "bitsandbytes 4-bit quantization state: nested_quant_map, float32"},
    {".SCB", true, DTL_DTYPE_F32, "LLM.int8 quantization state: SCB row scales, float32"},
    {".weight_format", true, DTL_DTYPE_U8, "LLM.int8 quantization state: weight_format, one uint8"},
};

/* The length of the weight name a quant-state entry belongs to, or 0 when it is none. */
static size_t quant_state_weight(const char *name, size_t len, size_t *ret_kind)
{
	static const char packed[] = ".weight.quant_state.";
	for (size_t k = 0; k < sizeof(quant_state_entries) / sizeof(quant_state_entries[0]); k++) {
		size_t n = strlen(quant_state_entries[k].suffix);
		if (len <= n || memcmp(name + len - n, quant_state_entries[k].suffix, n) != 0)
			continue;
		*ret_kind = k;
		if (quant_state_entries[k].eight_bit)
			return len - n; /* "<m>.SCB": the weight is "<m>.weight" (caller adds it) */
		return len - n >= 7 && memcmp(name + len - n - 7, ".weight", 7) == 0 ? len - n : 0;
	}
	const char *hit = NULL;
	for (size_t i = 0; i + sizeof(packed) - 1 <= len; i++)
		if (memcmp(name + i, packed, sizeof(packed) - 1) == 0)
			hit = name + i;
	*ret_kind = SIZE_MAX;
	return hit ? (size_t)(hit - name) + 7 : 0;
}

static int prequantized_dtypes(struct folder *f, const struct dtl_quantization *q)
{
	bool eight_bit = q->method == DTL_QUANT_BNB_8BIT;
	enum dtl_dtype storage = eight_bit                            ? DTL_DTYPE_I8
	                         : q->quant_storage != DTL_DTYPE_NONE ? q->quant_storage
	                                                              : DTL_DTYPE_U8;
	struct dtl_loc storage_loc =
	    q->quant_storage_loc.line ? q->quant_storage_loc : q->method_loc;
	const char *weight_reason = dtl_arena_sprintf(
	    f->arena, "pre-quantized checkpoint: bitsandbytes %s, %s storage%s",
	    eight_bit ? "8-bit (LLM.int8)" : "4-bit", dtl_dtype_name(storage),
	    eight_bit || q->quant_storage_loc.line ? "" : " (bitsandbytes' default)");
	if (!weight_reason)
		return -ENOMEM;
	size_t count = f->entries.count;
	for (size_t i = 0; i < count; i++) {
		struct entry *e = &((struct entry *)f->entries.items)[i];
		size_t kind, wlen = quant_state_weight(e->name, e->len, &kind);
		if (!wlen)
			continue;
		e->dtype = DTL_DTYPE_U8; /* quant_state.bitsandbytes__<type>: packed bytes */
		e->dtype_reason =
		    "bitsandbytes 4-bit quantization state: packed quant_state, uint8";
		if (kind != SIZE_MAX) {
			e->dtype = quant_state_entries[kind].dtype;
			e->dtype_reason = quant_state_entries[kind].reason;
			if (kind == 0 && f->double_quant) {
				e->dtype = DTL_DTYPE_U8;
				e->dtype_reason = "bitsandbytes 4-bit quantization state: absmax "
				                  "quantized again (double quant), uint8";
			}
		}
		e->dtype_loc = q->method_loc;
		struct entry *w;
		if (kind != SIZE_MAX && quant_state_entries[kind].eight_bit) {
			char *name = dtl_arena_sprintf(f->arena, "%.*s.weight", (int)wlen, e->name);
			if (!name)
				return -ENOMEM;
			w = entry_named(f, name, wlen + 7);
		} else {
			w = entry_named(f, e->name, wlen);
		}
		if (!w || w->dtype_reason)
			continue;
		w->dtype = storage;
		w->dtype_reason = weight_reason;
		w->dtype_loc = storage_loc;
		if (!eight_bit && w->numel >= 0) {
			/* Params4bit: n codes packed into (n + 1) / (2 * itemsize) elements, [..,
			 * 1] */
			int64_t *shape = dtl_arena_calloc(f->arena, 3, sizeof(int64_t));
			if (!shape)
				return -ENOMEM;
			shape[0] = (w->numel + 1) / (int64_t)(2 * dtl_dtype_itemsize(storage));
			shape[1] = 1;
			w->shape = shape;
			w->rank = 2;
			w->numel = shape[0];
		}
	}
	return 0;
}

static int read_index(struct folder *f, const char *index_path, bool *ret_shards_present,
                      struct dtl_loaded *idx)
{
	struct dtl_loc at = {.file = index_path};
	int r = dtl_confine_check(index_path, f->dir, at, f->error);
	if (r < 0)
		return r;
	r = dtl_loaded_open(idx, index_path, f->arena, f->limits, f->error);
	if (r < 0)
		return r;
	const struct dtl_node *map = dtl_node_get(idx->root, "weight_map");
	if (!map || map->type != DTL_NODE_MAP)
		return dtl_schema_fail(&idx->s, idx->root, "an index needs a 'weight_map' mapping");
	bool all = true;
	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *shard = &map->map.pairs[i].value;
		if (shard->type != DTL_NODE_STRING || strchr(shard->string.text, '/'))
			return dtl_schema_fail(&idx->s, shard,
			                       "'weight_map' values must be shard file names");
		const char *path = dtl_arena_sprintf(f->arena, "%s/%s", f->dir, shard->string.text);
		if (!path)
			return -ENOMEM;
		all = all && exists(path);
	}
	*ret_shards_present = all && map->map.count > 0;
	return 0;
}

/* The dtype each sub-config names itself, "dtype" before "torch_dtype" (the order
 * config_dtype reads the top level in); a sub-config without one inherits nothing from the top
 * level in transformers (PreTrainedConfig.from_pretrained leaves its dtype None). */
static void subconfig_dtypes(const struct folder *f, struct dtl_manifest *m)
{
	static const char *const keys[][2] = {
	    [DTL_SUBCONFIG_TEXT] = {"text_config.dtype", "text_config.torch_dtype"},
	    [DTL_SUBCONFIG_VISION] = {"vision_config.dtype", "vision_config.torch_dtype"},
	    [DTL_SUBCONFIG_AUDIO] = {"audio_config.dtype", "audio_config.torch_dtype"},
	};

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const struct dtl_node *v = config_value(f, keys[k][0]);
		if (!v || v->type != DTL_NODE_STRING)
			v = config_value(f, keys[k][1]);
		m->model.subconfig_dtype[k] = v && v->type == DTL_NODE_STRING
		                                  ? dtl_dtype_parse(v->string.text, v->string.len)
		                                  : DTL_DTYPE_NONE;
	}
}

/* The model section from config.json: architecture, name, checkpoint dtype, hidden size. */
static void read_model(struct folder *f, const struct dtl_schema *s, struct dtl_manifest *m)
{
	m->file = s->file;
	m->model.loc = dtl_schema_loc(s, f->config);
	const struct dtl_node *arch = dtl_node_get(f->config, "architectures");
	if (arch && arch->type == DTL_NODE_SEQ && arch->seq.count &&
	    arch->seq.items[0].type == DTL_NODE_STRING) {
		m->model.architecture = arch->seq.items[0].string.text;
		m->model.architecture_loc = dtl_schema_loc(s, &arch->seq.items[0]);
	}
	const struct dtl_node *type = dtl_node_get(f->config, "model_type");
	if (type && type->type == DTL_NODE_STRING)
		m->model.model_type = type->string.text;
	const char *slash = strrchr(f->dir, '/');
	m->model.name = slash && slash[1] ? slash + 1 : f->dir;
	m->model.checkpoint_dtype = config_dtype(f);
	const struct dtl_node *dt = config_value(f, "torch_dtype");
	if (!dt)
		dt = config_value(f, "dtype");
	if (dt)
		m->model.checkpoint_dtype_loc = dtl_schema_loc(s, dt);
	const struct dtl_node *moe = config_value(f, "text_config.enable_moe_block");
	m->model.text_moe_block = moe && moe->type == DTL_NODE_BOOL && moe->boolean;
	subconfig_dtypes(f, m);
	/* the checkpoint's dtypes are loaded with from_pretrained(dtype="auto") */
	m->model.load_mode = DTL_LOAD_AUTO;
	m->model.load_dtype_loc =
	    m->model.checkpoint_dtype_loc.line ? m->model.checkpoint_dtype_loc : m->model.loc;
	const struct dtl_node *hidden = config_value(f, "hidden_size");
	if (hidden && hidden->type == DTL_NODE_INT && hidden->integer > 0) {
		m->model.hidden_size = hidden->integer;
		m->model.hidden_size_loc = dtl_schema_loc(s, hidden);
	}
	const struct dtl_node *positions = config_value(f, "max_position_embeddings");
	if (positions && positions->type == DTL_NODE_INT && positions->integer > 0)
		m->model.max_position_embeddings = positions->integer;
}

/* The headers of the shards an index names, each shard once. */
static int read_index_shards(struct folder *f, const struct dtl_node *map)
{
	struct dtl_strmap seen;
	int r = 0;

	dtl_strmap_init(&seen, f->arena);
	for (size_t i = 0; i < map->map.count && r >= 0; i++) {
		const struct dtl_node *shard = &map->map.pairs[i].value;
		int64_t prev =
		    dtl_strmap_put(&seen, shard->string.text, shard->string.len, (int64_t)i);
		if (prev < 0)
			return -ENOMEM;
		if ((size_t)prev != i)
			continue;
		const char *path = dtl_arena_sprintf(f->arena, "%s/%s", f->dir, shard->string.text);
		r = path ? read_shard(f, path) : -ENOMEM;
	}
	return r;
}

/* An index without its shards: its names, with the config's dtype and the profile's shapes. */
static int read_index_names(struct folder *f, const struct dtl_loaded *idx, enum dtl_dtype dtype,
                            const struct dtl_profile *profile)
{
	const struct dtl_node *map = dtl_node_get(idx->root, "weight_map");
	enum dtl_dtype d = dtype != DTL_DTYPE_NONE ? dtype : DTL_DTYPE_F32;

	for (size_t i = 0; i < map->map.count; i++) {
		const struct dtl_node *key = &map->map.pairs[i].key;
		struct entry *e;
		int r = add_entry(f, key->string.text, key->string.len, &e);
		if (r < 0)
			return r;
		e->dtype = d;
		e->loc = dtl_schema_loc(&idx->s, key);
		r = shape_from_profile(f, profile, e->name, e->len, e);
		if (r == -ERANGE)
			return dtl_error_set(
			    f->error, e->loc, -ERANGE,
			    "tensor '%.*s': the shape config.json gives it has 2^60 "
			    "elements or more",
			    (int)(e->len > 200 ? 200 : e->len), e->name);
		if (r < 0)
			return r;
	}
	return 0;
}

/* No index: the headers of every *.safetensors file in the folder, in name order. */
static int read_folder_shards(struct folder *f)
{
	struct dtl_loc loc = {.file = f->dir};
	struct dtl_vec files = {0};
	struct dirent *de;
	int r = 0;
	DIR *dp = opendir(f->dir);

	if (!dp)
		return dtl_error_set(f->error, loc, -errno, "cannot read the folder");
	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		if (n <= 12 || strcmp(de->d_name + n - 12, ".safetensors") != 0)
			continue;
		const char **slot = dtl_vec_push(&files, f->arena, sizeof(*slot));
		if (!slot || !(*slot = dtl_arena_sprintf(f->arena, "%s/%s", f->dir, de->d_name))) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (files.count == 0) {
		r = dtl_error_set(f->error, loc, -ENOENT,
		                  "no safetensors files and no model.safetensors.index.json");
		goto out;
	}
	qsort(files.items, files.count, sizeof(const char *), cmp_path);
	for (size_t i = 0; i < files.count && r >= 0; i++)
		r = read_shard(f, ((const char **)files.items)[i]);
out:
	closedir(dp);
	return r;
}

static int gated_last_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if ((a->gate != 0) != (b->gate != 0))
		return a->gate ? 1 : -1;
	return natural_cmp(pa, pb);
}

/* A checkpoint entry that the profile names a persistent buffer (DeepSeek-V3's
 * e_score_correction_bias): the checkpoint stores persistent buffers beside the parameters,
 * and zero.Init, FSDP and the optimizer treat them as buffers */
static bool persistent_buffer(const struct dtl_profile *p, const struct entry *e)
{
	for (size_t i = 0; p && i < p->fp32_buffer_count; i++)
		if (p->fp32_buffers[i].persistent &&
		    dtl_glob_match(p->fp32_buffers[i].name.text, p->fp32_buffers[i].name.len,
		                   e->name, e->len))
			return true;
	return false;
}

/* The manifest's tensors from the folder's entries, in natural name order, those of some
 * versions only last (the lint drops them as a tail: the others keep their indices). */
static int make_tensors(struct folder *f, const struct dtl_profile *profile, struct dtl_manifest *m)
{
	qsort(f->entries.items, f->entries.count, sizeof(struct entry), gated_last_cmp);
	m->tensor_count = f->entries.count;
	m->tensors = dtl_arena_calloc(f->arena, m->tensor_count + 1, sizeof(*m->tensors));
	if (!m->tensors)
		return -ENOMEM;
	for (size_t i = 0; i < f->entries.count; i++) {
		const struct entry *e = &((const struct entry *)f->entries.items)[i];
		struct dtl_tensor_decl *t = &m->tensors[i];
		t->name = e->name;
		t->name_len = e->len;
		t->kind =
		    e->created || persistent_buffer(profile, e) ? DTL_KIND_BUFFER : DTL_KIND_PARAM;
		t->dtype = e->dtype;
		t->rank = e->rank;
		t->shape = e->shape;
		t->numel = e->numel;
		t->trainable = DTL_UNSET;
		t->persistent = !e->created;
		t->gate = e->gate;
		t->load_dtype = e->load_dtype;
		t->loc = t->dtype_loc = e->loc;
		if (e->dtype_reason) {
			t->dtype_reason = e->dtype_reason;
			t->dtype_loc = e->dtype_loc;
		}
	}
	return 0;
}

/* Tied weights: config's tie_word_embeddings, else the profile's default; a group of the
 * profile counts when the folder holds one of its tensors. */
static int tie_weights(struct folder *f, const struct dtl_schema *s,
                       const struct dtl_profile *profile, struct dtl_manifest *m)
{
	const struct dtl_node *tie = config_value(f, "tie_word_embeddings");
	bool tied = tie && tie->type == DTL_NODE_BOOL ? tie->boolean
	            : profile                         ? profile->tie_word_embeddings_default
	                                              : false;

	if (!tied || !profile || !profile->tied_count)
		return 0;
	m->model.tied = dtl_arena_calloc(f->arena, profile->tied_count, sizeof(*m->model.tied));
	if (!m->model.tied)
		return -ENOMEM;
	for (size_t g = 0; g < profile->tied_count; g++) {
		const struct dtl_tied_group *tg = &profile->tied[g];
		bool any = false;
		for (size_t k = 0; k < tg->count && !any; k++)
			any = dtl_strmap_get(&f->names, tg->names[k].text, tg->names[k].len) >= 0;
		if (!any)
			continue;
		struct dtl_tied_group *out = &m->model.tied[m->model.tied_count++];
		*out = *tg;
		out->loc = tie ? dtl_schema_loc(s, tie) : m->model.architecture_loc;
	}
	return 0;
}

/* How transformers renames and merges this checkpoint's tensors at load (rules/conversions.yaml):
 * by the class name, else config.json's model_type; the lint applies it at the plan's version. */
static int find_conversion(const struct folder *f, struct dtl_manifest *m, struct dtl_error *error)
{
	const struct dtl_node *type = dtl_node_get(f->config, "model_type");
	const char *model_type = type && type->type == DTL_NODE_STRING ? type->string.text : NULL;
	return dtl_hf_conversion_find(m->model.architecture, model_type, f->arena, &m->conversion,
	                              error);
}

int dtl_import_hf_folder(const char *dir, struct dtl_arena *arena, const struct dtl_limits *limits,
                         struct dtl_manifest *ret_manifest, struct dtl_error *error)
{
	struct folder f = {.dir = dir, .arena = arena, .limits = limits, .error = error};
	struct dtl_loaded config, idx = {0};
	struct dtl_manifest m;
	struct dtl_profiles profiles;
	const struct dtl_profile *profile = NULL;
	bool have_index = false, shards = false;
	int r;

	memset(&m, 0, sizeof(m));
	dtl_plan_init(&m.plan);
	dtl_strmap_init(&f.names, arena);
	const char *config_path = dtl_arena_sprintf(arena, "%s/config.json", dir);
	const char *index_path = dtl_arena_sprintf(arena, "%s/model.safetensors.index.json", dir);
	if (!config_path || !index_path)
		return -ENOMEM;
	if (!exists(config_path)) {
		struct dtl_loc loc = {.file = dir};
		return dtl_error_set(error, loc, -ENOENT,
		                     "a model folder needs a config.json (and safetensors files or "
		                     "model.safetensors.index.json)");
	}
	struct dtl_loc config_at = {.file = config_path};
	if ((r = dtl_confine_check(config_path, dir, config_at, error)) < 0 ||
	    (r = dtl_loaded_open(&config, config_path, arena, limits, error)) < 0)
		return r;
	f.config = config.root;
	if ((r = dtl_schema_root_map(&config.s, config.root, "an HF config.json")) < 0)
		goto out;
	f.text_config = dtl_node_get(config.root, "text_config");
	if (f.text_config && f.text_config->type != DTL_NODE_MAP)
		f.text_config = NULL;
	read_model(&f, &config.s, &m);
	if ((r = read_quantization(&f, &config.s, &m)) < 0)
		goto out;

	/* tensors: the shards' headers, or the index's names */
	have_index = exists(index_path);
	if (have_index && (r = read_index(&f, index_path, &shards, &idx)) < 0)
		goto out;
	if (m.model.architecture) {
		if ((r = dtl_profiles_load(&profiles, m.model.architecture, arena, error)) < 0)
			goto out;
		profile = dtl_profiles_find(&profiles, m.model.architecture);
	}
	if (have_index && shards)
		r = read_index_shards(&f, dtl_node_get(idx.root, "weight_map"));
	else if (have_index)
		r = read_index_names(&f, &idx, m.model.checkpoint_dtype, profile);
	else
		r = read_folder_shards(&f);
	if (r < 0 || (r = created_buffers(&f, profile, m.model.checkpoint_dtype,
	                                  m.model.architecture_loc.line ? m.model.architecture_loc
	                                                                : m.model.loc)) < 0)
		goto out;
	if (have_index && !shards && m.quantization.prequantized &&
	    (r = prequantized_dtypes(&f, &m.quantization)) < 0)
		goto out;
	if ((r = make_tensors(&f, profile, &m)) < 0 ||
	    (r = tie_weights(&f, &config.s, profile, &m)) < 0 ||
	    (r = find_conversion(&f, &m, error)) < 0)
		goto out;
	*ret_manifest = m;
	r = 0;
out:
	if (have_index && idx.root)
		dtl_loaded_close(&idx);
	dtl_loaded_close(&config);
	return r;
}
