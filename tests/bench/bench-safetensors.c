/* SPDX-License-Identifier: MIT */
/*
 * Times reading the headers of every *.safetensors file in a folder (issue 5 benchmark).
 * Registered nowhere; build by hand from the repository root:
 *
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Iinclude tests/bench/bench-safetensors.c \
 *       src/input/safetensors.c src/core/arena.c src/core/diag.c src/core/dtype.c \
 *       src/core/limits.c -o /tmp/bench-safetensors
 *   python3 tests/bench/gen_safetensors_folder.py /tmp/moe --shards 60 --tensors 100000
 *   /tmp/bench-safetensors /tmp/moe 5
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dtypelint/input/safetensors.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	struct dtl_limits limits;
	char **paths = NULL;
	size_t count = 0, capacity = 0;
	int repeat = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FOLDER [REPEAT]\n", argv[0]);
		return 2;
	}
	DIR *dir = opendir(argv[1]);
	if (!dir) {
		perror(argv[1]);
		return 1;
	}
	struct dirent *entry;
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);
		if (len < 12 || strcmp(entry->d_name + len - 12, ".safetensors") != 0)
			continue;
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 64;
			paths = realloc(paths, capacity * sizeof(*paths));
		}
		size_t size = strlen(argv[1]) + len + 2;
		paths[count] = malloc(size);
		snprintf(paths[count], size, "%s/%s", argv[1], entry->d_name);
		count++;
	}
	closedir(dir);
	qsort(paths, count, sizeof(*paths), compare_names);
	dtl_limits_default(&limits);

	double best = 1e9, first = 0;
	size_t tensors = 0, header_bytes = 0, arena_bytes = 0;
	unsigned long long nominal = 0;
	for (int r = 0; r < (repeat < 1 ? 1 : repeat); r++) {
		struct dtl_arena arena;
		dtl_arena_init(&arena);
		tensors = header_bytes = 0;
		nominal = 0;
		double start = now();
		for (size_t k = 0; k < count; k++) {
			struct dtl_safetensors_header header;
			struct dtl_error error;
			if (dtl_safetensors_read_header(paths[k], &limits, &arena, &header,
			                                &error) < 0) {
				fprintf(stderr, "%s:%u:%u: %s\n", error.loc.file, error.loc.line,
				        error.loc.column, error.message);
				return 1;
			}
			tensors += header.tensor_count;
			header_bytes += header.header_len;
			nominal += header.file_size;
		}
		double elapsed = now() - start;
		if (r == 0)
			first = elapsed;
		if (elapsed < best)
			best = elapsed;
		arena_bytes = arena.total;
		dtl_arena_fini(&arena);
	}
	printf("%zu shards, %zu tensors, %.1f MiB of headers, %.1f GiB nominal, %.1f MiB arena\n",
	       count, tensors, header_bytes / 1048576.0, nominal / 1073741824.0,
	       arena_bytes / 1048576.0);
	printf("first run %.1f ms, best of %d: %.1f ms\n", first * 1e3, repeat, best * 1e3);
	for (size_t k = 0; k < count; k++)
		free(paths[k]);
	free(paths);
	return 0;
}
