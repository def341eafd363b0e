/* SPDX-License-Identifier: MIT */
/*
 * Per-rank memory of the model states (issue 25): what one rank holds of the parameters, the
 * gathered working set, the gradients, the optimizer states, the quantization state and the
 * buffers, from the finished simulation's dtypes, trainability and sharding. Activations are
 * not counted (as in DeepSpeed's estimator). Every line says how it was sized and the source.
 */
#ifndef DTYPELINT_MEMORY_H
#define DTYPELINT_MEMORY_H
#ifndef DTL_SEES_SIM
#error "dtypelint/sim/memory.h is in the sim layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "dtypelint/sim/sim.h"

enum dtl_memory_part {
	DTL_MEM_PARAMS,
	DTL_MEM_GATHERED,
	DTL_MEM_GRADS,
	DTL_MEM_OPTIMIZER,
	DTL_MEM_QUANT_STATE,
	DTL_MEM_BUFFERS,
	DTL_MEM_PART_COUNT
};

struct dtl_memory_line {
	uint64_t device, host;              /* bytes per rank */
	uint64_t by_dtype[DTL_DTYPE_COUNT]; /* device + host, by the dtype they are held in */
	const char *rule;                   /* how the line was sized */
	const char *source;                 /* where that accounting comes from */
};

/* Changes to the plan to size instead of the plan itself (what a fix would do); a field left
 * at 0 / UNSET keeps the plan's value. */
struct dtl_memory_what_if {
	int64_t world_size;
	enum dtl_offload offload_param, offload_optimizer;
	bool fsdp_cpu_offload; /* true: CPUOffload on; false: the plan's */
	enum dtl_optimizer optimizer;
	int64_t prefetch_bucket_size; /* -1: the plan's */
};

struct dtl_memory {
	struct dtl_memory_line line[DTL_MEM_PART_COUNT];
	uint64_t total; /* on the device: the sum of the lines' device bytes */
	uint64_t host;  /* offloaded to the host (CPU or NVMe) */
	enum dtl_strategy strategy;
	int64_t world_size;
	enum dtl_optimizer optimizer;
	const char *gathered_name; /* the largest unit, group or module; NULL: none */
	size_t unknown_numel;      /* tensors without a shape, counted as 0 bytes */
};

/* Sizes the model states of a finished simulation (what_if may be NULL). */
void dtl_memory_compute(const struct dtl_sim *sim, const struct dtl_memory_what_if *what_if,
                        struct dtl_memory *ret_memory);
/* "params", "gathered", "grads", "optimizer", "quant_state", "buffers" */
const char *dtl_memory_part_name(enum dtl_memory_part part);
/* bytes as "80.0 GiB" (binary units, one decimal; "512 B" below 1 KiB; "over 16 EiB" for
 * UINT64_MAX, where the sizes saturate) */
const char *dtl_memory_format(uint64_t bytes, char *buf, size_t size);

#endif
