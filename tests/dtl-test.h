/* SPDX-License-Identifier: MIT */
/*
 * The thin layer every Check runner goes through, so that Check stays swappable
 * (https://libcheck.github.io/check/; meson runs each runner as a test,
 * https://mesonbuild.com/Unit-tests.html). A runner defines its tests with START_TEST/END_TEST
 * and a `static void add_tests(TCase *tc)` that calls DTL_REGISTERED_TESTS(tc), from the header
 * tests/unit/registered.sh generates from the runner's START_TESTs at build time (a test is
 * registered by being written), then uses DTL_TEST_MAIN("suite name").
 */
#ifndef DTL_TEST_H
#define DTL_TEST_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

/* Makes a fresh directory "$TMPDIR/<prefix>-XXXXXX" (/tmp only when TMPDIR is unset or empty)
 * in dir[size], for the files one test writes; dtl_test_rmtree() removes it again. */
static inline void dtl_test_mkdtemp(char *dir, size_t size, const char *prefix)
{
	const char *base = getenv("TMPDIR");
	int n = snprintf(dir, size, "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix);

	ck_assert_msg(n > 0 && (size_t)n < size, "temporary directory name too long");
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s failed", dir);
}

static inline int dtl_test_remove_entry(const char *path, const struct stat *st, int type,
                                        struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

/* Removes dir and everything under it; links are removed, never followed. */
static inline void dtl_test_rmtree(const char *dir)
{
	if (dir && *dir)
		nftw(dir, dtl_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define DTL_TEST_MAIN(suite_name)                                                                  \
	int main(void)                                                                             \
	{                                                                                          \
		Suite *suite = suite_create(suite_name);                                           \
		TCase *tc = tcase_create(suite_name);                                              \
		tcase_set_timeout(tc, 60);                                                         \
		add_tests(tc);                                                                     \
		suite_add_tcase(suite, tc);                                                        \
		SRunner *runner = srunner_create(suite);                                           \
		srunner_run_all(runner, CK_ENV);                                                   \
		int failed = srunner_ntests_failed(runner);                                        \
		srunner_free(runner);                                                              \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;                                  \
	}

#endif
