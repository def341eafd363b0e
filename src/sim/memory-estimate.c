/* SPDX-License-Identifier: MIT */
/*
 * Per-rank memory of the model states (issue 25), from the finished simulation: every tensor
 * in the dtype it is held in, sharded as the strategy shards it. The accounting follows the
 * ZeRO paper (2 + 2 + 12 bytes per parameter for mixed-precision Adam, over N ranks at stage
 * 3) and the estimators of DeepSpeed and accelerate; rules/versions.yaml (memory_formulas)
 * cites each formula. Activations are not counted.
 */
#include <stdio.h>
#include <string.h>

#include "dtypelint/sim/memory.h"

static const char src_zero_paper[] = "https://arxiv.org/abs/1910.02054 (ZeRO, sections 3.1 and 5)";
static const char src_ds_gather[] =
    "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.5/deepspeed/runtime/zero/"
    "stage3.py#L3714-L3763 and config.py#L215-L238 (prefetch_bucket_size 5e7, "
    "max_live_parameters 1e9)";
static const char src_ds_partition[] =
    "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.8/deepspeed/runtime/zero/"
    "partition_parameters.py#L1778-L1850 (_partition_param: a ds_tensor partition for every "
    "parameter, on the local device for a persistent one, which is not released)";
static const char src_ds_grads[] =
    "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.8/deepspeed/runtime/zero/"
    "stage3.py#L786-L800 (grad_partitions_flat_buffer in gradient_accumulation_dtype) and "
    "runtime/engine.py#L1799-L1810 (get_data_types: grad_accum_dtype unset is the model dtype)";
static const char src_bnb_8bit[] =
    "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/bitsandbytes/optim/"
    "optimizer.py#L492-L530";
static const char src_adafactor[] = "https://github.com/huggingface/transformers/blob/v5.15.0/"
                                    "src/transformers/optimization.py#L1185-L1240";
static const char src_torch_optim[] =
    "https://github.com/pytorch/pytorch/blob/v2.7.1/torch/optim/adamw.py (exp_avg, exp_avg_sq: "
    "zeros_like(param)); torch/optim/sgd.py (momentum_buffer: clone of the gradient)";
static const char src_bnb_4bit[] =
    "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/bitsandbytes/"
    "functional.py#L884-L921";
static const char src_fsdp[] =
    "https://github.com/pytorch/pytorch/blob/v2.7.1/torch/distributed/fsdp/_fully_shard/"
    "_fsdp_param.py (sharded parameters and gradients in the original dtype; unsharded "
    "in param_dtype during forward and backward)";

/* 8-bit states below this many elements stay float32 (Optimizer2State.init_state) */
#define BNB_MIN_8BIT_SIZE   4096
#define BNB_OPTIM_BLOCK     256
#define BNB_4BIT_BLOCK      64
#define DS_PREFETCH_DEFAULT 50000000
#define DS_MAX_LIVE_DEFAULT 1000000000

const char *dtl_memory_part_name(enum dtl_memory_part part)
{
	static const char *const names[] = {"params",    "gathered",    "grads",
	                                    "optimizer", "quant_state", "buffers"};
	return names[part];
}

const char *dtl_memory_format(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes == UINT64_MAX) { /* saturated: see mul() */
		snprintf(buf, size, "over 16 EiB");
		return buf;
	}
	if (bytes < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

struct acc {
	const struct dtl_sim *sim;
	struct dtl_memory *m;
	enum dtl_strategy strategy;
	int64_t n; /* world size */
	bool sharded_strategy;
	bool params_host, grads_host, optim_host;
	enum dtl_optimizer optimizer;
};

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Saturating: a hostile shape (numel up to 2^63 - 1) times a state size must read as "more
 * than any device", never wrap to a small figure. */
static uint64_t mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sum(uint64_t a, uint64_t b)
{
	uint64_t r;
	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static void add(struct acc *a, enum dtl_memory_part part, bool host, enum dtl_dtype dtype,
                uint64_t bytes)
{
	struct dtl_memory_line *l = &a->m->line[part];
	if (host)
		l->host = sum(l->host, bytes);
	else
		l->device = sum(l->device, bytes);
	l->by_dtype[dtype] = sum(l->by_dtype[dtype], bytes);
}

/* Elements this rank holds of a tensor of n elements. */
static uint64_t local(const struct acc *a, uint32_t t, uint64_t n)
{
	uint32_t flags = a->sim->t.flags[t];
	if (!a->sharded_strategy || (flags & DTL_TF_IGNORED))
		return n;
	/* persistent parameters are whole on every rank (DeepSpeed's mark_persistent_parameters,
	 * deepspeed/runtime/zero/parameter_offload.py) */
	if (a->strategy == DTL_STRATEGY_ZERO3 && (flags & DTL_TF_ZERO_PERSIST))
		return n;
	return div_up(n, (uint64_t)a->n);
}

/* Elements of Adafactor's second moment for a tensor of n elements held as e per rank: rows
 * plus columns when the optimizer sees a matrix (transformers' _get_options: factored when
 * ndim >= 2), the whole when it sees the flat partitions of ZeRO-3 or FSDP1. */
static uint64_t adafactor_elements(const struct acc *a, uint32_t t, uint64_t n, uint64_t e)
{
	const struct dtl_sim *sim = a->sim;
	uint64_t rows = 0, cols = 0;

	if (a->strategy == DTL_STRATEGY_ZERO3 || a->strategy == DTL_STRATEGY_FSDP1)
		return e;
	if (sim->t.decl[t] != DTL_NONE_INDEX) {
		const struct dtl_tensor_decl *d = &sim->manifest->tensors[sim->t.decl[t]];
		if (d->shape && d->rank >= 2 && d->shape[d->rank - 1] > 0) {
			cols = (uint64_t)d->shape[d->rank - 1];
			rows = n / cols;
		}
	} else if ((sim->t.flags[t] & DTL_TF_ADAPTER) && sim->manifest->adapter.r > 0 &&
	           n % (uint64_t)sim->manifest->adapter.r == 0 &&
	           (strstr(sim->t.name[t], ".lora_A.") || strstr(sim->t.name[t], ".lora_B."))) {
		/* lora_A is [r, in], lora_B [out, r]: either way rows + cols = r + n / r */
		rows = (uint64_t)sim->manifest->adapter.r;
		cols = n / rows;
	}
	if (!rows || !cols)
		return e;
	/* FSDP2 shards dim 0: the local matrix has a share of the rows */
	if (e < n)
		rows = div_up(rows, (uint64_t)a->n);
	return sum(rows, cols);
}

/* Gradients of GE elements of a parameter held in D. ZeRO-3 keeps every gradient partition in
 * one flat buffer of the engine's gradient-accumulation dtype (data_types.grad_accum_dtype,
 * unset: bf16 or fp16 as the precision, else float32), a float32 LoRA adapter's too (M3). */
static void add_grads(struct acc *a, enum dtl_dtype d, uint64_t ge)
{
	if (a->strategy == DTL_STRATEGY_ZERO3)
		d = a->sim->rp.mode_dtype != DTL_DTYPE_NONE ? a->sim->rp.mode_dtype : DTL_DTYPE_F32;
	add(a, DTL_MEM_GRADS, a->grads_host, d, mul(ge, dtl_dtype_itemsize(d)));
}

static void param(struct acc *a, uint32_t t, uint64_t n)
{
	const struct dtl_sim *sim = a->sim;
	enum dtl_dtype d = sim->t.dtype[t];
	uint64_t e = local(a, t, n);
	size_t size = dtl_dtype_itemsize(d);

	add(a, DTL_MEM_PARAMS, a->params_host, d, mul(e, size));
	/* a persistent ZeRO-3 parameter stays whole and keeps its partition (ds_tensor) beside
	 * it: _partition_param allocates one for every parameter (M2 of
	 * tests/oracle/DISAGREEMENTS.md) */
	uint64_t part = div_up(n, (uint64_t)a->n);
	if (a->strategy == DTL_STRATEGY_ZERO3 && (sim->t.flags[t] & DTL_TF_ZERO_PERSIST) &&
	    !(sim->t.flags[t] & DTL_TF_IGNORED))
		add(a, DTL_MEM_PARAMS, a->params_host, d, mul(part, size));
	if (!(sim->t.flags[t] & DTL_TF_TRAINABLE))
		return;
	/* gradients of the trainable only; ZeRO-3 reduce-scatters every gradient into
	 * partitions, persistent parameters included */
	uint64_t ge = a->sharded_strategy && !(sim->t.flags[t] & DTL_TF_IGNORED) ? part : n;
	add_grads(a, d, ge);
	/* the optimizer's view: DeepSpeed steps an fp32 master partition of every trainable
	 * parameter (ZeRO paper: K = 12 = 4 master + 8 Adam); torch optimizers keep their
	 * states in the parameter's own dtype (zeros_like) */
	enum dtl_dtype od = d;
	uint64_t oe = e;
	if (a->strategy == DTL_STRATEGY_ZERO3) {
		od = DTL_DTYPE_F32;
		oe = ge;
		add(a, DTL_MEM_OPTIMIZER, a->optim_host, DTL_DTYPE_F32, mul(oe, 4));
	}
	size_t osize = dtl_dtype_itemsize(od);
	switch (a->optimizer) {
	case DTL_OPTIMIZER_UNSET:
	case DTL_OPTIMIZER_ADAMW:
		add(a, DTL_MEM_OPTIMIZER, a->optim_host, od, mul(mul(2, oe), osize));
		break;
	case DTL_OPTIMIZER_ADAMW_8BIT:
		if (oe < BNB_MIN_8BIT_SIZE) {
			add(a, DTL_MEM_OPTIMIZER, a->optim_host, DTL_DTYPE_F32, mul(oe, 8));
		} else {
			add(a, DTL_MEM_OPTIMIZER, a->optim_host, DTL_DTYPE_U8, mul(oe, 2));
			add(a, DTL_MEM_OPTIMIZER, a->optim_host, DTL_DTYPE_F32,
			    mul(div_up(oe, BNB_OPTIM_BLOCK), 8));
		}
		break;
	case DTL_OPTIMIZER_ADAFACTOR:
		/* transformers' Adafactor upcasts 16-bit gradients (grad.float()), so its
		 * states are float32; no first moment by default (beta1=None) */
		add(a, DTL_MEM_OPTIMIZER, a->optim_host, DTL_DTYPE_F32,
		    mul(adafactor_elements(a, t, n, oe), 4));
		break;
	case DTL_OPTIMIZER_SGD:
		add(a, DTL_MEM_OPTIMIZER, a->optim_host, od, mul(oe, osize));
		break;
	}
}

/* A 4-bit weight the quantize stage packed: its QuantState beside it (absmax in float32 per
 * block of 64 of the original elements, the 16-entry code); an LLM.int8 weight: SCB, one
 * float32 per row. A pre-quantized checkpoint lists these tensors itself. */
static void implied_quant_state(struct acc *a, uint32_t t)
{
	const struct dtl_sim *sim = a->sim;
	const struct dtl_tensor_decl *d =
	    sim->t.decl[t] != DTL_NONE_INDEX ? &sim->manifest->tensors[sim->t.decl[t]] : NULL;

	if (sim->t.flags[t] & DTL_TF_PREQUANTIZED)
		return;
	if (sim->t.flags[t] & DTL_TF_INT8) {
		if (d && d->shape && d->rank >= 1 && d->shape[0] >= 0)
			add(a, DTL_MEM_QUANT_STATE, false, DTL_DTYPE_F32,
			    mul((uint64_t)d->shape[0], 4));
		return;
	}
	uint64_t n = d && d->numel >= 0
	                 ? (uint64_t)d->numel
	                 : mul((uint64_t)sim->t.numel[t], 2 * dtl_dtype_itemsize(sim->t.dtype[t]));
	add(a, DTL_MEM_QUANT_STATE, false, DTL_DTYPE_F32,
	    sum(mul(div_up(n, BNB_4BIT_BLOCK), 4), 16 * 4));
}

/* The unsharded working set of FSDP: the largest unit or group, parameters in the dtype
 * they compute in plus their gradients before the reduce-scatter. */
static void gathered_fsdp(struct acc *a)
{
	const struct dtl_sim *sim = a->sim;
	const struct dtl_group *groups = sim->groups.items;
	uint64_t best = 0, by[DTL_DTYPE_COUNT];
	struct dtl_memory_line *l = &a->m->line[DTL_MEM_GATHERED];

	for (size_t g = 0; g < sim->groups.count; g++) {
		if (groups[g].kind != DTL_GROUP_FSDP1_UNIT &&
		    groups[g].kind != DTL_GROUP_FSDP2_GROUP)
			continue;
		uint64_t bytes = 0;
		memset(by, 0, sizeof(by));
		for (size_t k = 0; k < groups[g].count; k++) {
			uint32_t t = groups[g].members[k];
			if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS) ||
			    sim->t.numel[t] < 0)
				continue;
			uint64_t b = mul((uint64_t)sim->t.numel[t],
			                 dtl_dtype_itemsize(sim->t.compute_dtype[t]));
			b = sim->t.flags[t] & DTL_TF_TRAINABLE ? mul(2, b) : b;
			bytes = sum(bytes, b);
			by[sim->t.compute_dtype[t]] = sum(by[sim->t.compute_dtype[t]], b);
		}
		if (bytes > best) {
			best = bytes;
			a->m->gathered_name = groups[g].name;
			memcpy(l->by_dtype, by, sizeof(by));
		}
	}
	l->device = best;
}

/* ZeRO-3's live parameters: the largest module's own parameters gathered with their 16-bit
 * gradients (DeepSpeed's estimator: largest_layer_memory = 4 * largest_layer_params), plus
 * what the prefetcher gathers ahead (stage3_prefetch_bucket_size elements), all capped by
 * stage3_max_live_parameters. */
static void gathered_zero3(struct acc *a, int64_t prefetch)
{
	const struct dtl_sim *sim = a->sim;
	const struct dtl_plan_zero3 *z = &sim->rp.plan.zero3;
	uint64_t best_elems = 0, best_bytes = 0, partitioned = 0, by[DTL_DTYPE_COUNT];
	size_t best = SIZE_MAX;
	struct dtl_memory_line *l = &a->m->line[DTL_MEM_GATHERED];

	for (size_t m = 0; m < sim->module_count; m++) {
		uint64_t elems = 0, bytes = 0;
		memset(by, 0, sizeof(by));
		for (uint32_t t = sim->modules[m].first_tensor; t != DTL_NONE_INDEX;
		     t = sim->t.next_in_module[t]) {
			if (sim->t.kind[t] != DTL_KIND_PARAM || (sim->t.flags[t] & DTL_TF_ALIAS) ||
			    sim->t.numel[t] < 0)
				continue;
			uint64_t n = (uint64_t)sim->t.numel[t];
			uint64_t b = mul(n, dtl_dtype_itemsize(sim->t.compute_dtype[t]));
			b = sim->t.flags[t] & DTL_TF_TRAINABLE ? mul(2, b) : b;
			elems = sum(elems, n);
			bytes = sum(bytes, b);
			by[sim->t.compute_dtype[t]] = sum(by[sim->t.compute_dtype[t]], b);
			if (!(sim->t.flags[t] & DTL_TF_ZERO_PERSIST))
				partitioned = sum(partitioned, n);
		}
		if (bytes > best_bytes) {
			best_bytes = bytes;
			best_elems = elems;
			best = m;
			memcpy(l->by_dtype, by, sizeof(by));
		}
	}
	/* a module's path is a prefix of its tensors' names, not NUL-terminated */
	if (best < sim->module_count)
		a->m->gathered_name =
		    sim->modules[best].path_len
		        ? dtl_arena_sprintf(sim->arena, "%.*s", (int)sim->modules[best].path_len,
		                            sim->modules[best].path)
		        : "<root>";
	uint64_t ahead = prefetch >= 0 ? (uint64_t)prefetch : DS_PREFETCH_DEFAULT;
	uint64_t max_live =
	    z->max_live_parameters >= 0 ? (uint64_t)z->max_live_parameters : DS_MAX_LIVE_DEFAULT;
	if (ahead > partitioned - (partitioned < best_elems ? partitioned : best_elems))
		ahead = partitioned - (partitioned < best_elems ? partitioned : best_elems);
	if (sum(best_elems, ahead) > max_live)
		ahead = max_live > best_elems ? max_live - best_elems : 0;
	enum dtl_dtype gd =
	    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_F32;
	l->device = sum(best_bytes, mul(ahead, dtl_dtype_itemsize(gd)));
	l->by_dtype[gd] = sum(l->by_dtype[gd], mul(ahead, dtl_dtype_itemsize(gd)));
}

static void describe(struct acc *a)
{
	struct dtl_memory_line *l = a->m->line;
	bool zero3 = a->strategy == DTL_STRATEGY_ZERO3;

	switch (a->strategy) {
	case DTL_STRATEGY_ZERO3:
		l[DTL_MEM_PARAMS].rule = "ZeRO-3 partition: numel / world size in the stored "
		                         "dtype; persistent parameters (numel <= threshold) whole, "
		                         "their partition beside them";
		l[DTL_MEM_PARAMS].source = src_ds_partition;
		l[DTL_MEM_GATHERED].rule =
		    "largest module's own parameters gathered with their gradients, in the "
		    "gathered dtype (DeepSpeed: 4 * largest_layer_params), plus the prefetch "
		    "bucket, capped by max_live_parameters";
		l[DTL_MEM_GATHERED].source = src_ds_gather;
		l[DTL_MEM_GRADS].rule = "trainable only: gradient partitions, numel / world size, "
		                        "in one flat buffer of the engine's dtype (bf16, fp16, "
		                        "else float32)";
		l[DTL_MEM_GRADS].source = src_ds_grads;
		break;
	case DTL_STRATEGY_FSDP1:
	case DTL_STRATEGY_FSDP2:
		l[DTL_MEM_PARAMS].rule =
		    "FSDP shard: numel / world size in the stored dtype; ignored ones whole";
		l[DTL_MEM_PARAMS].source = src_fsdp;
		l[DTL_MEM_GATHERED].rule = "largest unit or group unsharded in its compute dtype "
		                           "(param_dtype), with its gradients before the "
		                           "reduce-scatter";
		l[DTL_MEM_GATHERED].source = src_fsdp;
		l[DTL_MEM_GRADS].rule = "trainable only: sharded gradients in the parameter's "
		                        "original dtype";
		l[DTL_MEM_GRADS].source = src_fsdp;
		break;
	default:
		l[DTL_MEM_PARAMS].rule = "every parameter whole in its stored dtype";
		l[DTL_MEM_PARAMS].source = src_zero_paper;
		l[DTL_MEM_GATHERED].rule = "nothing to gather: parameters are whole";
		l[DTL_MEM_GATHERED].source = src_zero_paper;
		l[DTL_MEM_GRADS].rule = "trainable only: whole gradients in the parameter's dtype";
		l[DTL_MEM_GRADS].source = src_zero_paper;
		break;
	}
	switch (a->optimizer) {
	case DTL_OPTIMIZER_UNSET:
	case DTL_OPTIMIZER_ADAMW:
		l[DTL_MEM_OPTIMIZER].rule =
		    zero3 ? "AdamW: fp32 master partition (4) + exp_avg, exp_avg_sq (8) per "
		            "trainable element, over world size"
		          : "AdamW: exp_avg and exp_avg_sq in the parameter's dtype (zeros_like), "
		            "per trainable element held";
		l[DTL_MEM_OPTIMIZER].source = zero3 ? src_zero_paper : src_torch_optim;
		break;
	case DTL_OPTIMIZER_ADAMW_8BIT:
		l[DTL_MEM_OPTIMIZER].rule =
		    zero3 ? "bitsandbytes AdamW8bit: fp32 master partition (4) + two uint8 states "
		            "(2) + float32 absmax per 256 elements; float32 states below 4096"
		          : "bitsandbytes AdamW8bit: two uint8 states (2) + float32 absmax per 256 "
		            "elements; float32 states for tensors below 4096 elements";
		l[DTL_MEM_OPTIMIZER].source = src_bnb_8bit;
		break;
	case DTL_OPTIMIZER_ADAFACTOR:
		l[DTL_MEM_OPTIMIZER].rule =
		    zero3 ? "Adafactor on flat fp32 partitions: master (4) + unfactored "
		            "exp_avg_sq (4)"
		    : a->strategy == DTL_STRATEGY_FSDP1
		        ? "Adafactor on flat FSDP1 shards: unfactored exp_avg_sq in float32"
		        : "Adafactor: float32 row + column statistics per matrix, the whole "
		          "second moment for vectors";
		l[DTL_MEM_OPTIMIZER].source = src_adafactor;
		break;
	case DTL_OPTIMIZER_SGD:
		l[DTL_MEM_OPTIMIZER].rule =
		    zero3 ? "SGD with momentum: fp32 master partition (4) + momentum_buffer (4)"
		          : "SGD with momentum: momentum_buffer in the parameter's dtype";
		l[DTL_MEM_OPTIMIZER].source = src_torch_optim;
		break;
	}
	l[DTL_MEM_QUANT_STATE].rule =
	    "bitsandbytes QuantState: float32 absmax per 64 elements and the code (4-bit), "
	    "SCB per row (8-bit), or the checkpoint's own quant-state tensors";
	l[DTL_MEM_QUANT_STATE].source = src_bnb_4bit;
	l[DTL_MEM_BUFFERS].rule = "every buffer whole in its dtype (neither FSDP nor ZeRO-3 "
	                          "shards buffers)";
	l[DTL_MEM_BUFFERS].source = src_zero_paper;
}

void dtl_memory_compute(const struct dtl_sim *sim, const struct dtl_memory_what_if *what_if,
                        struct dtl_memory *ret_memory)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	struct dtl_memory_what_if none = {.prefetch_bucket_size = -1};
	const struct dtl_memory_what_if *w = what_if ? what_if : &none;
	struct acc a = {.sim = sim, .m = ret_memory};

	memset(ret_memory, 0, sizeof(*ret_memory));
	a.strategy = plan->strategy;
	a.n = w->world_size > 0 ? w->world_size : plan->world_size > 0 ? plan->world_size : 1;
	a.sharded_strategy = a.strategy == DTL_STRATEGY_ZERO3 || a.strategy == DTL_STRATEGY_FSDP1 ||
	                     a.strategy == DTL_STRATEGY_FSDP2;
	a.optimizer = w->optimizer != DTL_OPTIMIZER_UNSET ? w->optimizer : plan->optimizer;
	if (a.strategy == DTL_STRATEGY_ZERO3) {
		enum dtl_offload p = w->offload_param != DTL_OFFLOAD_UNSET
		                         ? w->offload_param
		                         : plan->zero3.offload_param;
		enum dtl_offload o = w->offload_optimizer != DTL_OFFLOAD_UNSET
		                         ? w->offload_optimizer
		                         : plan->zero3.offload_optimizer;
		/* DeepSpeed's estimator: cpu_offload moves the fp32 gradients and optimizer
		 * states, cpu_offload_params the 16-bit partitions too */
		a.params_host = p == DTL_OFFLOAD_CPU || p == DTL_OFFLOAD_NVME;
		a.grads_host = a.optim_host = o == DTL_OFFLOAD_CPU || o == DTL_OFFLOAD_NVME;
	} else if (a.strategy == DTL_STRATEGY_FSDP1 || a.strategy == DTL_STRATEGY_FSDP2) {
		/* CPUOffload(offload_params=True): shards, gradients and the step on the CPU */
		a.params_host = a.grads_host = a.optim_host =
		    w->fsdp_cpu_offload || plan->fsdp.cpu_offload == DTL_TRUE;
	}
	ret_memory->strategy = a.strategy;
	ret_memory->world_size = a.n;
	ret_memory->optimizer =
	    a.optimizer == DTL_OPTIMIZER_UNSET ? DTL_OPTIMIZER_ADAMW : a.optimizer;
	for (uint32_t t = 0; t < sim->t.count; t++) {
		if (sim->t.flags[t] & DTL_TF_ALIAS) /* a tie shares its partner's storage */
			continue;
		if (sim->t.numel[t] < 0) {
			ret_memory->unknown_numel++;
			continue;
		}
		uint64_t n = (uint64_t)sim->t.numel[t];
		enum dtl_dtype d = sim->t.dtype[t];
		switch ((enum dtl_tensor_kind)sim->t.kind[t]) {
		case DTL_KIND_PARAM:
			param(&a, t, n);
			if (sim->t.flags[t] & DTL_TF_QUANTIZED)
				implied_quant_state(&a, t);
			break;
		case DTL_KIND_BUFFER:
			add(&a, DTL_MEM_BUFFERS, false, d, mul(n, dtl_dtype_itemsize(d)));
			break;
		case DTL_KIND_QUANT_STATE:
			add(&a, DTL_MEM_QUANT_STATE, false, d, mul(n, dtl_dtype_itemsize(d)));
			break;
		}
	}
	if (a.strategy == DTL_STRATEGY_ZERO3)
		gathered_zero3(&a, w->prefetch_bucket_size >= 0 ? w->prefetch_bucket_size
		                                                : plan->zero3.prefetch_bucket_size);
	else if (a.sharded_strategy)
		gathered_fsdp(&a);
	describe(&a);
	for (int p = 0; p < DTL_MEM_PART_COUNT; p++) {
		ret_memory->total = sum(ret_memory->total, ret_memory->line[p].device);
		ret_memory->host = sum(ret_memory->host, ret_memory->line[p].host);
	}
}
