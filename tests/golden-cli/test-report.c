/* SPDX-License-Identifier: MIT */
/* Unit tests of the reporters' helpers: GitHub escaping, lexical paths, fingerprints. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtl-test.h"
#include "dtypelint/report.h"

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

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, github_escaping);
	tcase_add_test(tc, lexical_paths);
	tcase_add_test(tc, fingerprints);
}

DTL_TEST_MAIN("report")
