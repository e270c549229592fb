/* Schedule: torch.profiler.schedule's actions, torch's action table, and the
 * parser's errors.  Expected tables are written out by hand from torch's
 * definition; test/integration/core_schedule.sh checks many more parameter
 * sets end to end against an independent Python transcription. */
#include <check.h>
#include <string.h>

#include "collector/schedule.h"

#include "test/unit/check_main.h"

static void expect_actions(const char *spec, const char *want)
{
	struct tp_schedule s;
	char err[200];
	ck_assert_msg(tp_schedule_parse(spec, &s, err, sizeof(err)) == 0, "%s: %s", spec, err);
	static const char letters[] = "NWRS";
	char got[64];
	size_t n = strlen(want);
	for (size_t i = 0; i < n; i++)
		got[i] = letters[tp_schedule_action(&s, i)];
	got[n] = '\0';
	ck_assert_msg(!strcmp(got, want), "%s: got %s, want %s", spec, got, want);
}

START_TEST(test_actions)
{
	/* N = NONE, W = WARMUP, R = RECORD, S = RECORD_AND_SAVE */
	expect_actions("wait=1,warmup=1,active=2", "NWRSNWRSNWRS");
	expect_actions("wait=1,warmup=1,active=2,repeat=1", "NWRSNNNNNNNN");
	expect_actions("skip_first=2,wait=1,warmup=0,active=1", "NNNSNSNS");
	expect_actions("active=1", "SSSS");
	expect_actions("active=3,repeat=2", "RRSRRSNNN");
	expect_actions("warmup=2,active=1,repeat=2,skip_first=1", "NWWSWWSNNN");
}
END_TEST

START_TEST(test_default_schedule_records_every_step)
{
	struct tp_schedule s = { 0 };
	for (uint64_t i = 0; i < 100; i += 7)
		ck_assert_int_eq(tp_schedule_action(&s, i), TP_ACT_RECORD);
}
END_TEST

START_TEST(test_transitions)
{
	/* Rows of torch's action_map. */
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_NONE, TP_ACT_NONE), 0);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_NONE, TP_ACT_WARMUP), 0);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_NONE, TP_ACT_RECORD), TP_TR_START);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_NONE, TP_ACT_RECORD_AND_SAVE), TP_TR_START);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_WARMUP, TP_ACT_NONE), TP_TR_WARN);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_WARMUP, TP_ACT_RECORD), TP_TR_START);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_WARMUP, TP_ACT_EXIT), 0);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD, TP_ACT_NONE), TP_TR_WARN | TP_TR_STOP);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD, TP_ACT_WARMUP),
			  TP_TR_WARN | TP_TR_STOP);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD, TP_ACT_RECORD), 0);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD, TP_ACT_RECORD_AND_SAVE), 0);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD, TP_ACT_EXIT), TP_TR_STOP | TP_TR_SAVE);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD_AND_SAVE, TP_ACT_NONE),
			  TP_TR_STOP | TP_TR_SAVE);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD_AND_SAVE, TP_ACT_WARMUP),
			  TP_TR_STOP | TP_TR_SAVE);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD_AND_SAVE, TP_ACT_RECORD),
			  TP_TR_STOP | TP_TR_SAVE | TP_TR_START);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD_AND_SAVE, TP_ACT_RECORD_AND_SAVE),
			  TP_TR_STOP | TP_TR_SAVE | TP_TR_START);
	ck_assert_uint_eq(tp_schedule_transition(TP_ACT_RECORD_AND_SAVE, TP_ACT_EXIT),
			  TP_TR_STOP | TP_TR_SAVE);
}
END_TEST

static void expect_error(const char *spec, const char *fragment)
{
	struct tp_schedule s;
	char err[300];
	ck_assert_msg(tp_schedule_parse(spec, &s, err, sizeof(err)) != 0, "'%s' accepted", spec);
	ck_assert_msg(strstr(err, fragment) != NULL, "'%s': message '%s' lacks '%s'", spec, err,
		      fragment);
}

START_TEST(test_parse_errors)
{
	expect_error("", "empty schedule");
	expect_error("active=0", "active must be > 0");
	expect_error("wait=1", "'active' is required");
	expect_error("wait=-1,active=1", "must be a non-negative integer");
	expect_error("wait=x,active=1", "must be a non-negative integer");
	expect_error("wait,active=1", "is not key=value");
	expect_error("foo=1,active=1", "unknown key 'foo'");
	expect_error("active=1,active=2", "given twice");
	expect_error("active=1,", "trailing ','");
	expect_error("active=", "must be a non-negative integer");
	expect_error("active=99999999999999999999", "must be a non-negative integer");
}
END_TEST

int main(void)
{
	Suite *su = suite_create("schedule");
	TCase *tc = tcase_create("schedule");
	tcase_add_test(tc, test_actions);
	tcase_add_test(tc, test_default_schedule_records_every_step);
	tcase_add_test(tc, test_transitions);
	tcase_add_test(tc, test_parse_errors);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
