/* Capture ranges (collector/capture.h): actions of internal steps, nested
 * starts and unpaired stops ignored, and the program's step numbers with
 * the ranges' own boundaries taken out. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "collector/capture.h"

#include "test/unit/check_main.h"

/* The actions of steps 0..n-1 as letters: N none, R record, S record and
 * save (collector/schedule.h). */
static void expect_actions(const char *want)
{
	static const char letters[] = "NWRS";
	char got[64];
	size_t n = strlen(want);
	for (size_t i = 0; i < n; i++)
		got[i] = letters[tp_capture_action(i)];
	got[n] = '\0';
	ck_assert_str_eq(got, want);
}

START_TEST(test_ranges_nested_and_unpaired)
{
	tp_capture_reset();
	expect_actions("NNNN");
	ck_assert_int_eq(tp_capture_end(1), -ENOENT); /* a stop before any start */
	ck_assert_int_eq(tp_capture_begin(2), 0);
	ck_assert(tp_capture_is_open());
	expect_actions("NNRRRR"); /* open: records on */
	ck_assert_int_eq(tp_capture_begin(3), -EALREADY); /* nested start */
	ck_assert_int_eq(tp_capture_end(5), 0);
	ck_assert(!tp_capture_is_open());
	ck_assert_int_eq(tp_capture_end(6), -ENOENT); /* a second stop */
	expect_actions("NNRRSNNN");
	ck_assert_int_eq(tp_capture_begin(7), 0); /* left open, as at exit */
	expect_actions("NNRRSNNRRR");
}
END_TEST

START_TEST(test_one_step_range_and_display_steps)
{
	tp_capture_reset();
	/* Program steps 0 1 2 ...; a start in step 1 adds internal step 2 (still
	 * program step 1); a stop in step 2 (internal 3) adds internal 4. */
	ck_assert_int_eq(tp_capture_begin(2), 0);
	ck_assert_int_eq(tp_capture_end(4), 0);
	static const uint64_t want[] = { 0, 1, 1, 2, 2, 3, 4 };
	for (uint64_t s = 0; s < 7; s++)
		ck_assert_uint_eq(tp_capture_display_step(s), want[s]);
	/* A start and a stop with no program step between: one step, saved. */
	ck_assert_int_eq(tp_capture_begin(7), 0);
	ck_assert_int_eq(tp_capture_end(8), 0);
	ck_assert_int_eq(tp_capture_action(7), TP_ACT_RECORD_AND_SAVE);
	ck_assert_int_eq(tp_capture_action(8), TP_ACT_NONE);
	ck_assert_uint_eq(tp_capture_display_step(8), 4);
}
END_TEST

START_TEST(test_table_full)
{
	tp_capture_reset();
	for (uint64_t i = 0; i < TP_CAPTURE_MAX_RANGES; i++) {
		ck_assert_int_eq(tp_capture_begin(2 * i + 1), 0);
		ck_assert_int_eq(tp_capture_end(2 * i + 2), 0);
	}
	ck_assert_int_eq(tp_capture_begin(2 * TP_CAPTURE_MAX_RANGES + 1), -ENOSPC);
	ck_assert_int_eq(tp_capture_action(2 * TP_CAPTURE_MAX_RANGES - 1), TP_ACT_RECORD_AND_SAVE);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("capture");
	TCase *tc = tcase_create("capture");
	tcase_add_test(tc, test_ranges_nested_and_unpaired);
	tcase_add_test(tc, test_one_step_range_and_display_steps);
	tcase_add_test(tc, test_table_full);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
