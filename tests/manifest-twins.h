/* SPDX-License-Identifier: MIT */
/*
 * A manifest loaded twice, as dtl_manifest_load() loads it (plain tensor entries read straight
 * from the JSON text: src/model/tensor-text.c) and with every entry read through the
 * document's nodes (dtl_manifest_load_source_nodes()), and the two compared: the same result,
 * the same error at the same position, or the same tensors, field by field. For the unit
 * test of tensor-text.c and the pipeline fuzz target.
 */
#ifndef DTL_MANIFEST_TWINS_H
#define DTL_MANIFEST_TWINS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dtypelint/model/manifest.h"
#include "model/load.h"

static inline bool dtl_twins_same_loc(struct dtl_loc a, struct dtl_loc b)
{
	return a.line == b.line && a.column == b.column &&
	       strcmp(a.file ? a.file : "", b.file ? b.file : "") == 0;
}

/* The first difference between two tensors, in why; false when there is none. */
static inline bool dtl_twins_tensor_differs(const struct dtl_tensor_decl *a,
                                            const struct dtl_tensor_decl *b, char *why,
                                            size_t why_size)
{
	const char *field = NULL;

	if (a->name_len != b->name_len || memcmp(a->name, b->name, a->name_len) != 0 ||
	    a->name[a->name_len] || b->name[b->name_len])
		field = "name";
	else if (a->kind != b->kind)
		field = "kind";
	else if (a->dtype != b->dtype)
		field = "dtype";
	else if (a->rank != b->rank || !a->shape != !b->shape ||
	         (a->shape && memcmp(a->shape, b->shape, a->rank * sizeof(int64_t)) != 0))
		field = "shape";
	else if (a->numel != b->numel)
		field = "numel";
	else if (a->trainable != b->trainable)
		field = "trainable";
	else if (a->persistent != b->persistent)
		field = "persistent";
	else if (!dtl_twins_same_loc(a->loc, b->loc))
		field = "loc";
	else if (!dtl_twins_same_loc(a->dtype_loc, b->dtype_loc))
		field = "dtype_loc";
	if (field)
		snprintf(why, why_size, "tensor '%.*s': %s differs", (int)a->name_len, a->name,
		         field);
	return field != NULL;
}

/*
 * Loads source both ways under limits and compares. Returns 1 when both agree (*ret_r: their
 * result), 0 with the first difference in why, -ENOMEM when either ran out of memory.
 */
static inline int dtl_twins_compare(const struct dtl_source *source,
                                    const struct dtl_limits *limits, int *ret_r, char *why,
                                    size_t why_size)
{
	struct dtl_arena arena_text, arena_nodes;
	struct dtl_manifest text, nodes;
	struct dtl_error error_text = {0}, error_nodes = {0};
	int same = 1;

	dtl_arena_init(&arena_text);
	dtl_arena_init(&arena_nodes);
	int r_text = dtl_manifest_load_source(source, &arena_text, limits, &text, &error_text);
	int r_nodes =
	    dtl_manifest_load_source_nodes(source, &arena_nodes, limits, &nodes, &error_nodes);
	*ret_r = r_text;
	if (r_text == -ENOMEM || r_nodes == -ENOMEM) {
		same = -ENOMEM;
	} else if (r_text != r_nodes) {
		snprintf(why, why_size, "result %d from the text, %d through the nodes", r_text,
		         r_nodes);
		same = 0;
	} else if (r_text < 0) {
		if (strcmp(error_text.message, error_nodes.message) != 0 ||
		    !dtl_twins_same_loc(error_text.loc, error_nodes.loc)) {
			snprintf(why, why_size,
			         "error %u:%u: %.200s, through the nodes %u:%u: %.200s",
			         error_text.loc.line, error_text.loc.column, error_text.message,
			         error_nodes.loc.line, error_nodes.loc.column, error_nodes.message);
			same = 0;
		}
	} else if (text.tensor_count != nodes.tensor_count) {
		snprintf(why, why_size, "%zu tensors from the text, %zu through the nodes",
		         text.tensor_count, nodes.tensor_count);
		same = 0;
	} else {
		for (size_t i = 0; same == 1 && i < text.tensor_count; i++) {
			const struct dtl_tensor_decl *t = &text.tensors[i];
			if (dtl_twins_tensor_differs(t, &nodes.tensors[i], why, why_size))
				same = 0;
			else if (dtl_strmap_get(&text.tensor_index, t->name, t->name_len) !=
			         dtl_strmap_get(&nodes.tensor_index, t->name, t->name_len)) {
				snprintf(why, why_size, "tensor '%s': index differs", t->name);
				same = 0;
			}
		}
	}
	dtl_arena_fini(&arena_text);
	dtl_arena_fini(&arena_nodes);
	return same;
}

#endif
