/* SPDX-License-Identifier: MIT */
/* DT409 qlora-storage-cast-by-fsdp: FSDP's mixed precision casts 4-bit weights packed in a
 * floating storage, so bitsandbytes reads the codes in another width. */
#include <errno.h>
#include <inttypes.h>

#include "rule-util.h"

/* bitsandbytes' CPU dequantize_4bit views the weight as uint8 and reshapes it to (m, n // 2)
 * (backends/cpu/ops.py); after the cast the tensor holds stored/cast times as many bytes.
 * The numbers of the first weight when its shape is known. */
static const char *cpu_error(struct dtl_check *c, uint32_t t, enum dtl_dtype stored,
                             enum dtl_dtype cast)
{
	const struct dtl_sim *sim = c->sim;
	uint32_t decl = sim->t.decl[t];
	const struct dtl_tensor_decl *d =
	    decl == DTL_NONE_INDEX ? NULL : &sim->manifest->tensors[decl];

	if (!d || d->rank != 2 || !d->shape || d->shape[0] <= 0 || d->shape[1] <= 0 ||
	    d->shape[1] % 2 || d->shape[0] > INT64_MAX / d->shape[1])
		return "RuntimeError: shape '[out_features, in_features // 2]' is invalid for "
		       "input of size ... (the bytes of the cast weight)";
	int64_t m = d->shape[0], n = d->shape[1];
	int64_t bytes =
	    m * n / 2 / (int64_t)dtl_dtype_itemsize(stored) * (int64_t)dtl_dtype_itemsize(cast);
	return dtl_arena_sprintf(c->arena,
	                         "RuntimeError: shape '[%" PRId64 ", %" PRId64
	                         "]' is invalid for input of size %" PRId64,
	                         m, n / 2, bytes);
}

/* The finding for the weights of one kind: an error when the cast changes the element size
 * (the packed bytes no longer fit the weight's shape), a warning when it keeps it (float16
 * and bfloat16: the codes are converted as numbers, silently). */
static struct dtl_finding *report(struct dtl_check *c, uint32_t t, bool resized)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_quantization *q = &sim->manifest->quantization;
	const struct dtl_plan_fsdp *fsdp = &sim->rp.plan.fsdp;
	enum dtl_dtype stored = sim->t.dtype[t], cast = sim->t.compute_dtype[t];
	struct dtl_loc loc = q->quant_storage_loc.line    ? q->quant_storage_loc
	                     : fsdp->param_dtype_loc.line ? fsdp->param_dtype_loc
	                                                  : dtl_sim_tensor_loc(sim, t);
	struct dtl_finding *f = dtl_check_report(
	    c, resized ? c->rule->severity : DTL_SEVERITY_WARNING, loc,
	    "%s mixed precision casts 4-bit weights stored as %s to %s for the forward",
	    dtl_rules_strategy_label(sim), dtl_dtype_name(stored), dtl_dtype_name(cast));
	if (!f)
		return NULL;
	f->effect = resized ? "the packed 4-bit codes are cast as numbers to a dtype of another "
	                      "width: bitsandbytes finds the wrong number of bytes for the "
	                      "weight's shape"
	                    : "the packed 4-bit codes are cast as numbers: the weights the "
	                      "forward dequantizes are garbage (no error is raised)";
	const char *fix = dtl_arena_sprintf(
	    c->arena,
	    "store the 4-bit weights in the mixed-precision dtype: bnb_4bit_quant_storage=%s "
	    "(and load the model in it), or train under the HF Trainer, which sets FSDP1's "
	    "mixed precision to the storage dtype",
	    dtl_dtype_name(cast));
	if (resized)
		dtl_check_predict(c, f, cpu_error(c, t, stored, cast),
		                  "at the first forward, in bitsandbytes' CPU 4-bit dequantize "
		                  "(its CUDA kernel does not check the size: it reads the cast "
		                  "buffer as packed bytes)",
		                  DTL_FW_BITSANDBYTES, fix);
	else
		f->fix = fix;
	return f;
}

/* DT409 — FSDP1's MixedPrecision and FSDP2's MixedPrecisionPolicy cast every sharded
 * floating parameter to param_dtype for the forward; a Params4bit packed in a floating
 * storage is sharded like any other (accelerate keeps only non-floating ones out of FSDP2,
 * rules/versions.yaml accelerate-fsdp2-ignore-params4bit), so its packed bytes are cast
 * (rules/versions.yaml fsdp-casts-float-quant-storage; tests/oracle/DISAGREEMENTS.md D20). */
static int dt409_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	struct dtl_finding *found[2] = {NULL, NULL}; /* same width, resized */
	size_t n[2] = {0, 0};

	if (sim->rp.plan.strategy != DTL_STRATEGY_FSDP1 &&
	    sim->rp.plan.strategy != DTL_STRATEGY_FSDP2)
		return 0;
	for (size_t k = 0; k < sim->t.count; k++) {
		uint32_t t = sim->t.order[k];
		uint32_t fl = sim->t.flags[t];
		enum dtl_dtype stored = sim->t.dtype[t], cast = sim->t.compute_dtype[t];
		if (!(fl & DTL_TF_QUANTIZED) || (fl & (DTL_TF_INT8 | DTL_TF_IGNORED)) ||
		    sim->t.kind[t] != DTL_KIND_PARAM || !dtl_dtype_is_floating(stored) ||
		    !dtl_dtype_is_floating(cast) || cast == stored)
			continue;
		bool resized = dtl_dtype_itemsize(cast) != dtl_dtype_itemsize(stored);
		if (!found[resized] && !(found[resized] = report(c, t, resized)))
			return -ENOMEM;
		if (++n[resized] <= 3 && dtl_check_add_tensor(c, found[resized], t, NULL) < 0)
			return -ENOMEM;
	}
	for (int i = 0; i < 2; i++)
		if (found[i] && n[i] > 1 &&
		    !(found[i]->message =
		          dtl_arena_sprintf(c->arena, "%s (%zu weights)", found[i]->message, n[i])))
			return -ENOMEM;
	return 0;
}

DTL_RULE(dt409) = {
    .id = "DT409",
    .name = "qlora-storage-cast-by-fsdp",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "FSDP's mixed precision casts 4-bit weights packed in a floating storage",
    .explanation =
        "bitsandbytes packs two 4-bit codes per byte and, with bnb_4bit_quant_storage, "
        "stores those bytes in a floating tensor so that FSDP shards it. FSDP1's "
        "MixedPrecision and FSDP2's MixedPrecisionPolicy cast every sharded floating "
        "parameter to param_dtype for the forward, the packed weights too, as numbers. When "
        "the storage dtype and param_dtype differ in width (float32 storage under bf16 or "
        "fp16 mixed precision) the weight no longer holds the bytes its shape needs: "
        "bitsandbytes' CPU kernel raises 'RuntimeError: shape '[out, in // 2]' is invalid "
        "for input of size ...' at the first forward, and its CUDA kernel, which does not "
        "check, reads the cast buffer as codes. When they have the same width (float16 "
        "storage under bf16) nothing is raised and the codes are garbage: a warning. The HF "
        "Trainer sets FSDP1's mixed precision to a floating storage dtype, which avoids it.",
    .example = "--trainer-args with load_in_4bit: true, dtype: float32 and "
               "bnb_4bit_quant_storage: float32, --accelerate with distributed_type: FSDP "
               "and mixed_precision: bf16",
    .fix = "Store the 4-bit weights in the mixed-precision dtype (bnb_4bit_quant_storage: "
           "bfloat16 with dtype: bfloat16).",
    .facts = "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.2/"
             "bitsandbytes/backends/cpu/ops.py",
    .check = dt409_check,
};
