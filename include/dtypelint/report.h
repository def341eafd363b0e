/* SPDX-License-Identifier: MIT */
/* Output formats. Each writes one run's findings (possibly of several inputs) to a stream. */
#ifndef DTYPELINT_REPORT_H
#define DTYPELINT_REPORT_H

#include <stdio.h>

#include "dtypelint/rules.h"

/* One linted input: its simulation and findings. */
struct dtl_report_input {
	const struct dtl_sim *sim;
	const struct dtl_findings *findings;
};

struct dtl_report_counts {
	size_t findings, errors, warnings, infos;
};

void dtl_report_count(const struct dtl_report_input *inputs, size_t n,
                      struct dtl_report_counts *ret_counts);
/* gcc-style lines (DESIGN §6); returns 0 or -EIO */
int dtl_report_text(FILE *out, const struct dtl_report_input *inputs, size_t n);
/* one versioned JSON object (schema in dtypelint(1)) */
int dtl_report_json(FILE *out, const struct dtl_report_input *inputs, size_t n);

/* --trace: the dtype history of every tensor matching one of globs, stage by stage. */
int dtl_report_trace(FILE *out, const struct dtl_report_input *inputs, size_t n,
		     const char *const *globs, size_t glob_count);

/* Writes s as a JSON string literal (with quotes). */
void dtl_json_string(FILE *out, const char *s);

#endif
