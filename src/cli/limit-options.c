/* SPDX-License-Identifier: MIT */
/* The --max-* options and the `limits:` keys of a config: one table for both. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	const char *help;
	uint64_t max;
} fields[DTL_LIMIT_COUNT] = {
    [DTL_LIMIT_FILE_SIZE] = {"max-file-size", "bytes of one manifest, plan, config or baseline",
                             SIZE_MAX},
    [DTL_LIMIT_DEPTH] = {"max-depth", "nesting depth of a JSON or YAML document", 100000},
    [DTL_LIMIT_ALIAS_NODES] = {"max-alias-nodes", "nodes reached through YAML aliases, in total",
                               SIZE_MAX},
    [DTL_LIMIT_TENSORS] = {"max-tensors", "tensors in one manifest", SIZE_MAX},
    /* names are keys of string maps, whose keys are shorter than DTL_STRMAP_KEY_MAX */
    [DTL_LIMIT_NAME_LENGTH] = {"max-name-length", "bytes of one tensor name or pattern",
                               DTL_STRMAP_KEY_MAX - 1},
    [DTL_LIMIT_RANK] = {"max-rank", "dimensions of one shape", 1024},
    [DTL_LIMIT_HEADER_SIZE] = {"max-header-size", "bytes of one safetensors JSON header", SIZE_MAX},
};

const char *dtl_cli_limit_name(int i)
{
	return fields[i].name;
}

uint64_t dtl_cli_limit_max(int i)
{
	return fields[i].max;
}

const char *dtl_cli_limit_help(int i)
{
	return fields[i].help;
}

int dtl_cli_limit_parse(int i, const char *text, uint64_t *ret_value)
{
	uint64_t value = 0, scale = 1;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (value > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		value = value * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'k':
	case 'K':
		scale = 1024;
		p++;
		break;
	case 'm':
	case 'M':
		scale = 1024 * 1024;
		p++;
		break;
	case 'g':
	case 'G':
		scale = 1024 * 1024 * 1024;
		p++;
		break;
	default:
		break;
	}
	if (*p)
		return -EINVAL;
	if (value > fields[i].max / scale || value * scale == 0)
		return -ERANGE;
	*ret_value = value * scale;
	return 0;
}

uint64_t dtl_cli_limit_get(const struct dtl_limits *l, int i)
{
	switch (i) {
	case DTL_LIMIT_FILE_SIZE:
		return l->max_file_size;
	case DTL_LIMIT_DEPTH:
		return l->max_depth;
	case DTL_LIMIT_ALIAS_NODES:
		return l->max_alias_nodes;
	case DTL_LIMIT_TENSORS:
		return l->max_tensors;
	case DTL_LIMIT_NAME_LENGTH:
		return l->max_name_length;
	case DTL_LIMIT_RANK:
		return l->max_rank;
	case DTL_LIMIT_HEADER_SIZE:
		return l->max_safetensors_header;
	}
	return 0;
}
