/* SPDX-License-Identifier: MIT */
/* Unit tests of the reporters' helpers (GitHub escaping, lexical paths, fingerprints) and of
 * every reporter on findings whose optional fields are absent. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtl-test.h"
#include "dtypelint/report/report.h"

static char *escaped(const char *s, bool property)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	dtl_report_github_escape(out, s, property);
	fclose(out);
	return text;
}

START_TEST(github_escaping)
{
	/* actions/toolkit command.ts: '%' first, then CR and LF; properties also ':' and ',' */
	char *data = escaped("100% a:b,c\r\nd", false);
	char *property = escaped("100% a:b,c\r\nd", true);
	ck_assert_str_eq(data, "100%25 a:b,c%0D%0Ad");
	ck_assert_str_eq(property, "100%25 a%3Ab%2Cc%0D%0Ad");
	free(data);
	free(property);
}
END_TEST

START_TEST(lexical_paths)
{
	char buf[4096], cwd[4096];

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert(dtl_report_abspath("/a/./b/../c//d/", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "/a/c/d");
	ck_assert(dtl_report_abspath("/..", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "/");
	ck_assert(dtl_report_relpath("/a/b/c.yaml", "/a", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "b/c.yaml");
	ck_assert(dtl_report_relpath("/a/b", "/a/b", buf, sizeof(buf)));
	ck_assert_str_eq(buf, ".");
	ck_assert(dtl_report_relpath("/x/y", "/", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "x/y");
	/* outside the base: the absolute path, and false */
	ck_assert(!dtl_report_relpath("/ab/c", "/a", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "/ab/c");
	ck_assert(dtl_report_relpath("m.yaml", NULL, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "m.yaml");
	ck_assert(dtl_report_relpath_dots("/a/b/c.yaml", "/a/x/y", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "../../b/c.yaml");
	ck_assert(dtl_report_relpath_dots("/a/bc", "/a/b", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "../bc");
	ck_assert(dtl_report_relpath_dots("/a", "/a/b", buf, sizeof(buf)));
	ck_assert_str_eq(buf, "..");
	ck_assert(dtl_report_relpath_dots("/a/b", "/a/b", buf, sizeof(buf)));
	ck_assert_str_eq(buf, ".");
	ck_assert(!dtl_report_relpath_dots("/a/b/c.yaml", "/", buf, 4));
}
END_TEST

START_TEST(fingerprints)
{
	char a[17], b[17], c[17], d[17];

	/* stable across releases: baselines and code-scanning alerts depend on it */
	dtl_report_fingerprint("DT101", "m.yaml", "model.layers.0\nmodel.layers.0.w", 0, a);
	ck_assert_int_eq(strlen(a), 16);
	dtl_report_fingerprint("DT101", "m.yaml", "model.layers.0\nmodel.layers.0.w", 0, b);
	ck_assert_str_eq(a, b);
	dtl_report_fingerprint("DT101", "m.yaml", "model.layers.0\nmodel.layers.0.w", 1, c);
	ck_assert_str_ne(a, c);
	/* fields are separated: moving a character from one field to the next changes it */
	dtl_report_fingerprint("DT10", "1m.yaml", "model.layers.0\nmodel.layers.0.w", 0, d);
	ck_assert_str_ne(a, d);
}
END_TEST

/* One reporter's output for a finding of DT407 with fields set as the test asks. */
typedef int (*reporter_fn)(FILE *out, const struct dtl_report_input *inputs, size_t n);

static int sarif_plain(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_sarif(out, inputs, n, NULL);
}

static int github_plain(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_github(out, inputs, n, NULL);
}

static int gitlab_plain(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_gitlab(out, inputs, n, NULL);
}

static int json_lines(FILE *out, const struct dtl_report_input *inputs, size_t n)
{
	return dtl_report_json_lines(out, inputs, n);
}

static const struct {
	const char *name;
	reporter_fn fn;
} reporters[] = {
    {"text", dtl_report_text},         {"json", dtl_report_json},
    {"json-lines", json_lines},        {"sarif", sarif_plain},
    {"github", github_plain},          {"gitlab", gitlab_plain},
    {"markdown", dtl_report_markdown}, {"html", dtl_report_html},
};

static char *report_one(reporter_fn fn, struct dtl_finding *f)
{
	struct dtl_findings findings = {0};
	struct dtl_report_input input = {.findings = &findings, .file = "m.yaml"};
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(out);
	findings.items.items = f;
	findings.items.count = 1;
	findings.items.capacity = 1;
	ck_assert_int_eq(fn(out, &input, 1), 0);
	fclose(out);
	return text;
}

/* Every field a rule may leave NULL (the error's subject, its moment, the effect, the fix, the
 * note's file, the location's file) prints as nothing or as words, never as glibc's "(null)"
 * (which another libc turns into a crash) and never as a "raises" with no subject. */
START_TEST(absent_fields_print_no_null)
{
	const struct dtl_rule *rule = dtl_rule_find("DT407");
	struct dtl_note note = {.loc = {.file = NULL, .line = 0, .column = 0},
	                        .text = "a note",
	                        .tensor = DTL_NONE_INDEX};
	struct dtl_finding f = {.rule = rule,
	                        .severity = DTL_SEVERITY_ERROR,
	                        .message = "the message",
	                        .loc = {.file = "m.yaml", .line = 3, .column = 5},
	                        .error_text = "ValueError: no",
	                        .error_when = NULL,
	                        .error_versions = NULL,
	                        .effect = "the effect",
	                        .notes = &note,
	                        .note_count = 1};

	ck_assert_ptr_nonnull(rule);
	for (int variant = 0; variant < 3; variant++) {
		if (variant == 1) {
			f.error_text = NULL;
			f.loc.file = NULL;
		} else if (variant == 2) {
			f.effect = NULL;
			f.error_text = "ValueError: no";
			f.error_when = "at wrap time";
		}
		for (size_t i = 0; i < sizeof(reporters) / sizeof(reporters[0]); i++) {
			char *text = report_one(reporters[i].fn, &f);
			if (strstr(text, "(null)") || strstr(text, "  raises ") ||
			    strstr(text, "\n raises ") || strstr(text, "\nraises ") ||
			    strstr(text, ">raises ") || strstr(text, "> raises "))
				ck_abort_msg("%s, variant %d: %s", reporters[i].name, variant,
				             text);
			free(text);
		}
	}
}
END_TEST

/* every START_TEST above, registered by name (generated: tests/unit/registered.sh) */
#include "test-report-registered.h"

static void add_tests(TCase *tc)
{
	DTL_REGISTERED_TESTS(tc);
}

DTL_TEST_MAIN("report")
