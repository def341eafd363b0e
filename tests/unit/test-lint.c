/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the lint library (include/dtypelint/lint/lint.h): a lint run through
 * dtl_lint_run() prints nothing and returns the findings, and dtl_lint_keep() copies every
 * byte the reports read, so that the arena the input was linted in can be freed (under ASan a
 * pointer left into it is a use after free). The command line keeps results only when it
 * lints several inputs, so that the goldens of one input do not reach dtl_lint_keep(): every
 * report format is compared here.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtl-test.h"
#include "dtypelint/cli/dtypelint.h"

static struct dtl_arena arena;
static struct dtl_behavior_table behaviors;
static struct dtl_lint_options options;

static void setup(void)
{
	struct dtl_error error = {0};

	dtl_arena_init(&arena);
	ck_assert_int_eq(dtl_behavior_table_load(&behaviors, &arena, &error), 0);
	options = (struct dtl_lint_options){.behaviors = &behaviors};
}

static void teardown(void)
{
	dtl_arena_fini(&arena);
}

/* Lints path with no config into into; fails the test on an error */
static void lint(const char *path, struct dtl_arena *into, struct dtl_lint_result *ret)
{
	struct dtl_lint_job job = {.input = path};
	struct dtl_lint_settings settings;
	struct dtl_error error = {0};

	ck_assert_int_eq(dtl_lint_settings_init(&settings, NULL, &options, into), 0);
	ck_assert_msg(dtl_lint_run(&job, &settings, into, ret, &error) == 0, "%s: %s", path,
	              error.message);
}

/* Every report that reads a kept result (all but HTML, --trace, --show-plan and --memory), as
 * one string (malloc'ed) */
static char *reports(const struct dtl_lint_result *result, const char *path)
{
	struct dtl_report_input input = {
	    .view = result->view, .findings = result->findings, .file = path, .setup = "s"};
	struct dtl_report_options ro = {.verbose = true};
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(dtl_report_json(out, &input, 1), 0);
	ck_assert_int_eq(dtl_report_json_lines(out, &input, 1), 0);
	ck_assert_int_eq(dtl_report_text_styled(out, &input, 1, &ro), 0);
	ck_assert_int_eq(dtl_report_concise(out, &input, 1, &ro), 0);
	ck_assert_int_eq(dtl_report_sarif(out, &input, 1, &ro), 0);
	ck_assert_int_eq(dtl_report_github(out, &input, 1, &ro), 0);
	ck_assert_int_eq(dtl_report_gitlab(out, &input, 1, &ro), 0);
	ck_assert_int_eq(dtl_report_markdown(out, &input, 1), 0);
	ck_assert_int_eq(dtl_report_statistics(out, &input, 1, true), 0);
	ck_assert_int_eq(dtl_report_versions_line(out, &input, 1), 0);
	fclose(out);
	return text;
}

/* Runs job with both standard streams sent to a file; returns how many bytes it printed */
static off_t lint_silently(const struct dtl_lint_job *job, struct dtl_lint_result *ret)
{
	struct dtl_lint_settings settings;
	struct dtl_error error = {0};
	char path[] = "/tmp/dtl-lint-out-XXXXXX";
	int fd = mkstemp(path), saved_out = dup(1), saved_err = dup(2), r;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dtl_lint_settings_init(&settings, NULL, &options, &arena), 0);
	fflush(stdout);
	fflush(stderr);
	dup2(fd, 1);
	dup2(fd, 2);
	r = dtl_lint_run(job, &settings, &arena, ret, &error);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	off_t printed = lseek(fd, 0, SEEK_END);
	close(fd);
	close(saved_out);
	close(saved_err);
	unlink(path);
	ck_assert_msg(r == 0, "%s", error.message);
	return printed;
}

START_TEST(run_finds_and_prints_nothing)
{
	struct dtl_lint_job job = {.input = DTL_SOURCE_ROOT "/fixtures/rules/dt101-fires.yaml"};
	struct dtl_lint_result result;

	ck_assert_int_eq(lint_silently(&job, &result), 0);
	ck_assert_ptr_nonnull(result.view);
	ck_assert_ptr_nonnull(result.sim);
	const struct dtl_finding *f = result.findings->items.items;
	bool dt101 = false;
	for (size_t i = 0; i < result.findings->items.count; i++)
		dt101 = dt101 || strcmp(f[i].rule->id, "DT101") == 0;
	ck_assert_msg(dt101, "no DT101 among %zu findings", result.findings->items.count);
	ck_assert_int_eq(result.fail_on, DTL_SEVERITY_WARNING);
}
END_TEST

/* The importers' warnings come back for the caller to say; the lint says nothing */
START_TEST(run_returns_warnings_unprinted)
{
	struct dtl_lint_job job = {.input = DTL_SOURCE_ROOT "/fixtures/import/tiny-qwen2",
	                           .launch_file = DTL_SOURCE_ROOT "/fixtures/launch/unresolved.sh"};
	struct dtl_lint_result result;

	ck_assert_int_eq(lint_silently(&job, &result), 0);
	ck_assert_ptr_nonnull(result.warnings);
	ck_assert_uint_gt(result.warnings->count, 0);
}
END_TEST

/* Every rule fixture and example that lints: the reports of its kept result, once the arena
 * it was linted in is freed, are those of the result itself */
START_TEST(keep_outlives_the_lint_arena)
{
	glob_t g;
	size_t compared = 0;

	ck_assert_int_eq(glob(DTL_SOURCE_ROOT "/fixtures/rules/*", 0, NULL, &g), 0);
	ck_assert_int_eq(glob(DTL_SOURCE_ROOT "/fixtures/examples/*", GLOB_APPEND, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		struct dtl_lint_job job = {.input = g.gl_pathv[i]};
		struct dtl_lint_settings settings;
		struct dtl_lint_result result, kept;
		struct dtl_error error = {0};
		struct dtl_arena scratch;
		dtl_arena_init(&scratch);
		ck_assert_int_eq(dtl_lint_settings_init(&settings, NULL, &options, &arena), 0);
		if (dtl_lint_run(&job, &settings, &scratch, &result, &error) < 0) {
			dtl_arena_fini(&scratch); /* not a manifest (a file another names) */
			continue;
		}
		char *before = reports(&result, g.gl_pathv[i]);
		ck_assert_int_eq(dtl_lint_keep(&result, &arena, &kept), 0);
		/* scribbled over, then freed: nothing kept may point into it */
		dtl_arena_reset(&scratch);
		lint(DTL_SOURCE_ROOT "/fixtures/rules/dt801-silent.yaml", &scratch, &result);
		dtl_arena_fini(&scratch);
		ck_assert_ptr_null(kept.sim);
		char *after = reports(&kept, g.gl_pathv[i]);
		ck_assert_msg(strcmp(before, after) == 0, "%s: the kept reports differ",
		              g.gl_pathv[i]);
		free(before);
		free(after);
		compared++;
	}
	globfree(&g);
	ck_assert_uint_ge(compared, 40);
}
END_TEST

/* An input that cannot be read is its DT001 finding, failing at any --fail-on */
START_TEST(input_error_is_dt001)
{
	struct dtl_lint_job job = {.input = DTL_SOURCE_ROOT "/fixtures/no-such-manifest.yaml"};
	struct dtl_lint_settings settings;
	struct dtl_lint_result result;
	struct dtl_error error = {0};

	ck_assert_int_eq(dtl_lint_settings_init(&settings, NULL, &options, &arena), 0);
	ck_assert_int_lt(dtl_lint_run(&job, &settings, &arena, &result, &error), 0);
	ck_assert_int_eq(dtl_lint_input_error(job.input, &error, &arena, &result), 0);
	ck_assert_ptr_null(result.view);
	ck_assert_uint_eq(result.findings->items.count, 1);
	const struct dtl_finding *f = result.findings->items.items;
	ck_assert_str_eq(f->rule->id, "DT001");
	ck_assert_int_eq(result.fail_on, DTL_SEVERITY_ERROR);
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-lint-registered.h"

static void add_tests(TCase *tc)
{
	tcase_add_checked_fixture(tc, setup, teardown);
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("lint")
