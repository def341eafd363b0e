/* SPDX-License-Identifier: MIT */
/* A file read into a document tree, kept alive while an importer reads it. */
#ifndef DTL_IMPORT_UTIL_H
#define DTL_IMPORT_UTIL_H

#include "dtypelint/input/doc.h"
#include "dtypelint/model/manifest.h"
#include "dtypelint/model/schema.h"

struct dtl_loaded {
	struct dtl_source source;
	struct dtl_node *root;
	struct dtl_schema s;
};

/* Reads path and parses it into l->root, with l->s ready for schema reads (its file name and
 * the tree in arena): 0, or a negative errno (error filled where the file is at fault) and nothing
 * to close. dtl_loaded_close() frees the source buffer; the tree stays in the arena. */
int dtl_loaded_open(struct dtl_loaded *l, const char *path, struct dtl_arena *arena,
                    const struct dtl_limits *limits, struct dtl_error *error);
void dtl_loaded_close(struct dtl_loaded *l);
/* Whether key (len bytes) is one that marks trainer arguments (import-recipe.c): a key
 * dtypelint reads, or a TrainingArguments key it knows and ignores */
bool dtl_recipe_key(const char *key, size_t len);
/* Natural order of two NUL-terminated names: digit runs compare as numbers (layers.2 before
 * layers.10); <0, 0 or >0 as strcmp. */
int dtl_natural_cmp(const char *x, const char *y);
/* "<dir of base>/<rel>" unless rel is absolute */
const char *dtl_path_relative_to(struct dtl_arena *arena, const char *base, const char *rel);

/* A LoRA adapter with PEFT's defaults (r 8, adapter "default", the rest the framework's own),
 * present, at loc. */
void dtl_adapter_init(struct dtl_adapter *a, struct dtl_loc loc);
/* task_type: one of PEFT's TaskType values (or null), into a->task_type */
int dtl_adapter_task_type(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                          struct dtl_adapter *a);
/* added_with: get_peft_model | add_adapter | load_adapter, into a->added_with */
int dtl_adapter_added_with(const struct dtl_schema *s, const struct dtl_node *v,
                           struct dtl_adapter *a);
/* transformer layer classes to wrap: "A,B" (split on commas, as accelerate does) or [A, B] */
int dtl_class_list(const struct dtl_schema *s, const struct dtl_node *v, const char *what,
                   struct dtl_patterns *out);

#endif
