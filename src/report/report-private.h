/* SPDX-License-Identifier: MIT */
/* What the machine-readable reporters share: the findings of a run in report order, each
 * with its repo-relative path and fingerprint. */
#ifndef DTL_REPORT_PRIVATE_H
#define DTL_REPORT_PRIVATE_H

#include <stdint.h>
#include <stdio.h>

#include "dtypelint/report/report.h"

/* An input warning as a DT003 finding of severity warning, at its place (no tensors) */
void dtl_report_warning_finding(const struct dtl_input_warning *w, struct dtl_finding *ret);

struct dtl_json;
/* The "input_warnings" key of a JSON object: an array of the DT003 objects json's report has,
 * for --show-plan -f json, so that a plan read in part says so where a script reads it. */
void dtl_report_json_warnings(struct dtl_json *w, const struct dtl_report_input *inputs, size_t n);

struct dtl_report_item {
	const struct dtl_report_input *input;
	const struct dtl_finding *finding;
	const char *path; /* relative to the root (the working directory), absolute outside it */
	bool relative;
	char fingerprint[17];
};

/* Every finding of inputs in report order (input by input, in each input's order). Storage
 * comes from arena. Returns 0 or -ENOMEM. */
int dtl_report_items(struct dtl_arena *arena, const struct dtl_report_input *inputs, size_t n,
                     struct dtl_report_item **ret_items, size_t *ret_count);
/* dtl_report_items with paths (and so fingerprints) relative to root (NULL: the working
 * directory): the repository root a CI system reads them from. */
int dtl_report_items_at(struct dtl_arena *arena, const struct dtl_report_input *inputs, size_t n,
                        const char *root, struct dtl_report_item **ret_items, size_t *ret_count);

/* The character at p (NUL-terminated): its length in bytes, its code point (0x110000 | byte for
 * a byte of invalid UTF-8) and whether text meant for a terminal or a CI log escapes it (C0,
 * DEL, C1, invalid UTF-8). */
size_t dtl_report_char_at(const char *p, uint32_t *ret_cp, bool *ret_escape);
/* \xNN for a C0 control, DEL or a raw byte, \uNNNN for a C1 control */
void dtl_report_put_char_escape(FILE *out, uint32_t cp);

/* "FSDP1 unit", "FSDP2 group", "ZeRO-3 persistent set", "ZeRO-3 trainable set" */
const char *dtl_report_group_kind(enum dtl_group_kind kind);

/* A tensor's shape as declared ("[4096, 64]"; shape NULL: none), else "numel N" (numel >= 0),
 * else unknown */
void dtl_report_put_shape(FILE *out, const int64_t *shape, uint32_t rank, int64_t numel,
                          const char *unknown);

struct dtl_json;
/* The "memory" object of one input in the JSON report (dtypelint(1), JSON OUTPUT). */
void dtl_report_memory_json(struct dtl_json *w, const struct dtl_input_view *view,
                            const struct dtl_memory_view *memory);

/* Who raises a finding's predicted error ("torch 2.8"; "the framework" when the rule named
 * none) and when ("at wrap time"; "at run time" when it said nothing): never NULL. */
const char *dtl_report_raiser(const struct dtl_finding *f);
const char *dtl_report_when(const struct dtl_finding *f);
/* The plan's precision as resolved, with where it came from ("bf16 (from ds.json:15:16)"),
 * or why it is not ("unresolved (\"auto\" at ...)", "unset (...)"), never a default that
 * the frameworks would not pick; into buf. */
const char *dtl_report_precision(const struct dtl_plan *p, char *buf, size_t size);

/* SARIF level / GitHub command of a severity: "error", "warning", "note" / "notice" */
const char *dtl_report_sarif_level(enum dtl_severity severity);
/* findings[].versions (json) and result.properties.versions (sarif): the finding's ranges */
void dtl_report_json_ranges(struct dtl_json *w, const struct dtl_finding *f);

#endif
