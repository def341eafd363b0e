/* SPDX-License-Identifier: MIT */
/* DT801 model-states-exceed-memory: one rank's model states exceed the device memory. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "rule-util.h"
#include "dtypelint/sim/memory.h"

struct fixes {
	char text[1024];
	size_t len;
	size_t fitting;
};

static void append(struct fixes *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(struct fixes *x, const char *fmt, ...)
{
	va_list ap;

	if (x->len >= sizeof(x->text))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(x->text + x->len, sizeof(x->text) - x->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		x->len += (size_t)n;
}

/* Sizes the plan with one change; names it when it fits. */
static void try_change(const struct dtl_sim *sim, const struct dtl_memory_what_if *w,
                       const char *what, uint64_t limit, struct fixes *x)
{
	struct dtl_memory m;
	char buf[32];

	dtl_memory_compute(sim, w, &m);
	if (m.total > limit)
		return;
	append(x, "%s%s (%s per rank)", x->fitting ? "; " : "", what,
	       dtl_memory_format(m.total, buf, sizeof(buf)));
	x->fitting++;
}

/* The changes the issue names, each sized again with dtl_memory_compute: a larger world size
 * (doubling, up to 64 times), offload, 8-bit optimizer states, a smaller prefetch bucket. */
static void find_fixes(const struct dtl_sim *sim, const struct dtl_memory *m, uint64_t limit,
                       struct fixes *x)
{
	const struct dtl_plan *plan = &sim->rp.plan;
	bool zero3 = m->strategy == DTL_STRATEGY_ZERO3;
	bool fsdp = m->strategy == DTL_STRATEGY_FSDP1 || m->strategy == DTL_STRATEGY_FSDP2;
	char what[96];

	if (zero3 || fsdp) {
		for (int64_t n = m->world_size * 2; n <= m->world_size * 64 && n <= (1 << 24);
		     n *= 2) {
			struct dtl_memory_what_if w = {.world_size = n, .prefetch_bucket_size = -1};
			struct dtl_memory sized;
			dtl_memory_compute(sim, &w, &sized);
			if (sized.total <= limit) {
				snprintf(what, sizeof(what), "world_size: %lld", (long long)n);
				try_change(sim, &w, what, limit, x);
				break;
			}
		}
	}
	if (zero3) {
		struct dtl_memory_what_if w = {.offload_optimizer = DTL_OFFLOAD_CPU,
		                               .prefetch_bucket_size = -1};
		try_change(sim, &w, "zero3.offload_optimizer: cpu", limit, x);
		w.offload_param = DTL_OFFLOAD_CPU;
		if (x->fitting == 0 || plan->zero3.offload_optimizer == DTL_OFFLOAD_CPU)
			try_change(sim, &w, "zero3.offload_param: cpu with offload_optimizer: cpu",
			           limit, x);
	}
	if (fsdp && plan->fsdp.cpu_offload != DTL_TRUE) {
		struct dtl_memory_what_if w = {.fsdp_cpu_offload = true,
		                               .prefetch_bucket_size = -1};
		try_change(sim, &w, "fsdp.cpu_offload: true", limit, x);
	}
	if (m->optimizer == DTL_OPTIMIZER_ADAMW) {
		struct dtl_memory_what_if w = {.optimizer = DTL_OPTIMIZER_ADAMW_8BIT,
		                               .prefetch_bucket_size = -1};
		try_change(sim, &w, "optimizer: adamw_8bit", limit, x);
	}
	if (zero3) {
		/* the prefetch bucket adds its elements at the gathered dtype's size: the
		 * largest that fits is read off the sizes with and without it */
		struct dtl_memory_what_if w = {.prefetch_bucket_size = 0};
		struct dtl_memory none;
		dtl_memory_compute(sim, &w, &none);
		enum dtl_dtype gd =
		    sim->rp.mode_dtype != DTL_DTYPE_NONE ? sim->rp.mode_dtype : DTL_DTYPE_F32;
		if (none.total <= limit && none.total < m->total) {
			uint64_t room = (limit - none.total) / dtl_dtype_itemsize(gd);
			w.prefetch_bucket_size = (int64_t)(room > INT64_MAX ? INT64_MAX : room);
			snprintf(what, sizeof(what), "zero3.prefetch_bucket_size: %llu",
			         (unsigned long long)room);
			try_change(sim, &w, what, limit, x);
		}
	}
}

/* facts: DeepSpeed's estimator (estimate_zero3_model_states_mem_needs) and the ZeRO paper's
 * accounting, cited in rules/versions.yaml memory_formulas and src/sim/memory-estimate.c */
static int dt801_check(struct dtl_check *c)
{
	const struct dtl_sim *sim = c->sim;
	const struct dtl_plan *plan = &sim->rp.plan;
	struct dtl_memory m;
	char total[32], limit[32], part[DTL_MEM_PART_COUNT][32];

	if (plan->device_memory <= 0)
		return 0;
	dtl_memory_compute(sim, NULL, &m);
	if (m.total <= (uint64_t)plan->device_memory)
		return 0;
	for (int p = 0; p < DTL_MEM_PART_COUNT; p++)
		dtl_memory_format(m.line[p].device, part[p], sizeof(part[p]));
	struct dtl_finding *f = dtl_check_report(
	    c, c->rule->severity, plan->device_memory_loc,
	    "the model states need %s per rank, more than device_memory %s (params %s, gathered "
	    "%s, grads %s, optimizer %s, quant state %s, buffers %s; %s, world size %lld, "
	    "optimizer %s); activations are not counted",
	    dtl_memory_format(m.total, total, sizeof(total)),
	    dtl_memory_format((uint64_t)plan->device_memory, limit, sizeof(limit)),
	    part[DTL_MEM_PARAMS], part[DTL_MEM_GATHERED], part[DTL_MEM_GRADS],
	    part[DTL_MEM_OPTIMIZER], part[DTL_MEM_QUANT_STATE], part[DTL_MEM_BUFFERS],
	    dtl_strategy_name(m.strategy), (long long)m.world_size,
	    dtl_optimizer_name(m.optimizer));
	if (!f)
		return -ENOMEM;
	struct fixes x = {.len = 0};
	find_fixes(sim, &m, (uint64_t)plan->device_memory, &x);
	const char *fix =
	    x.fitting ? dtl_arena_sprintf(c->arena, "each of these fits (sized again): %s", x.text)
	              : "no single change of world size, offload or optimizer fits; combine them, "
	                "or use a device with more memory (see --memory)";
	if (!fix)
		return -ENOMEM;
	dtl_check_predict(c, f, "torch.OutOfMemoryError: CUDA out of memory",
	                  "when the model states are allocated (deepspeed.initialize, the "
	                  "sharded wrap or the first optimizer step), before any activation",
	                  DTL_FW_TORCH, fix);
	return 0;
}

static int dt801_propose_fixes(const struct dtl_fix_request *req)
{
	const struct dtl_sim *sim = req->sim;
	enum dtl_strategy strategy = sim->rp.plan.strategy;

	/* each is kept only when the re-simulation no longer reports DT801 */
	/* the smallest doubling of the world size that the accounting says fits */
	int64_t n = sim->rp.plan.world_size ? sim->rp.plan.world_size : 1, w = 0;
	for (int k = 1; k <= 6 && !w; k++) {
		struct dtl_memory_what_if what = {.world_size = n << k, .prefetch_bucket_size = -1};
		struct dtl_memory mem;
		dtl_memory_compute(sim, &what, &mem);
		if (mem.total <= (uint64_t)sim->rp.plan.device_memory)
			w = n << k;
	}
	if (w && !dtl_rules_propose(req, DTL_FIX_WORLD_SIZE,
	                            dtl_arena_sprintf(req->arena, "%lld", (long long)w), 0, 2,
	                            "set training.world_size: %lld (more ranks to shard over)",
	                            (long long)w))
		return -ENOMEM;
	if (strategy == DTL_STRATEGY_ZERO3 &&
	    !dtl_rules_propose(
	        req, DTL_FIX_OFFLOAD_OPTIMIZER, NULL, 0, 2,
	        "set training.zero3.offload_optimizer: cpu (offload_optimizer.device: "
	        "cpu)"))
		return -ENOMEM;
	if ((strategy == DTL_STRATEGY_FSDP1 || strategy == DTL_STRATEGY_FSDP2) &&
	    !dtl_rules_propose(req, DTL_FIX_FSDP_CPU_OFFLOAD, NULL, 0, 2,
	                       "set training.fsdp.cpu_offload: true (parameters and optimizer "
	                       "states on the host)"))
		return -ENOMEM;
	if (sim->rp.plan.optimizer != DTL_OPTIMIZER_ADAMW_8BIT &&
	    !dtl_rules_propose(
	        req, DTL_FIX_OPTIMIZER_8BIT, NULL, 0, 1,
	        "set training.optimizer: adamw_8bit (bitsandbytes AdamW8bit states)"))
		return -ENOMEM;
	return 0;
}

DTL_RULE(dt801) = {
    .id = "DT801",
    .name = "model-states-exceed-memory",
    .severity = DTL_SEVERITY_ERROR,
    .summary = "the model states of one rank exceed the plan's device memory",
    .explanation =
        "When the plan names the memory of one device (training.device_memory or "
        "--device-memory), dtypelint sizes what one rank holds of the model states from "
        "the simulated dtypes, trainability and sharding: parameters as stored (sharded by "
        "ZeRO-3 or FSDP over the world size), the gathered working set (the largest FSDP "
        "unit or group; ZeRO-3's largest module with its gradients plus the prefetch bucket, "
        "capped by max_live_parameters), gradients of the trainable parameters in the dtype "
        "the framework keeps, optimizer states (AdamW: two moments, plus DeepSpeed's fp32 "
        "master partition; AdamW 8-bit; Adafactor; SGD with momentum), the quantization "
        "state and the buffers. It fires when their sum exceeds the device memory: the run "
        "would stop with CUDA out of memory before its first step. Activations are not "
        "counted (as in DeepSpeed's estimator), so a plan that passes can still run out of "
        "memory. --memory prints the table.",
    .example = "tensors:\n"
               "  - {name: model.layers.0.mlp.weight, shape: [65536, 65536], dtype: bfloat16}\n"
               "training: {strategy: zero3, precision: bf16, world_size: 2, "
               "device_memory: 16GiB}",
    .fix = "A larger world size, offload (zero3.offload_optimizer / offload_param, "
           "fsdp.cpu_offload), 8-bit optimizer states (optimizer: adamw_8bit) or a smaller "
           "zero3.prefetch_bucket_size; the finding names the ones that fit, each sized again.",
    .facts = "https://arxiv.org/abs/1910.02054 and https://github.com/deepspeedai/DeepSpeed/"
             "blob/v0.19.5/deepspeed/runtime/zero/stage3.py#L3714-L3750",
    .check = dt801_check,
    .propose_fixes = dt801_propose_fixes,
};
