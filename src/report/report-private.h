/* SPDX-License-Identifier: MIT */
/* What the machine-readable reporters share: the findings of a run in report order, each
 * with its repo-relative path and fingerprint. */
#ifndef DTL_REPORT_PRIVATE_H
#define DTL_REPORT_PRIVATE_H

#include <stdio.h>

#include "dtypelint/report.h"

struct dtl_report_item {
	const struct dtl_report_input *input;
	const struct dtl_finding *finding;
	const char *path; /* relative to the working directory, or absolute when outside it */
	bool relative;
	char fingerprint[17];
};

/* Every finding of inputs in report order (input by input, in each input's order). Storage
 * comes from arena. Returns 0 or -ENOMEM. */
int dtl_report_items(struct dtl_arena *arena, const struct dtl_report_input *inputs, size_t n,
                     struct dtl_report_item **ret_items, size_t *ret_count);

/* SARIF level / GitHub command of a severity: "error", "warning", "note" / "notice" */
const char *dtl_report_sarif_level(enum dtl_severity severity);

#endif
