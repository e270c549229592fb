/* The hot path's state word (collector/hot.h; collector/control.c writes it): the TP_STATE_FULL bit
 * follows the OR of its reasons, and survives step transitions, also when
 * both change at once from two threads. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>

#include "collector/control.h"
#include "collector/schedule.h"

#include "test/unit/check_main.h"

static uint64_t state(void)
{
	return atomic_load(&tp_state);
}

/* A schedule that never records, so that steps write no ProfilerStep
 * records (nothing here drains a ring). */
static void init_idle(void)
{
	struct tp_schedule s;
	char err[200];
	ck_assert_int_eq(tp_schedule_parse("skip_first=1000000000,active=1", &s, err, sizeof(err)), 0);
	tp_control_init(&s);
}

START_TEST(test_full_bit_is_the_or_of_its_reasons)
{
	init_idle();
	ck_assert_uint_eq(state() & TP_STATE_FULL, 0);
	tp_control_set_full(TP_FULL_CLOCK, 1);
	ck_assert_uint_eq(state() & TP_STATE_FULL, TP_STATE_FULL);
	tp_control_set_full(TP_FULL_STACK, 1);
	tp_control_set_full(TP_FULL_CLOCK, 0);
	ck_assert_uint_eq(state() & TP_STATE_FULL, TP_STATE_FULL);
	tp_control_set_full(TP_FULL_STACK, 0);
	ck_assert_uint_eq(state() & TP_STATE_FULL, 0);
	/* Clearing a reason that was never set changes nothing. */
	tp_control_set_full(TP_FULL_CUPTI, 0);
	ck_assert_uint_eq(state() & TP_STATE_FULL, 0);
}
END_TEST

START_TEST(test_init_and_steps_keep_the_full_bit)
{
	/* A reason set before init (the constructor sets the clock and stack
	 * reasons first) is in the initial state. */
	tp_control_set_full(TP_FULL_STACK, 1);
	init_idle();
	ck_assert_uint_eq(state() & TP_STATE_FULL, TP_STATE_FULL);
	for (int i = 0; i < 5; i++)
		tp_control_step();
	ck_assert_uint_eq(tp_control_current_step(), 5);
	ck_assert_uint_eq(state() & TP_STATE_FULL, TP_STATE_FULL);
	ck_assert_uint_eq(state() & TP_STATE_RECORDING, 0);
	tp_control_set_full(TP_FULL_STACK, 0);
	tp_control_step();
	ck_assert_uint_eq(tp_control_current_step(), 6);
	ck_assert_uint_eq(state() & TP_STATE_FULL, 0);
}
END_TEST

#define RACE_N 200000

static void *toggler(void *arg)
{
	(void)arg;
	for (int i = 0; i < RACE_N; i++)
		tp_control_set_full(TP_FULL_CUPTI, i & 1);
	/* Ends with the reason set. */
	tp_control_set_full(TP_FULL_CUPTI, 1);
	return NULL;
}

static void *stepper(void *arg)
{
	(void)arg;
	for (int i = 0; i < RACE_N; i++)
		tp_control_step();
	return NULL;
}

START_TEST(test_racing_steps_and_reasons_lose_nothing)
{
	init_idle();
	uint64_t step0 = tp_control_current_step();
	pthread_t a, b;
	pthread_create(&a, NULL, toggler, NULL);
	pthread_create(&b, NULL, stepper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* Every step counted once, and the bit matches the final reasons. */
	ck_assert_uint_eq(tp_control_current_step(), step0 + RACE_N);
	ck_assert_uint_eq(state() & TP_STATE_FULL, TP_STATE_FULL);
	tp_control_set_full(TP_FULL_CUPTI, 0);
	ck_assert_uint_eq(state() & TP_STATE_FULL, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("state");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_full_bit_is_the_or_of_its_reasons);
	tcase_add_test(tc, test_init_and_steps_keep_the_full_bit);
	tcase_add_test(tc, test_racing_steps_and_reasons_lose_nothing);
	suite_add_tcase(s, tc);
	return tp_check_run(s);
}
