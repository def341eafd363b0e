/* SPDX-License-Identifier: MIT */
/*
 * The quantize stage: bitsandbytes replaces the targeted nn.Linear weights. 4-bit: Params4bit
 * packed into quant_storage (uint8 by default), numel n -> (n+1) / (2 * itemsize); 8-bit:
 * Int8Params in int8 with row scales. Replaced weights are frozen. Skipped: the skip list
 * (default: the output layer) plus the keep-in-fp32 entries. A pre-quantized checkpoint is
 * recognised from its side tensors (absmax, quant_map, quant_state.*, SCB, weight_format).
 */
#include <errno.h>
#include <string.h>

#include "sim-private.h"

static const char *fact_bnb =
    "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
    "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/modules.py#L213-L484";
static const char *fact_skip =
    "https://github.com/huggingface/transformers/blob/d91fa5a784e416ca685d5ba76d7bc490eb008b33/src/"
    "transformers/quantizers/quantizer_bnb_4bit.py";
/* AutoHfQuantizer.merge_quantization_configs: "The `quantization_config` from the model will
 * be used." */
static const char *fact_merge =
    "https://github.com/huggingface/transformers/blob/00e3e798432b8e5e7f89bbbc7fd1e8df064f7f65/src/"
    "transformers/quantizers/auto.py";
/* Params4bit.from_prequantized: self.quant_storage = data.dtype (bitsandbytes >= 0.43.2) */
static const char *fact_prequantized = "https://github.com/bitsandbytes-foundation/bitsandbytes/"
                                       "blob/0.50.1/bitsandbytes/nn/modules.py#L356-L379";

bool dtl_sim_is_quant_state_name(const char *name, uint32_t len)
{
	static const char *const parts[] = {
	    ".absmax",           ".quant_map", ".quant_state.",  ".nested_absmax",
	    ".nested_quant_map", ".SCB",       ".weight_format", NULL};
	for (const char *const *p = parts; *p; p++) {
		size_t n = strlen(*p);
		for (uint32_t i = 0; i + n <= len; i++)
			if (memcmp(name + i, *p, n) == 0 &&
			    (i + n == len || (*p)[n - 1] == '.' || name[i + n] == '.'))
				return true;
	}
	return false;
}

/*
 * The skip list: an entry names a module when it is one of the module path's dotted component
 * sequences, that is when "." entry "." occurs in "." path ".". The first entry that does wins
 * (skip_modules or lm_head, then keep_in_fp32, then keep_in_fp32_strict).
 *
 * Every entry against every module took 17 s for 20,000 keep-in-fp32 entries. Instead the
 * entries, as "." entry ".", are an Aho-Corasick automaton, and each module continues its
 * parent's run: a path is "." parent "." segment, so only the segment's bytes are fed, and
 * the lowest entry found is the parent's or one that ends in them.
 */
struct skip_node {
	uint32_t child, sibling; /* first child, next sibling (NONE) */
	uint32_t fail;
	uint32_t best; /* lowest entry ending here or at a suffix (its fail chain), or NONE */
	uint8_t byte;  /* the byte from the parent */
};

struct skip_list {
	const struct dtl_pattern **entries; /* by priority */
	struct skip_node *nodes;
	size_t node_count, node_capacity;
	uint32_t root_child[256];
	uint32_t *state;     /* per module: the node after "." path */
	uint32_t *best_path; /* per module: the lowest entry found within "." path */
};

#define NONE UINT32_MAX

static uint32_t skip_child(const struct skip_list *sl, uint32_t node, uint8_t byte)
{
	if (node == 0)
		return sl->root_child[byte];
	for (uint32_t c = sl->nodes[node].child; c != NONE; c = sl->nodes[c].sibling)
		if (sl->nodes[c].byte == byte)
			return c;
	return NONE;
}

static int skip_add_node(struct dtl_sim *sim, struct skip_list *sl, uint32_t parent, uint8_t byte,
                         uint32_t *ret)
{
	if (sl->node_count == sl->node_capacity) {
		size_t bigger = sl->node_capacity ? sl->node_capacity * 2 : 64;
		void *p =
		    dtl_arena_realloc(sim->arena, sl->nodes, sl->node_capacity * sizeof(*sl->nodes),
		                      bigger * sizeof(*sl->nodes));
		if (!p || bigger >= NONE)
			return -ENOMEM;
		sl->nodes = p;
		sl->node_capacity = bigger;
	}
	uint32_t n = (uint32_t)sl->node_count++;
	sl->nodes[n] = (struct skip_node){
	    .child = NONE, .sibling = NONE, .fail = 0, .best = NONE, .byte = byte};
	if (parent == NONE) {
		/* the root */
	} else if (parent == 0) {
		sl->root_child[byte] = n;
	} else {
		sl->nodes[n].sibling = sl->nodes[parent].child;
		sl->nodes[parent].child = n;
	}
	*ret = n;
	return 0;
}

static int skip_insert(struct dtl_sim *sim, struct skip_list *sl, const struct dtl_pattern *e,
                       uint32_t index)
{
	uint32_t node = 0;

	for (size_t i = 0; i < (size_t)e->len + 2; i++) {
		uint8_t byte = i == 0 || i == (size_t)e->len + 1 ? '.' : (uint8_t)e->text[i - 1];
		uint32_t next = skip_child(sl, node, byte);
		int r;
		if (next == NONE && (r = skip_add_node(sim, sl, node, byte, &next)) < 0)
			return r;
		node = next;
	}
	if (index < sl->nodes[node].best)
		sl->nodes[node].best = index;
	return 0;
}

/* The automaton's move on byte from node. */
static uint32_t skip_step(const struct skip_list *sl, uint32_t node, uint8_t byte)
{
	for (;;) {
		uint32_t next = skip_child(sl, node, byte);
		if (next != NONE)
			return next;
		if (node == 0)
			return 0;
		node = sl->nodes[node].fail;
	}
}

/* Failure links and each node's best, breadth first (a node's fail is shallower). */
static int skip_link(struct dtl_sim *sim, struct skip_list *sl)
{
	uint32_t *queue = dtl_arena_calloc(sim->arena, sl->node_count, sizeof(uint32_t));
	size_t head = 0, tail = 0;

	if (!queue)
		return -ENOMEM;
	for (unsigned b = 0; b < 256; b++)
		if (sl->root_child[b] != NONE)
			queue[tail++] = sl->root_child[b]; /* their fail is the root */
	while (head < tail) {
		uint32_t u = queue[head++];
		for (uint32_t v = sl->nodes[u].child; v != NONE; v = sl->nodes[v].sibling) {
			uint32_t f = skip_step(sl, sl->nodes[u].fail, sl->nodes[v].byte);
			sl->nodes[v].fail = f;
			if (sl->nodes[f].best < sl->nodes[v].best)
				sl->nodes[v].best = sl->nodes[f].best;
			queue[tail++] = v;
		}
	}
	return 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int skip_list_build(struct dtl_sim *sim, struct skip_list *sl)
{
	static const struct dtl_pattern lm_head = {.text = "lm_head", .len = 7};
	static const struct dtl_pattern score = {.text = "score", .len = 5};
	const struct dtl_quantization *q = &sim->manifest->quantization;
	const struct dtl_patterns *keep[] = {&sim->model.keep_in_fp32,
	                                     &sim->model.keep_in_fp32_strict};
	size_t count = q->skip_modules.present ? q->skip_modules.count : 1, n = 0;
	int r;

	memset(sl, 0, sizeof(*sl));
	memset(sl->root_child, 0xff, sizeof(sl->root_child));
	count += keep[0]->count + keep[1]->count;
	sl->entries = dtl_arena_calloc(sim->arena, count, sizeof(*sl->entries));
	sl->state = dtl_arena_calloc(sim->arena, sim->module_count, sizeof(uint32_t));
	sl->best_path = dtl_arena_calloc(sim->arena, sim->module_count, sizeof(uint32_t));
	if (!sl->entries || !sl->state || !sl->best_path)
		return -ENOMEM;
	if (q->skip_modules.present)
		for (size_t i = 0; i < q->skip_modules.count; i++)
			sl->entries[n++] = &q->skip_modules.items[i];
	else /* get_keys_to_not_convert: the output embedding, or the last parameter's module:
	      * score in the reward trainer's model (rules/versions.yaml trl-reward-seq-cls-head) */
		sl->entries[n++] = sim->manifest->model.seq_cls_head ? &score : &lm_head;
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < keep[l]->count; i++)
			sl->entries[n++] = &keep[l]->items[i];
	uint32_t root;
	if ((r = skip_add_node(sim, sl, NONE, 0, &root)) < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if ((r = skip_insert(sim, sl, sl->entries[i], (uint32_t)i)) < 0)
			return r;
	if ((r = skip_link(sim, sl)) < 0)
		return r;
	/* each module from its parent's run (parents come first; the root's is empty) */
	sl->best_path[0] = NONE;
	for (uint32_t mod = 1; mod < sim->module_count; mod++) {
		const struct dtl_module *md = &sim->modules[mod];
		uint32_t parent = md->parent < mod ? md->parent : 0;
		size_t from = parent ? sim->modules[parent].path_len + 1 : 0;
		uint32_t node = sl->state[parent], best = sl->best_path[parent];
		node = skip_step(sl, node, '.');
		best = min_u32(best, sl->nodes[node].best);
		for (size_t i = from; i < md->path_len; i++) {
			node = skip_step(sl, node, (uint8_t)md->path[i]);
			best = min_u32(best, sl->nodes[node].best);
		}
		sl->state[mod] = node;
		sl->best_path[mod] = best;
	}
	return 0;
}

/* The first entry naming module mod, or NULL. */
static const struct dtl_pattern *skipped(const struct skip_list *sl, uint32_t mod)
{
	uint32_t end = skip_step(sl, sl->state[mod], '.');
	uint32_t best = min_u32(sl->best_path[mod], sl->nodes[end].best);

	return best == NONE ? NULL : sl->entries[best];
}

static const char *method_name(enum dtl_quant_method m)
{
	return m == DTL_QUANT_BNB_8BIT ? "8-bit (LLM.int8)" : "4-bit";
}

static int mark_prequantized(struct dtl_sim *sim, uint32_t weight, bool eight_bit,
                             struct dtl_loc loc)
{
	const struct dtl_quantization *q = &sim->manifest->quantization;
	sim->t.flags[weight] |= DTL_TF_QUANTIZED | (eight_bit ? DTL_TF_INT8 : 0);
	sim->t.flags[weight] &= ~DTL_TF_TRAINABLE;
	const char *reason = dtl_arena_sprintf(
	    sim->arena,
	    "bitsandbytes %s loads it as stored, in %s (from_prequantized keeps the "
	    "stored dtype), frozen",
	    method_name(eight_bit ? DTL_QUANT_BNB_8BIT : DTL_QUANT_BNB_4BIT),
	    dtl_dtype_name(sim->t.dtype[weight]));
	int r = dtl_sim_note(sim, weight, DTL_STAGE_QUANTIZE, reason, fact_prequantized, loc);
	if (r < 0 || q->requested == DTL_QUANT_NONE)
		return r;
	/* fact_merge (the notes have no section on it): from_pretrained keeps the
	 * checkpoint's quantization_config over the one passed in */
	reason =
	    dtl_arena_sprintf(sim->arena,
	                      "the recipe asks for bitsandbytes %s, but transformers uses the "
	                      "checkpoint's own quantization_config (%s)",
	                      method_name(q->requested),
	                      method_name(eight_bit ? DTL_QUANT_BNB_8BIT : DTL_QUANT_BNB_4BIT));
	return dtl_sim_note(sim, weight, DTL_STAGE_QUANTIZE, reason, fact_merge, q->requested_loc);
}

int dtl_stage_quantize(struct dtl_sim *sim, struct dtl_error *error)
{
	const struct dtl_quantization *q = &sim->manifest->quantization;
	bool eight_bit = q->method == DTL_QUANT_BNB_8BIT;
	struct dtl_loc loc = q->quant_storage_loc.line ? q->quant_storage_loc : q->method_loc;
	enum dtl_dtype storage =
	    q->quant_storage != DTL_DTYPE_NONE ? q->quant_storage : DTL_DTYPE_U8;
	bool prequantized = q->prequantized;
	const char *storage_from = NULL;
	int r;

	(void)error;
	if (q->method == DTL_QUANT_NONE)
		return 0;
	if (q->quant_storage == DTL_DTYPE_NONE &&
	    q->storage_if_trl_follows_dtype != DTL_DTYPE_NONE &&
	    dtl_sim_behavior(sim, DTL_B_TRL_STORAGE_FOLLOWS_DTYPE)) {
		/* TRL <= 0.25's get_quantization_config: bnb_4bit_quant_storage = the model dtype
		 */
		char v[32];
		storage = q->storage_if_trl_follows_dtype;
		loc = q->storage_if_trl_follows_dtype_loc;
		dtl_version_format(&sim->rp.plan.versions[DTL_FW_TRL], v, sizeof(v));
		storage_from = dtl_arena_sprintf(sim->arena,
		                                 "trl %s's get_quantization_config packs in "
		                                 "the model dtype, ",
		                                 v);
	}
	for (uint32_t t = 0; t < sim->t.count && !prequantized; t++)
		prequantized = (sim->t.flags[t] & DTL_TF_PREQUANTIZED) != 0;
	struct skip_list skips;
	if (!prequantized && (r = skip_list_build(sim, &skips)) < 0)
		return r;
	for (uint32_t mod = 1; mod < sim->module_count; mod++) {
		const struct dtl_module *md = &sim->modules[mod];
		uint32_t weight;
		uint32_t w = DTL_NONE_INDEX;
		for (uint32_t t = md->first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t])
			if (strcmp(sim->t.name[t] + md->path_len + 1, "weight") == 0)
				w = t;
		if (w != DTL_NONE_INDEX && sim->t.kind[w] == DTL_KIND_PARAM &&
		    ((sim->t.flags[w] & DTL_TF_PREQUANTIZED) ||
		     !dtl_dtype_is_floating(sim->t.dtype[w]))) {
			/* a pre-quantized checkpoint, or a live model exported after quantization
			 */
			if ((r = mark_prequantized(sim, w, eight_bit, q->method_loc)) < 0)
				return r;
			continue;
		}
		if (prequantized) {
			/* the checkpoint's unquantized weights were skipped when it was quantized
			 * (llm_int8_skip_modules, keep-in-fp32): they load as stored */
			if (dtl_sim_linear(sim, mod, &weight, NULL, NULL) &&
			    (r = dtl_sim_note(
			         sim, weight, DTL_STAGE_QUANTIZE,
			         "not quantized: the pre-quantized checkpoint stores it "
			         "unquantized",
			         fact_skip, q->method_loc)) < 0)
				return r;
			continue;
		}
		if (!dtl_sim_linear(sim, mod, &weight, NULL, NULL))
			continue;
		const struct dtl_pattern *skip = skipped(&skips, mod);
		if (skip) {
			const char *reason = dtl_arena_sprintf(
			    sim->arena, "not quantized: '%s' is in the skip list", skip->text);
			if ((r = dtl_sim_note(sim, weight, DTL_STAGE_QUANTIZE, reason, fact_skip,
			                      skip->loc.line ? skip->loc : q->method_loc)) < 0)
				return r;
			continue;
		}
		enum dtl_dtype d = sim->t.dtype[weight];
		int64_t n = sim->t.numel[weight];
		const char *reason;
		sim->t.flags[weight] |= DTL_TF_QUANTIZED | (eight_bit ? DTL_TF_INT8 : 0);
		sim->t.flags[weight] &= ~DTL_TF_TRAINABLE;
		if (eight_bit) {
			reason =
			    dtl_arena_sprintf(sim->arena,
			                      "bitsandbytes 8-bit: Int8Params in int8 with row "
			                      "scales (from %s), frozen",
			                      dtl_dtype_name(d));
			r = dtl_sim_set_dtype(
			    sim, weight, DTL_STAGE_QUANTIZE, DTL_DTYPE_I8, reason,
			    "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/"
			    "95f9af309d4d5793847169c39288dcd3fcbdf564/bitsandbytes/nn/"
			    "modules.py#L719-L809",
			    q->method_loc);
		} else {
			int64_t packed =
			    n >= 0 ? (n + 1) / (int64_t)(2 * dtl_dtype_itemsize(storage)) : -1;
			reason = dtl_arena_sprintf(
			    sim->arena,
			    "bitsandbytes 4-bit: %sParams4bit packed into %s "
			    "storage (numel %lld -> %lld), frozen",
			    storage_from ? storage_from : "", dtl_dtype_name(storage), (long long)n,
			    (long long)packed);
			sim->t.numel[weight] = packed;
			r = dtl_sim_set_dtype(sim, weight, DTL_STAGE_QUANTIZE, storage, reason,
			                      fact_bnb, loc);
		}
		if (r < 0)
			return r;
	}
	return 0;
}
