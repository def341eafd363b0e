/* SPDX-License-Identifier: MIT */
/*
 * The default input limits (limits.h): how big a file, how deep a tree, how many tensors and
 * how long a name dtypelint accepts before it refuses an input with an error rather than
 * spending unbounded time or memory on it. The command line's options override them.
 */
#include "dtypelint/core/limits.h"

void dtl_limits_default(struct dtl_limits *limits)
{
	limits->max_file_size = (size_t)256 << 20;
	limits->max_depth = 64;
	limits->max_alias_nodes = 1000000;
	limits->max_tensors = 10000000;
	limits->max_name_length = 4096;
	limits->max_rank = 16;
	limits->max_safetensors_header = 100000000; /* safetensors MAX_HEADER_SIZE */
}
