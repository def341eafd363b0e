/* SPDX-License-Identifier: MIT */
/*
 * Test helper for tests/kernels/real-ext.py: scans DIR... and prints, for every registered op
 * and every dtype torch 1.13 has, what the scanner predicts, one tab-separated line each:
 *   ns::op  dtype  verdict  file:line  message
 * Each contract is asked on its own backend (TORCH_LIBRARY_IMPL key), so a CPU impl is
 * predicted as the CPU build will run it.
 */
#include <stdio.h>
#include <string.h>

#include "dtypelint/kernels/kernels.h"

int main(int argc, char **argv)
{
	static const enum dtl_dtype dtypes[] = {
	    DTL_DTYPE_F32, DTL_DTYPE_F64, DTL_DTYPE_F16, DTL_DTYPE_BF16, DTL_DTYPE_U8,
	    DTL_DTYPE_I8,  DTL_DTYPE_I16, DTL_DTYPE_I32, DTL_DTYPE_I64,  DTL_DTYPE_BOOL,
	};
	struct dtl_arena arena;
	struct dtl_kernels k;
	struct dtl_error error = {0};
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	dtl_arena_init(&arena);
	if (dtl_kernels_init(&k, &arena, NULL, &error) < 0 ||
	    dtl_kernels_scan_dirs(&k, (const char *const *)argv + 1, (size_t)argc - 1, &error) <
	        0) {
		fprintf(stderr, "%s: %s\n", error.loc.file ? error.loc.file : argv[0],
		        error.message);
		status = 1;
		goto out;
	}
	for (size_t i = 0; i < k.n_contracts; i++) {
		const struct dtl_kernels_contract *c = &k.contracts[i];
		char op[256];

		if (i > 0 && strcmp(c->op, k.contracts[i - 1].op) == 0 &&
		    (c->ns == k.contracts[i - 1].ns ||
		     (c->ns && k.contracts[i - 1].ns && strcmp(c->ns, k.contracts[i - 1].ns) == 0)))
			continue;
		snprintf(op, sizeof(op), "%s%s%s", c->ns ? c->ns : "", c->ns ? "::" : "", c->op);
		for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
			struct dtl_kernels_query q = {
			    .op = op, .dtype = dtypes[d], .backend = c->backend};
			struct dtl_kernels_answer a;
			if (dtl_kernels_query(&k, &q, &a, &error) < 0) {
				fprintf(stderr, "%s: %s\n", op, error.message);
				status = 1;
				goto out;
			}
			printf("%s\t%s\t%s\t%s:%u\t%s\n", op, dtl_dtype_name(dtypes[d]),
			       dtl_kernels_verdict_name(a.verdict),
			       a.evidence ? a.evidence->file : "-",
			       a.evidence ? a.evidence->line : 0, a.message);
		}
	}
out:
	dtl_kernels_fini(&k);
	dtl_arena_fini(&arena);
	return status;
}
