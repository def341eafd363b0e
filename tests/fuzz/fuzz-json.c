/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the JSON manifest loader, bytes -> document tree -> struct dtl_manifest; and the
 * reader against cJSON: cJSON, given the whole text, judges what JSON is, and the reader (a
 * cursor that leaves cJSON only the strings with escapes: src/input/doc-json.c) must accept no
 * text cJSON refuses, and build the tree cJSON builds: the same containers, members in the
 * same order, the same keys and strings byte for byte, the same kinds of scalars. It may
 * refuse more (control bytes, leading zeros, duplicate keys, ...).
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "dtypelint/input/doc.h"
#include "fuzz.h"

static void differ(const struct dtl_node *node, const char *what)
{
	fprintf(stderr, "the reader and cJSON differ at line %u, column %u: %s\n", node->line,
	        node->column, what);
	abort();
}

static void same_string(const struct dtl_node *node, const char *text)
{
	if (node->type != DTL_NODE_STRING || !text || strlen(text) != node->string.len ||
	    memcmp(text, node->string.text, node->string.len) != 0)
		differ(node, "string");
}

/* The reader's tree against cJSON's, node by node. */
static void same_tree(const struct dtl_node *node, const cJSON *json)
{
	switch (node->type) {
	case DTL_NODE_NULL:
		if (!cJSON_IsNull(json))
			differ(node, "null");
		return;
	case DTL_NODE_BOOL:
		if (!cJSON_IsBool(json) || node->boolean != cJSON_IsTrue(json))
			differ(node, "boolean");
		return;
	case DTL_NODE_INT:
	case DTL_NODE_FLOAT:
		if (!cJSON_IsNumber(json))
			differ(node, "number");
		return;
	case DTL_NODE_STRING:
		if (!cJSON_IsString(json))
			differ(node, "string");
		same_string(node, json->valuestring);
		return;
	case DTL_NODE_SEQ: {
		const cJSON *item = cJSON_IsArray(json) ? json->child : NULL;
		if (!cJSON_IsArray(json))
			differ(node, "array");
		for (size_t i = 0; i < node->seq.count; i++, item = item->next) {
			if (!item)
				differ(node, "array length");
			same_tree(&node->seq.items[i], item);
		}
		if (item)
			differ(node, "array length");
		return;
	}
	case DTL_NODE_MAP: {
		const cJSON *item = cJSON_IsObject(json) ? json->child : NULL;
		if (!cJSON_IsObject(json))
			differ(node, "object");
		for (size_t i = 0; i < node->map.count; i++, item = item->next) {
			if (!item)
				differ(node, "object size");
			same_string(&node->map.pairs[i].key, item->string);
			same_tree(&node->map.pairs[i].value, item);
		}
		if (item)
			differ(node, "object size");
		return;
	}
	}
}

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
			same_tree(root, json);
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
