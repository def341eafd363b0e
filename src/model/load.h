/* SPDX-License-Identifier: MIT */
/* The in-memory half of dtl_manifest_load() and dtl_plan_load(), for fuzzers and tests. */
#ifndef DTL_MODEL_LOAD_H
#define DTL_MODEL_LOAD_H

#include "dtypelint/manifest.h"
#include "dtypelint/source.h"

/* Parses source (JSON or YAML, by its path as dtl_doc_parse() decides) into *ret_manifest:
 * exactly what dtl_manifest_load() does once it has read the file. Everything the manifest
 * keeps lives in arena; source may be freed afterwards. */
int dtl_manifest_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                             const struct dtl_limits *limits, struct dtl_manifest *ret_manifest,
                             struct dtl_error *error);
/* The same for a --plan file. */
int dtl_plan_load_source(const struct dtl_source *source, struct dtl_arena *arena,
                         const struct dtl_limits *limits, struct dtl_plan *plan,
                         struct dtl_error *error);

#endif
