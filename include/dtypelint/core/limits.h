/* SPDX-License-Identifier: MIT */
/* Limits on every user-controlled size (docs/design.md §7 "Robustness"). */
#ifndef DTYPELINT_LIMITS_H
#define DTYPELINT_LIMITS_H
#ifndef DTL_SEES_CORE
#error "dtypelint/core/limits.h is in the core layer, barred from this one (docs/design.md §2)"
#endif

#include <stddef.h>

struct dtl_limits {
	size_t max_file_size;          /* bytes of one manifest, plan or config file */
	unsigned max_depth;            /* JSON/YAML nesting depth */
	size_t max_alias_nodes;        /* nodes reachable through YAML aliases, in total */
	size_t max_tensors;            /* tensors in one manifest */
	size_t max_name_length;        /* bytes in one tensor name */
	unsigned max_rank;             /* dimensions of one shape */
	size_t max_safetensors_header; /* bytes of one safetensors JSON header */
};

/* 256 MiB files, depth 64, 1M alias nodes, 10M tensors, 4 KiB names, rank 16, and
 * safetensors headers of 100,000,000 bytes (the reference MAX_HEADER_SIZE) */
void dtl_limits_default(struct dtl_limits *limits);

#endif
