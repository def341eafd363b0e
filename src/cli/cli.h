/* SPDX-License-Identifier: MIT */
#ifndef DTL_CLI_H
#define DTL_CLI_H

#include <stdio.h>

#include "dtypelint/dtypelint.h"

enum dtl_format {
	DTL_FORMAT_TEXT,
	DTL_FORMAT_JSON,
};

struct dtl_options {
	const char **inputs;
	size_t input_count;
	const char *plan_file;
	struct dtl_plan overrides; /* --strategy, --precision, --with */
	enum dtl_format format;
	const char *output;
	struct dtl_vec select, ignore; /* const char * */
	enum dtl_severity fail_on;
	bool quiet;
	bool list_rules;
	const char *explain;
};

/* Parses argv; returns 0, 1 when the program should exit 0 at once (--help, --version), or
 * -EINVAL (a message is printed). */
int dtl_cli_parse(int argc, char **argv, struct dtl_arena *arena, struct dtl_options *options);
int dtl_cli_explain(FILE *out, const char *rule);
int dtl_cli_list_rules(FILE *out, enum dtl_format format);

#endif
