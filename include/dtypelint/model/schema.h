/* SPDX-License-Identifier: MIT */
/* Typed reads from the document tree with "file:line:col: expected X, got Y" errors. */
#ifndef DTYPELINT_SCHEMA_H
#define DTYPELINT_SCHEMA_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/schema.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include "dtypelint/input/doc.h"
#include "dtypelint/core/dtype.h"
#include "dtypelint/core/limits.h"
#include "dtypelint/model/plan.h"

struct dtl_schema {
	const char *file;
	struct dtl_arena *arena;
	const struct dtl_limits *limits;
	struct dtl_error *error;
};

/* Where node sits in s->file (file:line:col) for a message or a finding's location. */
struct dtl_loc dtl_schema_loc(const struct dtl_schema *s, const struct dtl_node *node);
/* Fills s->error with the printf-style message at node's location; returns -EINVAL, for
 * `return dtl_schema_fail(...)`. */
int dtl_schema_fail(const struct dtl_schema *s, const struct dtl_node *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "'x' must be a mapping, got a list" */
int dtl_schema_type_error(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                          const char *expected);
/* A short rendering of a scalar for messages ("-4", "'bf17'", "a list"). */
const char *dtl_schema_describe(const struct dtl_schema *s, const struct dtl_node *node);

/* Every key must be in allowed (NULL-terminated) or start with "x-". */
int dtl_schema_check_keys(const struct dtl_schema *s, const struct dtl_node *map,
                          const char *section, const char *const *allowed);
/* The document of a file read as `what` ("a manifest") is a mapping; else an error that names
 * its type and quotes none of its bytes. */
int dtl_schema_root_map(const struct dtl_schema *s, const struct dtl_node *root, const char *what);
int dtl_schema_map(const struct dtl_schema *s, const struct dtl_node *node, const char *what);
int dtl_schema_string(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                      const char **ret_text);
int dtl_schema_bool(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                    bool *ret_value);
int dtl_schema_tristate(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                        enum dtl_tristate *ret_value);
/* An integer in [min, max]. */
int dtl_schema_int(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                   int64_t min, int64_t max, int64_t *ret_value);
/* A number (an integer or a float) in [min, max]. */
int dtl_schema_float(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                     double min, double max, double *ret_value);
/* A dtype name or alias; null gives DTL_DTYPE_NONE when allow_null. */
int dtl_schema_dtype(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                     bool allow_null, enum dtl_dtype *ret_dtype);
enum dtl_pattern_kind {
	DTL_PATTERN_GLOB,  /* validated dotted-path glob */
	DTL_PATTERN_PLAIN, /* any non-empty string (class names, keep-in-fp32 entries) */
};
/* A list of strings (or a single string when allow_single). */
int dtl_schema_patterns(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                        enum dtl_pattern_kind kind, struct dtl_patterns *ret_patterns);
int dtl_schema_pattern(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                       enum dtl_pattern_kind kind, struct dtl_pattern *ret_pattern);
/* A list of plain strings, as an arena array of their texts (NUL-terminated). */
int dtl_schema_strings(const struct dtl_schema *s, const struct dtl_node *node, const char *what,
                       const char ***ret, size_t *ret_count);
/* The map's `behaviour:` key, a key of rules/versions.yaml: its enum dtl_behavior in *ret, or -1
 * when the map has none; a value that names no behaviour is a schema error. */
int dtl_schema_behavior(const struct dtl_schema *s, const struct dtl_node *map, int *ret);

#endif
