/* The main() every Check suite shares: run one suite in fork mode, print
 * Check's summary line, exit non-zero on any failure. */
#ifndef TP_TEST_CHECK_MAIN_H
#define TP_TEST_CHECK_MAIN_H

#include <check.h>

static inline int tp_check_run(Suite *su)
{
	SRunner *sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
