/* SPDX-License-Identifier: MIT */
/*
 * main() for fuzz targets built without libFuzzer: feeds every file named on the command line
 * (a directory stands for the files in it, sorted by name) to LLVMFuzzerTestOneInput(), so the
 * corpus and the regression inputs run as ordinary tests under any compiler, ASan or valgrind.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int feed_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	size_t size = 0, capacity = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (size == capacity) {
			capacity = capacity ? capacity * 2 : 4096;
			unsigned char *bigger = realloc(data, capacity);
			if (!bigger) {
				free(data);
				fclose(f);
				return -1;
			}
			data = bigger;
		}
		size_t n = fread(data + size, 1, capacity - size, f);
		if (n == 0)
			break;
		size += n;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int feed(const char *path, size_t *count)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return feed_file(path);
	}
	DIR *dir = opendir(path);
	char **names = NULL;
	size_t n = 0, capacity = 0;
	struct dirent *entry;
	int r = 0;

	if (!dir) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((entry = readdir(dir))) {
		if (entry->d_name[0] == '.')
			continue;
		if (n == capacity) {
			capacity = capacity ? capacity * 2 : 64;
			char **bigger = realloc(names, capacity * sizeof(*names));
			if (!bigger) {
				r = -1;
				break;
			}
			names = bigger;
		}
		size_t len = strlen(path) + strlen(entry->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n]) {
			r = -1;
			break;
		}
		snprintf(names[n], len, "%s/%s", path, entry->d_name);
		n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n; i++) {
		if (r == 0)
			r = feed(names[i], count);
		free(names[i]);
	}
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	size_t count = 0;

	for (int i = 1; i < argc; i++)
		if (feed(argv[i], &count) < 0)
			return 1;
	printf("%zu inputs replayed without a crash\n", count);
	return 0;
}
