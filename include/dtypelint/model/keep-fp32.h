/* SPDX-License-Identifier: MIT */
/*
 * transformers' matching of _keep_in_fp32_modules entries against tensor names, in its three
 * eras (rules/versions.yaml: transformers-keep-match-substring, -keep-match-dot-regex,
 * -keep-in-fp32-strict, each with its upstream source). Entries are not globs.
 */
#ifndef DTYPELINT_KEEP_FP32_H
#define DTYPELINT_KEEP_FP32_H
#ifndef DTL_SEES_MODEL
#error "dtypelint/model/keep-fp32.h is in the model layer, barred from this one (docs/design.md §2)"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtypelint/model/plan.h"

enum dtl_keep_matcher {
	DTL_KEEP_COMPONENT, /* <= ~4.50: any(m in name.split(".")) */
	DTL_KEEP_DOT_REGEX, /* ~4.51-4.5x: re.search(r"(^|\.)m($|\.)"), m not escaped */
	DTL_KEEP_SUBSTRING, /* v5: unanchored search, '*' -> '.*', nothing escaped */
};

/* Whether one _keep_in_fp32_modules entry (pattern, not NUL-terminated) matches the tensor
 * name as the era's matcher does; reads only its arguments, allocates nothing. */
bool dtl_keep_match(enum dtl_keep_matcher matcher, const char *pattern, size_t pattern_len,
                    const char *name, size_t name_len);
/* "one dot-separated component", ... for messages */
const char *dtl_keep_matcher_description(enum dtl_keep_matcher matcher);

#endif
