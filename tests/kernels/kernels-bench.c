/* SPDX-License-Identifier: MIT */
/*
 * Benchmark of the kernel scanner (not a test): kernels-bench DIR... scans the trees the way
 * --scan-kernels does and prints the per-file wall time (median, p95, max), the sites found
 * (AT_DISPATCH_* uses to compare with grep -c AT_DISPATCH, wrapper macro sites, asserts,
 * accessors, registrations) and how many ops have a dtype fact.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dtypelint/kernels/kernels.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
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
	uint64_t *times = calloc(k.n_files ? k.n_files : 1, sizeof(*times));
	uint64_t *parse = calloc(k.n_files ? k.n_files : 1, sizeof(*parse));
	uint64_t total = 0;
	if (!times || !parse) {
		status = 1;
		goto out;
	}
	for (size_t i = 0; i < k.n_files; i++) {
		times[i] = k.files[i].total_ns;
		parse[i] = k.files[i].parse_ns;
		total += times[i];
	}
	qsort(times, k.n_files, sizeof(*times), cmp_u64);
	qsort(parse, k.n_files, sizeof(*parse), cmp_u64);
	size_t n = k.n_files, with_facts = 0, depth0 = 0;
	for (size_t i = 0; i < k.n_contracts; i++) {
		with_facts += k.contracts[i].n_evidence > 0;
		depth0 +=
		    k.contracts[i].n_evidence > 0 && k.contracts[i].evidence[0].call_depth == 0;
	}
	printf("files %zu (failed %zu, skipped %zu), tokens %zu, functions %zu\n", k.stats.files,
	       k.stats.files_failed, k.stats.files_skipped, k.stats.tokens, k.stats.functions);
	if (n)
		printf(
		    "ms/file: median %.2f, p95 %.2f, max %.2f (parse median %.2f); total %.2f s\n",
		    times[n / 2] / 1e6, times[n * 95 / 100] / 1e6, times[n - 1] / 1e6,
		    parse[n / 2] / 1e6, total / 1e9);
	printf("AT_DISPATCH sites %zu (unresolved %zu), wrapper sites %zu, asserts %zu, branches "
	       "%zu, switches %zu, accessors %zu, registrations %zu\n",
	       k.stats.at_dispatch_sites, k.stats.at_dispatch_unresolved, k.stats.wrapper_sites,
	       k.stats.asserts, k.stats.branches, k.stats.switches, k.stats.accessors,
	       k.stats.registrations);
	printf("ops %zu, with a dtype fact %zu (at depth 0: %zu)\n", k.n_contracts, with_facts,
	       depth0);
	free(times);
	free(parse);
out:
	dtl_kernels_fini(&k);
	dtl_arena_fini(&arena);
	return status;
}
