/* SPDX-License-Identifier: MIT */
/*
 * What the report layer reads of a linted input, as plain data the rules layer resolves from
 * the finished simulation (docs/design.md §2: reporters read findings only, never the simulation).
 * Each finding carries its tensors' names, locations and dtype histories; the input's view
 * points into the simulation's columns (no per-tensor copies) for the model picture of the
 * HTML report and --trace, and holds the resolved plan for --show-plan and the versions.
 */
#ifndef DTYPELINT_FINDING_VIEW_H
#define DTYPELINT_FINDING_VIEW_H
#ifndef DTL_SEES_RULES
#error                                                                                             \
    "dtypelint/rules/finding-view.h is in the rules layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtypelint/core/arena.h"
#include "dtypelint/core/diag.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/model/manifest.h"
#include "dtypelint/core/vocab.h"

struct dtl_sim;
struct dtl_findings;
struct dtl_memory;

/* One step of a tensor's dtype history. */
struct dtl_trace_step {
	uint8_t stage;    /* 0 .. DTL_STAGE_COMPUTE */
	uint8_t from, to; /* enum dtl_dtype */
	const char *name; /* the stage's name: "manifest", "load", ... */
	const char *reason;
	const char *fact;   /* NULL: none */
	struct dtl_loc loc; /* file NULL: none */
};

/* An involved tensor of a finding, as reporters print it. */
struct dtl_finding_tensor {
	uint32_t index; /* in the input's tensor table (the HTML report's anchors) */
	const char *name;
	uint8_t kind; /* enum dtl_tensor_kind */
	uint8_t dtype, compute_dtype;
	uint32_t flags;
	struct dtl_loc loc;   /* its entry (its tied partner's for injected aliases) */
	const int64_t *shape; /* as declared, or NULL */
	uint32_t rank;
	int64_t numel;                      /* -1: unknown */
	const struct dtl_trace_step *steps; /* oldest first (at most the newest 64) */
	size_t step_count;
};

/* The group a finding is about. */
struct dtl_finding_group {
	const char *name;
	enum dtl_group_kind kind;
	uint32_t id;     /* position in the input's groups */
	uint32_t index;  /* construction order */
	uint32_t module; /* DTL_NONE_INDEX for ZeRO-3 sets */
	size_t size;
};

/* What reporters print of a finding besides its text: filled by dtl_input_view_init. */
struct dtl_finding_view {
	const struct dtl_finding_tensor *tensors; /* tensor_count of them, the offending first */
	const struct dtl_finding_group *group;    /* NULL: none */
};

/* A module of the tree, parents before children. */
struct dtl_view_module {
	const char *path; /* "" for the root */
	uint32_t path_len;
	uint32_t parent; /* DTL_NONE_INDEX for the root */
	uint32_t first_child, next_sibling, first_tensor;
	bool wrapped;
	const char *class_name; /* NULL: unknown */
};

struct dtl_view_group {
	enum dtl_group_kind kind;
	const char *name;
	uint32_t module; /* DTL_NONE_INDEX for ZeRO-3 sets */
	uint32_t index;
	const uint32_t *members; /* tensor indices in torch order */
	size_t count;
};

/* The plan the simulation used, every default resolved. */
struct dtl_view_plan {
	const struct dtl_plan *plan;
	const bool *version_assumed; /* [DTL_FW_COUNT] */
	bool world_size_assumed;
	const struct dtl_patterns *wrap;
	bool wrap_from_model;
	bool wrap_module_lists; /* NeMo Automodel's ModuleList children, not wrap classes */
	int64_t persistence_threshold;
	bool zero_init;
	uint8_t mode_dtype, zero_init_dtype; /* enum dtl_dtype */
	bool peft_wrap_policy;
};

/* One linted input as reporters see it. The columns point into the simulation's tensor table
 * (indexed by tensor; order[k] is the k-th in torch's order, rank its inverse). */
struct dtl_input_view {
	const struct dtl_sim *sim; /* for the functions below; opaque to reporters */
	const struct dtl_manifest *manifest;
	struct dtl_view_plan rp;
	size_t tensor_count, module_count, group_count;
	const char *const *name;
	const uint32_t *name_len, *module, *next_in_module, *flags, *group, *decl, *order, *rank;
	const uint8_t *kind, *dtype, *compute_dtype;
	const int64_t *numel;
};

/* The per-rank memory estimate (--memory), with its figures formatted. */
struct dtl_memory_view {
	struct dtl_memory_view_line {
		const char *name; /* "params", ... */
		uint64_t device, host;
		const uint64_t *by_dtype; /* [DTL_DTYPE_COUNT] */
		const char *rule, *source;
		const char
		    *largest; /* the gathered line's largest unit, group or module, or NULL */
	} line[6];
	size_t line_count;
	const char *strategy, *optimizer;
	int64_t world_size;
	uint64_t total, host;
	const char *gathered_name;
	size_t unknown_numel;
};

/*
 * Fills view from a finished simulation and resolves every finding's view (its tensors'
 * names, locations and histories, its group) with storage from arena: call it once the
 * findings are final. Returns 0 or -ENOMEM.
 */
int dtl_input_view_init(struct dtl_input_view *view, const struct dtl_sim *sim,
                        struct dtl_findings *findings, struct dtl_arena *arena);
/* Tensor t's history, oldest first, into out (at most max: the oldest are left out). */
size_t dtl_input_view_history(const struct dtl_input_view *view, uint32_t t,
                              struct dtl_trace_step *out, size_t max);
/* The location of tensor t's entry (its tied partner's for injected aliases). */
struct dtl_loc dtl_input_view_tensor_loc(const struct dtl_input_view *view, uint32_t t);
/* The module tree and the groups, copied into arena (for the HTML report). */
int dtl_input_view_tree(const struct dtl_input_view *view, struct dtl_arena *arena,
                        struct dtl_view_module **ret_modules, struct dtl_view_group **ret_groups);
/* The memory estimate of a simulation (dtl_memory_compute) as reporters print it. */
void dtl_memory_view_init(struct dtl_memory_view *view, const struct dtl_memory *memory);
/* bytes as "80.0 GiB" (dtl_memory_format) */
const char *dtl_view_format_bytes(uint64_t bytes, char *buf, size_t size);

#endif
