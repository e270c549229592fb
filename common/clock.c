#include "common/clock.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int tp_clock_source_cur = TP_CLOCK_MONOTONIC;

/* Calibration: the first point is taken at start-up, the second is moved
 * forward by the flush thread.  A seqlock lets the flush thread and a
 * converter on another thread (tests, the exit path) read a consistent pair:
 * the writer bumps tp_clock_seq to odd, writes, bumps to even (release); the
 * reader retries while the sequence is odd or changed (acquire). */
static uint64_t tsc0, mono0, tsc1, mono1;
static int64_t wall_offset;
static atomic_uint tp_clock_seq;
static double ns_per_tick = 1.0;

static int tsc_is_invariant(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
#else
	return 0;
#endif
}

static void take_point(uint64_t *tsc, uint64_t *mono)
{
	/* Bracket the monotonic read with two tick reads and keep the tightest of
	 * a few tries, so that a preemption does not skew the pair. */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t a = tp_clock_now();
		uint64_t m = tp_clock_monotonic_ns();
		uint64_t b = tp_clock_now();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

int tp_clock_init(int want)
{
	tp_clock_source_cur = (want == TP_CLOCK_TSC && tsc_is_invariant()) ? TP_CLOCK_TSC
									     : TP_CLOCK_MONOTONIC;
	struct timespec rt, mt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	wall_offset = ((int64_t)rt.tv_sec - (int64_t)mt.tv_sec) * 1000000000LL +
		      ((int64_t)rt.tv_nsec - (int64_t)mt.tv_nsec);
	take_point(&tsc0, &mono0);
	tsc1 = tsc0;
	mono1 = mono0;
	ns_per_tick = 1.0;
	return tp_clock_source_cur;
}

void tp_clock_recalibrate(void)
{
	if (tp_clock_source_cur != TP_CLOCK_TSC)
		return;
	/* The rate needs an interval: the first call (on the flush thread, never on
	 * the program's threads) waits until 2 ms have passed since start-up. */
	uint64_t t, m;
	do {
		take_point(&t, &m);
	} while (m - mono0 < 2000000);
	if (t <= tsc0)
		return;
	/* Pairs with the acquire loads in tp_clock_to_ns(). */
	atomic_fetch_add_explicit(&tp_clock_seq, 1, memory_order_acq_rel);
	tsc1 = t;
	mono1 = m;
	ns_per_tick = (double)(mono1 - mono0) / (double)(tsc1 - tsc0);
	atomic_fetch_add_explicit(&tp_clock_seq, 1, memory_order_release);
}

uint64_t tp_clock_to_ns(uint64_t ticks)
{
	if (tp_clock_source_cur != TP_CLOCK_TSC)
		return ticks;
	unsigned s;
	uint64_t t0, m0;
	double r;
	do {
		/* Pairs with the increments in tp_clock_recalibrate(). */
		s = atomic_load_explicit(&tp_clock_seq, memory_order_acquire);
		t0 = tsc0;
		m0 = mono0;
		r = ns_per_tick;
		atomic_thread_fence(memory_order_acquire);
	} while ((s & 1) || s != atomic_load_explicit(&tp_clock_seq, memory_order_relaxed));
	int64_t d = (int64_t)(ticks - t0);
	return (uint64_t)((int64_t)m0 + (int64_t)((double)d * r));
}

int64_t tp_clock_wall_offset_ns(void)
{
	return wall_offset;
}

