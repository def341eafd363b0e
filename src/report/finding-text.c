/* SPDX-License-Identifier: MIT */
/* The words of a finding that every format shares, with the fields a rule may leave unset
 * (who raises the predicted error, and when) put in words instead of printed as NULL. */
#include "report-private.h"

const char *dtl_report_raiser(const struct dtl_finding *f)
{
	/* a rule names the framework and version that raises; one that names none still must
	 * not print an empty subject or glibc's "(null)" */
	return f->error_versions && *f->error_versions ? f->error_versions : "the framework";
}

const char *dtl_report_when(const struct dtl_finding *f)
{
	return f->error_when && *f->error_when ? f->error_when : "at run time";
}
