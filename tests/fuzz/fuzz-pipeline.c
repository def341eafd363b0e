/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the whole pipeline from bytes to findings through the lint library, as the
 * command line runs it (dtl_lint_run, include/dtypelint/lint/lint.h): a manifest (JSON when the
 * first non-blank byte is '{' or '[', else YAML) composed, simulated at every version span and
 * trainer, judged by every rule and its suppressions, then the text and JSON reports (to
 * /dev/null). The manifest is also loaded with every tensor entry read through the document's
 * nodes, and must come out the same as with the plain entries read straight from the text
 * (tests/manifest-twins.h, src/model/tensor-text.c).
 */
#include <stdio.h>

#include "dtypelint/cli/dtypelint.h"
#include "dtypelint/lint/lint.h"
#include "dtypelint/report/report.h"
#include "fuzz.h"
#include "../manifest-twins.h"
#include "model/load.h"

/* The manifest is named in a folder that does not exist: no dependency file beside it, and no
 * file it names, is read from the machine the fuzzer runs on. */
#define FUZZ_NAME "/nonexistent-dtypelint-fuzz/fuzz-manifest"

/* Aborts unless the twin loads of source agree */
static void check_twins(const struct dtl_source *source, const struct dtl_limits *limits)
{
	char why[1024];
	int twin_r;

	if (dtl_twins_compare(source, limits, &twin_r, why, sizeof(why)) == 0) {
		fprintf(stderr, "text and nodes differ: %s\n", why);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* loaded once: the embedded version table and a sink for the reports */
	static struct dtl_arena behaviors_arena;
	static struct dtl_behavior_table behaviors;
	static FILE *sink;
	struct dtl_lint_options options = {.behaviors = &behaviors};
	struct dtl_lint_job job = {.input = FUZZ_NAME};
	struct dtl_lint_settings settings;
	struct dtl_lint_result result;
	struct dtl_source source;
	struct dtl_arena arena;
	struct dtl_error error = {0};
	int r;

	if (!sink) {
		dtl_arena_init(&behaviors_arena);
		if (dtl_behavior_table_load(&behaviors, &behaviors_arena, &error) < 0)
			abort();
		sink = fopen("/dev/null", "w");
		if (!sink)
			abort();
	}
	if (dtl_source_init_mem(&source, FUZZ_NAME, (const char *)data, size) < 0)
		return 0;
	dtl_arena_init(&arena);
	if (dtl_lint_settings_init(&settings, NULL, &options, &arena) < 0)
		abort();
	check_twins(&source, &settings.limits);
	settings.stdin_source = &source; /* read already, as standard input is */
	r = dtl_lint_run(&job, &settings, &arena, &result, &error);
	dtl_source_fini(&source);
	dtl_fuzz_check_error(r, &error);
	if (r == 0) {
		struct dtl_report_input input = {.view = result.view, .findings = result.findings};
		if (dtl_report_text(sink, &input, 1) < 0 || dtl_report_json(sink, &input, 1) < 0)
			abort();
	}
	dtl_arena_fini(&arena);
	return 0;
}
