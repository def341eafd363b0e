/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the whole pipeline from bytes to findings, as src/cli/main.c runs it: a manifest
 * (JSON when the first non-blank byte is '{' or '[', else YAML), the simulation, every rule,
 * and the text and JSON reports (to /dev/null). The manifest is also loaded with every tensor
 * entry read through the document's nodes, and must come out the same as with the plain
 * entries read straight from the text (tests/manifest-twins.h, src/model/tensor-text.c).
 */
#include <stdio.h>

#include "dtypelint/dtypelint.h"
#include "dtypelint/report.h"
#include "fuzz.h"
#include "../manifest-twins.h"
#include "model/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* loaded once: the embedded version table and a sink for the reports */
	static struct dtl_arena behaviors_arena;
	static struct dtl_behavior_table behaviors;
	static FILE *sink;
	struct dtl_rule_selection selection = {0};
	struct dtl_source source;
	struct dtl_manifest manifest;
	struct dtl_findings findings = {0};
	struct dtl_limits limits;
	struct dtl_arena arena;
	struct dtl_error error = {0};
	struct dtl_sim sim;
	int r;

	if (!sink) {
		dtl_arena_init(&behaviors_arena);
		if (dtl_behavior_table_load(&behaviors, &behaviors_arena, &error) < 0)
			abort();
		sink = fopen("/dev/null", "w");
		if (!sink)
			abort();
	}
	dtl_limits_default(&limits);
	dtl_arena_init(&arena);
	if (dtl_source_init_mem(&source, "fuzz-manifest", (const char *)data, size) < 0)
		return 0;
	r = dtl_manifest_load_source(&source, &arena, &limits, &manifest, &error);
	char why[1024];
	int twin_r;
	if (dtl_twins_compare(&source, &limits, &twin_r, why, sizeof(why)) == 0) {
		fprintf(stderr, "text and nodes differ: %s\n", why);
		abort();
	}
	dtl_source_fini(&source);
	if (r == 0)
		r = dtl_sim_run(&sim, &manifest, &manifest.plan, &behaviors, &arena, &error);
	if (r == 0)
		r = dtl_rules_run(&sim, &selection, NULL, &findings, &error);
	dtl_fuzz_check_error(r, &error);
	if (r == 0) {
		struct dtl_input_view view;
		if (dtl_input_view_init(&view, &sim, &findings, &arena) < 0)
			abort();
		struct dtl_report_input input = {.view = &view, .findings = &findings};
		if (dtl_report_text(sink, &input, 1) < 0 || dtl_report_json(sink, &input, 1) < 0)
			abort();
	}
	dtl_arena_fini(&arena);
	return 0;
}
