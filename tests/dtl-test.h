/* SPDX-License-Identifier: MIT */
/*
 * The thin layer every Check runner goes through, so that Check stays swappable
 * (facts/ecosystem-and-style.md §1.15). A runner defines its tests with START_TEST/END_TEST
 * and a `static void add_tests(TCase *tc)`, then uses DTL_TEST_MAIN("suite name").
 */
#ifndef DTL_TEST_H
#define DTL_TEST_H

#include <check.h>
#include <stdlib.h>

#define DTL_TEST_MAIN(suite_name)                                                                  \
	int main(void)                                                                             \
	{                                                                                          \
		Suite *suite = suite_create(suite_name);                                           \
		TCase *tc = tcase_create("all");                                                   \
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
