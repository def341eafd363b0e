/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the JSON manifest loader, bytes -> document tree -> struct dtl_manifest; and the
 * reader against cJSON: cJSON, given the whole text, judges what JSON is, and the reader (a
 * cursor that leaves cJSON only the strings: src/input/doc-json.c) must accept no text cJSON
 * refuses. It may refuse more (control bytes, leading zeros, duplicate keys, ...).
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "dtypelint/doc.h"
#include "fuzz.h"

static void check_against_cjson(const uint8_t *data, size_t size)
{
	struct dtl_source source;
	struct dtl_limits limits;
	struct dtl_arena arena;
	struct dtl_node *root;
	struct dtl_error error = {0};

	dtl_limits_default(&limits);
	if (dtl_source_init_mem(&source, "fuzz.json", (const char *)data, size) < 0)
		return;
	dtl_arena_init(&arena);
	int r = dtl_doc_parse(&source, &arena, &limits, &root, &error);
	dtl_fuzz_check_error(r, &error);
	if (r == 0) {
		char *text = malloc(size + 1);
		if (text) {
			memcpy(text, data, size);
			text[size] = '\0';
			cJSON *json = cJSON_ParseWithOpts(text, NULL, 1);
			if (!json) {
				fprintf(stderr, "the reader accepted a text cJSON refuses\n");
				abort();
			}
			cJSON_Delete(json);
			free(text);
		}
	}
	dtl_arena_fini(&arena);
	dtl_source_fini(&source);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_against_cjson(data, size);
	return dtl_fuzz_load_manifest("fuzz.json", data, size);
}
