/* SPDX-License-Identifier: MIT */
/* dtypelint's entry point: the only place that prints diagnostics and decides the exit code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dtypelint/compose.h"

enum {
	EXIT_CLEAN = 0,
	EXIT_FINDINGS = 1,
	EXIT_INPUT = 2,
	EXIT_INTERNAL = 3,
};

static int print_error(const struct dtl_error *error, int code)
{
	if (code == -ENOMEM) {
		fprintf(stderr, "dtypelint: out of memory\n");
		return EXIT_INTERNAL;
	}
	if (error->loc.line)
		fprintf(stderr, "%s:%u:%u: error: %s\n", error->loc.file, error->loc.line,
		        error->loc.column, error->message);
	else
		fprintf(stderr, "%s: error: %s\n", error->loc.file, error->message);
	return EXIT_INPUT;
}

static int lint_one(const char *path, const struct dtl_options *o,
                    const struct dtl_behavior_table *behaviors,
                    const struct dtl_rule_selection *selection, struct dtl_arena *arena,
                    struct dtl_report_input *ret_input, struct dtl_error *error)
{
	struct dtl_manifest *manifest = dtl_arena_alloc(arena, sizeof(*manifest));
	struct dtl_sim *sim = dtl_arena_alloc(arena, sizeof(*sim));
	struct dtl_findings *findings = dtl_arena_alloc(arena, sizeof(*findings));
	struct dtl_limits limits;
	struct dtl_plan plan;
	int r;

	if (!manifest || !sim || !findings)
		return -ENOMEM;
	dtl_limits_default(&limits);
	struct dtl_compose_inputs in = {.input = path, .plan_file = o->plan_file};
	r = dtl_compose(&in, arena, &limits, manifest, error);
	if (r < 0)
		return r;
	/* DESIGN §3: options win over every file */
	plan = manifest->plan;
	dtl_plan_overlay(&plan, &o->overrides);
	r = dtl_sim_run(sim, manifest, &plan, behaviors, arena, error);
	if (r < 0)
		return r;
	r = dtl_rules_run(sim, selection, findings, error);
	if (r < 0)
		return r;
	ret_input->sim = sim;
	ret_input->findings = findings;
	return 0;
}

static int run(struct dtl_options *o, struct dtl_arena *arena)
{
	struct dtl_behavior_table *behaviors = dtl_arena_alloc(arena, sizeof(*behaviors));
	struct dtl_rule_selection selection = {.select = o->select.items,
	                                       .select_count = o->select.count,
	                                       .ignore = o->ignore.items,
	                                       .ignore_count = o->ignore.count};
	struct dtl_report_input *inputs;
	struct dtl_error error = {0};
	struct dtl_report_counts counts;
	FILE *out = stdout;
	int r;

	if (o->explain) {
		r = dtl_cli_explain(stdout, o->explain);
		if (r == -ENOENT) {
			fprintf(stderr,
			        "dtypelint: --explain: '%s' names no rule (see --list-rules)\n",
			        o->explain);
			return EXIT_INPUT;
		}
		return r < 0 ? EXIT_INTERNAL : EXIT_CLEAN;
	}
	if (o->list_rules)
		return dtl_cli_list_rules(stdout, o->format) < 0 ? EXIT_INTERNAL : EXIT_CLEAN;
	if (!behaviors)
		return print_error(&error, -ENOMEM);
	r = dtl_behavior_table_load(behaviors, arena, &error);
	if (r < 0) {
		print_error(&error, r);
		return EXIT_INTERNAL;
	}
	r = dtl_rule_selection_validate(&selection, &error);
	if (r < 0) {
		fprintf(stderr, "dtypelint: %s\n", error.message);
		return EXIT_INPUT;
	}
	inputs = dtl_arena_calloc(arena, o->input_count, sizeof(*inputs));
	if (!inputs)
		return print_error(&error, -ENOMEM);
	for (size_t i = 0; i < o->input_count; i++) {
		r = lint_one(o->inputs[i], o, behaviors, &selection, arena, &inputs[i], &error);
		if (r < 0)
			return print_error(&error, r);
	}
	if (o->output) {
		out = fopen(o->output, "w");
		if (!out) {
			fprintf(stderr, "dtypelint: cannot write %s: %s\n", o->output,
			        strerror(errno));
			return EXIT_INPUT;
		}
	}
	r = o->format == DTL_FORMAT_JSON ? dtl_report_json(out, inputs, o->input_count)
	                                 : dtl_report_text(out, inputs, o->input_count);
	if (out != stdout && fclose(out) != 0)
		r = -EIO;
	if (r < 0) {
		fprintf(stderr, "dtypelint: cannot write the report\n");
		return EXIT_INTERNAL;
	}
	dtl_report_count(inputs, o->input_count, &counts);
	if (!o->quiet) {
		if (counts.findings)
			fprintf(stderr,
			        "Found %zu problem%s (%zu error%s, %zu warning%s, %zu info) in "
			        "%zu file%s.\n",
			        counts.findings, counts.findings == 1 ? "" : "s", counts.errors,
			        counts.errors == 1 ? "" : "s", counts.warnings,
			        counts.warnings == 1 ? "" : "s", counts.infos, o->input_count,
			        o->input_count == 1 ? "" : "s");
		else
			fprintf(stderr, "No problems found.\n");
	}
	for (size_t i = 0; i < o->input_count; i++) {
		const struct dtl_finding *f = inputs[i].findings->items.items;
		for (size_t k = 0; k < inputs[i].findings->items.count; k++)
			if (f[k].severity >= o->fail_on)
				return EXIT_FINDINGS;
	}
	return EXIT_CLEAN;
}

int main(int argc, char **argv)
{
	struct dtl_arena arena;
	struct dtl_options options;
	int r, status;

	dtl_arena_init(&arena);
	r = dtl_cli_parse(argc, argv, &arena, &options);
	if (r != 0) {
		dtl_arena_fini(&arena);
		return r > 0 ? EXIT_CLEAN : r == -ENOMEM ? EXIT_INTERNAL : EXIT_INPUT;
	}
	status = run(&options, &arena);
	dtl_arena_fini(&arena);
	return status;
}
