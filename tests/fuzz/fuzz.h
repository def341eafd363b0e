/* SPDX-License-Identifier: MIT */
/*
 * What every fuzz target shares (issue 7). A target is one file defining
 * LLVMFuzzerTestOneInput(); it is linked twice: with libFuzzer (-Dfuzz=true, clang) to fuzz,
 * and with replay.c, whose main() feeds it files, to run the kept corpus and the regression
 * inputs as ordinary tests with any compiler.
 *
 * A target checks the one promise of issue 7: an input is either accepted or refused with an
 * error that has a message and a position (line >= 1, column >= 1 for text files). Anything
 * else (a crash, a sanitizer report, a refusal without a position) aborts.
 */
#ifndef DTL_FUZZ_H
#define DTL_FUZZ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dtypelint/core/diag.h"
#include "model/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless r is 0, -ENOMEM, or a refusal with a message at a line and column. */
static inline void dtl_fuzz_check_error(int r, const struct dtl_error *error)
{
	if (r >= 0 || r == -ENOMEM)
		return;
	if (error->message[0] && error->loc.line >= 1 && error->loc.column >= 1)
		return;
	fprintf(stderr, "refused without a position: %s:%u:%u: %s (%d)\n", error->loc.file,
	        error->loc.line, error->loc.column, error->message, r);
	abort();
}

/* The manifest loader of dtl_manifest_load() on bytes, with path deciding JSON or YAML. */
static inline int dtl_fuzz_load_manifest(const char *path, const uint8_t *data, size_t size)
{
	struct dtl_source source;
	struct dtl_manifest manifest;
	struct dtl_limits limits;
	struct dtl_arena arena;
	struct dtl_error error = {0};
	int r;

	dtl_limits_default(&limits);
	dtl_arena_init(&arena);
	if (dtl_source_init_mem(&source, path, (const char *)data, size) < 0)
		return 0;
	r = dtl_manifest_load_source(&source, &arena, &limits, &manifest, &error);
	dtl_fuzz_check_error(r, &error);
	dtl_source_fini(&source);
	dtl_arena_fini(&arena);
	return 0;
}

#endif
