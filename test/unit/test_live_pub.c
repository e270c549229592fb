/* collector/live_pub.h's Python stack publication (struct tp_live_py): what
 * the flush thread copies after pushes, pops, a resync and an "off", a
 * stack deeper than it keeps, and a two-thread stress in which every copy
 * the reader accepts is one stack the owner had (never a torn one). */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/live_pub.h"

#include "test/unit/check_main.h"

static struct tp_live_py P;

START_TEST(test_push_pop_sync_off)
{
	memset(&P, 0, sizeof(P));
	uint32_t out[TP_LIVE_PY], d = 99;
	/* Never synced: off, nothing to copy. */
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 0);
	uint32_t seed[2] = { 7, 8 };
	tp_live_py_sync(&P, seed, 2, 1);
	tp_live_py_push(&P, 2, 9);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 3);
	ck_assert_uint_eq(d, 3);
	ck_assert_uint_eq(out[0], 7);
	ck_assert_uint_eq(out[1], 8);
	ck_assert_uint_eq(out[2], 9);
	tp_live_py_pop(&P, 1);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 1);
	ck_assert_uint_eq(d, 1);
	ck_assert_uint_eq(out[0], 7);
	tp_live_py_push(&P, 1, 10);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 2);
	ck_assert_uint_eq(out[1], 10);
	/* The shadow no longer kept: nothing, not a stale stack. */
	tp_live_py_off(&P);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 0);
	tp_live_py_sync(&P, seed, 1, 1);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 1);
	/* Every thread's profile function replaced. */
	atomic_store(&tp_live_py_gone, 1);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 0);
	atomic_store(&tp_live_py_gone, 0);
	/* A write in progress (odd seq): left out this time. */
	atomic_fetch_add(&P.seq, 1);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), -1);
	atomic_fetch_add(&P.seq, 1);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), 1);
}
END_TEST

START_TEST(test_deeper_than_kept)
{
	memset(&P, 0, sizeof(P));
	uint32_t out[TP_LIVE_PY], d = 0;
	tp_live_py_sync(&P, NULL, 0, 1);
	for (uint32_t i = 0; i < TP_LIVE_PY + 5; i++)
		tp_live_py_push(&P, i, 1000 + i);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), TP_LIVE_PY);
	ck_assert_uint_eq(d, TP_LIVE_PY + 5);
	ck_assert_uint_eq(out[TP_LIVE_PY - 1], 1000 + TP_LIVE_PY - 1);
	tp_live_py_pop(&P, TP_LIVE_PY - 1);
	ck_assert_int_eq(tp_live_py_get(&P, out, &d), TP_LIVE_PY - 1);
	ck_assert_uint_eq(out[TP_LIVE_PY - 2], 1000 + TP_LIVE_PY - 2);
}
END_TEST

/* The stress: the owner walks its stack up and down; each entry's value
 * holds its own push's number (high 16 bits) and its parent's (low 16), so
 * a copy mixing two stacks breaks the chain. */
#define STRESS_NS 400000000LL /* the reader's time: both threads busy */
static _Atomic int stress_done;

static void *stress_owner(void *arg)
{
	(void)arg;
	uint32_t gen[64] = { 0 }, depth = 0, n = 1, rnd = 12345, goal = 30;
	tp_live_py_sync(&P, NULL, 0, 1);
	while (!atomic_load_explicit(&stress_done, memory_order_relaxed)) {
		rnd = rnd * 1103515245u + 12345u;
		/* Up to a random height, then down to a low one at once (an
		 * exception's unwind, a return to the loop): a reader copying
		 * the high stack meanwhile would mix it with the next one. */
		if (depth < goal) {
			uint32_t parent = depth ? gen[depth - 1] : 0;
			gen[depth] = n++ & 0xffff;
			if (!gen[depth])
				gen[depth] = n++ & 0xffff;
			tp_live_py_push(&P, depth, gen[depth] << 16 | parent);
			depth++;
		} else {
			depth = (rnd >> 16) % 8;
			tp_live_py_pop(&P, depth);
			goal = 24 + (rnd >> 20) % 16;
		}
	}
	return NULL;
}

START_TEST(test_stress_no_torn_copy)
{
	memset(&P, 0, sizeof(P));
	atomic_store(&stress_done, 0);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, stress_owner, NULL), 0);
	uint64_t ok = 0, busy = 0, torn = 0;
	uint32_t out[TP_LIVE_PY], d;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t k = 0;; k++) {
		if (!(k & 1023)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000LL + t.tv_nsec - t0.tv_nsec > STRESS_NS)
				break;
		}
		int n = tp_live_py_get(&P, out, &d);
		if (n < 0) {
			busy++;
			continue;
		}
		if (n == 0)
			continue;
		ck_assert_uint_eq((uint32_t)n, d);
		int good = (out[0] & 0xffff) == 0;
		for (int i = 1; i < n; i++)
			good &= (out[i] & 0xffff) == out[i - 1] >> 16;
		ok += good;
		torn += !good;
	}
	atomic_store(&stress_done, 1);
	pthread_join(th, NULL);
	ck_assert_msg(torn == 0, "%llu torn copies accepted (%llu good, %llu left out)",
		      (unsigned long long)torn, (unsigned long long)ok, (unsigned long long)busy);
	ck_assert_msg(ok > 100, "only %llu copies accepted (%llu left out)", (unsigned long long)ok,
		      (unsigned long long)busy);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live_pub");
	TCase *tc = tcase_create("python stack");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_push_pop_sync_off);
	tcase_add_test(tc, test_deeper_than_kept);
	tcase_add_test(tc, test_stress_no_torn_copy);
	suite_add_tcase(s, tc);
	return tp_check_run(s);
}
