/* collector/live_pub.h's Python stack publication (struct tp_live_py): what
 * the flush thread copies after pushes, pops, a resync and an "off", a
 * stack deeper than it keeps, and a two-thread stress in which every copy
 * the reader accepts is one stack the owner had (never a torn one).  The
 * NVTX start/end ranges' table (struct tp_live_range): starts, ends, the
 * starting thread's filter, a full table, and a stress in which every range
 * the reader accepts has its own name. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
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

/* A range's payload, as the flush thread copies it (unused here). */
static struct tp_live_payload PL;

START_TEST(test_ranges)
{
	memset(tp_live_ranges, 0, sizeof(tp_live_ranges));
	char name[TP_LIVE_NAME_BYTES];
	uint64_t start, id;
	tp_live_range_start(5, 100, "epoch", 5, 42, 0, 0, NULL, 0);
	tp_live_range_start(6, 200, "other", 5, 43, 0, 0, NULL, 0);
	int seen = 0;
	for (int i = 0; i < TP_LIVE_RANGES; i++)
		if (tp_live_range_get(i, 100, name, &start, &PL, &id) == 0) {
			ck_assert_str_eq(name, "epoch");
			ck_assert_uint_eq(start, 42);
			ck_assert_uint_eq(id, 5);
			seen++;
		}
	ck_assert_int_eq(seen, 1);
	tp_live_range_end(5);
	for (int i = 0; i < TP_LIVE_RANGES; i++)
		ck_assert_int_eq(tp_live_range_get(i, 100, name, &start, &PL, &id), -1);
	/* A full table: the range past it is not published, the others are. */
	for (uint64_t r = 10; r < 10 + TP_LIVE_RANGES; r++)
		tp_live_range_start(r, 100, "many", 4, r, 0, 0, NULL, 0);
	seen = 0;
	for (int i = 0; i < TP_LIVE_RANGES; i++)
		seen += tp_live_range_get(i, 100, name, &start, &PL, &id) == 0;
	ck_assert_int_eq(seen, TP_LIVE_RANGES - 1); /* "other" holds one slot */
	tp_live_range_end(6);
	tp_live_range_end(10 + TP_LIVE_RANGES - 1); /* never published: nothing */
	tp_live_range_end(10);
	tp_live_range_start(99, 100, "late", 4, 99, 0, 0, NULL, 0);
	seen = 0;
	for (int i = 0; i < TP_LIVE_RANGES; i++)
		if (tp_live_range_get(i, 100, name, &start, &PL, &id) == 0 && id == 99)
			seen++;
	ck_assert_int_eq(seen, 1);
}
END_TEST

/* Two threads start and end ranges named after their ids; the reader
 * checks each range it accepts. */
static _Atomic uint64_t range_next;

static void *range_owner(void *arg)
{
	(void)arg;
	uint64_t open[4];
	char name[32];
	while (!atomic_load_explicit(&stress_done, memory_order_relaxed)) {
		for (int k = 0; k < 4; k++) {
			open[k] = atomic_fetch_add(&range_next, 1) + 1;
			int len = snprintf(name, sizeof(name), "r%llu", (unsigned long long)open[k]);
			tp_live_range_start(open[k], 100, name, (size_t)len, open[k], 0, 0, NULL, 0);
		}
		for (int k = 0; k < 4; k++)
			tp_live_range_end(open[k]);
	}
	return NULL;
}

START_TEST(test_ranges_stress)
{
	memset(tp_live_ranges, 0, sizeof(tp_live_ranges));
	atomic_store(&stress_done, 0);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, range_owner, NULL), 0);
	uint64_t ok = 0, bad = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t k = 0;; k++) {
		if (!(k & 255)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000LL + t.tv_nsec - t0.tv_nsec > STRESS_NS)
				break;
		}
		for (int i = 0; i < TP_LIVE_RANGES; i++) {
			char name[TP_LIVE_NAME_BYTES], want[32];
			uint64_t start, id;
			if (tp_live_range_get(i, 100, name, &start, &PL, &id) < 0)
				continue;
			snprintf(want, sizeof(want), "r%llu", (unsigned long long)id);
			int good = !strcmp(name, want) && start == id;
			ok += good;
			bad += !good;
		}
	}
	atomic_store(&stress_done, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ck_assert_msg(bad == 0, "%llu ranges with another's name or start (%llu good)",
		      (unsigned long long)bad, (unsigned long long)ok);
	ck_assert_msg(ok > 100, "only %llu ranges read", (unsigned long long)ok);
	/* Every range ended: the table is free again. */
	for (int i = 0; i < TP_LIVE_RANGES; i++)
		ck_assert_uint_eq(atomic_load(&tp_live_ranges[i].id), 0);
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
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_ranges_stress);
	suite_add_tcase(s, tc);
	return tp_check_run(s);
}
