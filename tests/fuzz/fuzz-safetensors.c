/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the safetensors header reader. The input is a whole safetensors file (8-byte
 * length prefix, JSON header, data): the prefix is checked against the input's size, then the
 * header is parsed and checked against it, as dtl_safetensors_read_header() does after its
 * two reads.
 */
#include <string.h>

#include "dtypelint/input/safetensors.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char prefix[DTL_SAFETENSORS_PREFIX_LEN] = {0};
	struct dtl_safetensors_header header;
	struct dtl_limits limits;
	struct dtl_arena arena;
	struct dtl_error error = {0};
	uint64_t header_len = 0;
	int r;

	dtl_limits_default(&limits);
	dtl_arena_init(&arena);
	memcpy(prefix, data, size < sizeof(prefix) ? size : sizeof(prefix));
	r = dtl_safetensors_parse_prefix("fuzz.safetensors", prefix, size, &limits, &header_len,
	                                 &error);
	if (r == 0)
		r = dtl_safetensors_parse_header(
		    "fuzz.safetensors", data + DTL_SAFETENSORS_PREFIX_LEN, (size_t)header_len, size,
		    &limits, &arena, &header, &error);
	dtl_fuzz_check_error(r, &error);
	if (r == 0) {
		/* what the header promises: tensors tile the data section in by_offset order */
		uint64_t at = 0;
		for (size_t k = 0; k < header.tensor_count; k++) {
			const struct dtl_safetensors_tensor *t =
			    &header.tensors[header.by_offset[k]];
			if (t->begin != at || t->end < t->begin || strlen(t->name) != t->name_len)
				abort();
			at = t->end;
		}
		if (at != header.data_size)
			abort();
	}
	dtl_arena_fini(&arena);
	return 0;
}
