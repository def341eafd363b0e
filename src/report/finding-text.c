/* SPDX-License-Identifier: MIT */
/* The words of a finding that every format shares, with the fields a rule may leave unset
 * (who raises the predicted error, and when) put in words instead of printed as NULL. */
#include <stdio.h>

#include "report-private.h"

const char *dtl_report_raiser(const struct dtl_finding *f)
{
	/* a rule names the framework and version that raises; one that names none still must
	 * not print an empty subject or glibc's "(null)" */
	return f->error_versions && *f->error_versions ? f->error_versions : "the framework";
}

const char *dtl_report_precision(const struct dtl_plan *p, char *buf, size_t size)
{
	const struct dtl_loc *at = &p->precision_auto_loc;

	if (p->precision != DTL_PRECISION_UNSET && p->precision_loc.file && p->precision_loc.line)
		snprintf(buf, size, "%s (from %s:%u:%u)", dtl_precision_name(p->precision),
		         p->precision_loc.file, p->precision_loc.line, p->precision_loc.column);
	else if (p->precision != DTL_PRECISION_UNSET)
		snprintf(buf, size, "%s", dtl_precision_name(p->precision));
	else if (at->file)
		snprintf(buf, size,
		         "unresolved (\"auto\" at %s:%u:%u: the HF Trainer fills it from "
		         "TrainingArguments bf16/fp16; give --precision or --trainer-args)",
		         at->file, at->line, at->column);
	else
		snprintf(buf, size, "unset (no input sets it: no mixed-precision cast)");
	return buf;
}

const char *dtl_report_when(const struct dtl_finding *f)
{
	return f->error_when && *f->error_when ? f->error_when : "at run time";
}
