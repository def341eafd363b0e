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

/* A skip entry names a module when it is one of its dotted component sequences. */
static bool skip_match(const struct dtl_pattern *e, const char *path, uint32_t len)
{
	for (uint32_t i = 0; i + e->len <= len; i++)
		if ((i == 0 || path[i - 1] == '.') && memcmp(path + i, e->text, e->len) == 0 &&
		    (i + e->len == len || path[i + e->len] == '.'))
			return true;
	return false;
}

static const struct dtl_pattern *skipped(const struct dtl_sim *sim, const struct dtl_module *md)
{
	static const struct dtl_pattern lm_head = {.text = "lm_head", .len = 7};
	const struct dtl_quantization *q = &sim->manifest->quantization;
	const struct dtl_patterns *lists[] = {&sim->model.keep_in_fp32,
	                                      &sim->model.keep_in_fp32_strict};

	if (q->skip_modules.present) {
		for (size_t i = 0; i < q->skip_modules.count; i++)
			if (skip_match(&q->skip_modules.items[i], md->path, md->path_len))
				return &q->skip_modules.items[i];
	} else if (skip_match(&lm_head, md->path, md->path_len)) {
		/* get_keys_to_not_convert: the output embedding */
		return &lm_head;
	}
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->count; i++)
			if (skip_match(&lists[l]->items[i], md->path, md->path_len))
				return &lists[l]->items[i];
	return NULL;
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
	/* facts/deepspeed-peft-bnb-trl-accelerate.md §3.5: from_pretrained keeps the
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
		const struct dtl_pattern *skip = skipped(sim, md);
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
