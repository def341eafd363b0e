/* SPDX-License-Identifier: MIT */
/* Fuzz target: the TOML reader (src/input/doc-toml.c), bytes -> document tree -> manifest. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return dtl_fuzz_load_manifest("fuzz.toml", data, size);
}
