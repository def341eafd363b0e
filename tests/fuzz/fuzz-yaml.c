/* SPDX-License-Identifier: MIT */
/* Fuzz target: the YAML manifest loader, bytes -> document tree -> struct dtl_manifest. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return dtl_fuzz_load_manifest("fuzz.yaml", data, size);
}
