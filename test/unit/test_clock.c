/* Unit tests for common/clock.c: converting ticks to ns is a function of the
 * ticks alone (a tick converted before and after a recalibration gives the
 * same ns), and it never runs backwards across a recalibration. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "common/clock.h"

#include "test/unit/check_main.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* A step's end and the next step's start are one tick, converted a step
 * apart; a marker's start is converted when its finish comes.  With a rate
 * re-fitted through the start-up point, every earlier tick moved by tens of
 * ns after each recalibration, and back-to-back slices overlapped. */
START_TEST(test_same_tick_same_ns)
{
	if (tp_clock_init(TP_CLOCK_TSC) != TP_CLOCK_TSC) {
		fprintf(stderr, "SKIP: no invariant TSC here; the conversion is the identity\n");
		return;
	}
	tp_clock_recalibrate();
	enum { N = 40 };
	uint64_t ticks[N], ns[N];
	int moved = 0, backwards = 0;
	for (int i = 0; i < N; i++) {
		ticks[i] = tp_clock_now();
		ns[i] = tp_clock_to_ns(ticks[i]);
		/* Each recalibration has a longer interval, so a new rate. */
		sleep_ms(5);
		tp_clock_recalibrate();
		for (int k = 0; k <= i; k++) {
			uint64_t again = tp_clock_to_ns(ticks[k]);
			if (again != ns[k] && moved++ < 3)
				fprintf(stderr, "tick %d: %llu ns, then %llu ns\n", k,
					(unsigned long long)ns[k], (unsigned long long)again);
		}
		uint64_t now = tp_clock_to_ns(tp_clock_now());
		if (now < ns[i])
			backwards++;
	}
	ck_assert_msg(moved == 0, "%d conversions of an earlier tick changed", moved);
	ck_assert_int_eq(backwards, 0);
	/* And it stays close to CLOCK_MONOTONIC. */
	int64_t d = (int64_t)tp_clock_to_ns(tp_clock_now()) - (int64_t)tp_clock_monotonic_ns();
	ck_assert_msg(d > -1000000 && d < 1000000, "%lld ns off CLOCK_MONOTONIC", (long long)d);
}
END_TEST

static Suite *clock_suite(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_same_tick_same_ns);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(clock_suite());
}
