#include "common/clock.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int tp_clock_source_cur = TP_CLOCK_MONOTONIC;

/* Calibration: the first point is taken at start-up; the flush thread takes
 * a new one about once a second, and the rate over the whole interval gets
 * better each time.
 *
 * The conversion is a function of the ticks alone, whenever it runs: one
 * tick converted twice gives one ns (a step's end and the next step's
 * start are the same tick, written a step apart; a marker's start is
 * converted when its finish arrives).  Re-fitting one line through both
 * points instead moved earlier ticks by up to ~100 ns after each new point,
 * so back-to-back slices overlapped and children outlived their parents.
 * So the mapping is piecewise linear: a new point adds a segment starting
 * at its own tick (no tick at or after it has been converted yet: the
 * records drained before it are older), continuous there, with a slope that
 * brings it onto the whole-interval line one interval later.  Ticks map
 * through the last segment starting at or before them; CLK_SEGS segments
 * (about four minutes) are kept, and older ticks use the oldest.
 *
 * A seqlock lets the flush thread and a converter on another thread (tests,
 * the exit path) read consistent segments: the writer bumps tp_clock_seq to
 * odd, writes, bumps to even (release); the reader retries while the
 * sequence is odd or changed (acquire). */
#define CLK_SEGS 256

struct clk_seg {
	uint64_t tsc;
	int64_t mono;
	double rate; /* ns per tick */
};

static uint64_t tsc0, mono0;
static int64_t wall_offset;
static atomic_uint tp_clock_seq;
static struct clk_seg clk_segs[CLK_SEGS];
/* Segments ever added; the last is (n - 1) % CLK_SEGS.  Written by the
 * flush thread inside the seqlock, read by converters inside it. */
static _Atomic uint64_t clk_nsegs;
/* Set by the first recalibration (flush thread only): until then segment 0
 * has a placeholder rate, and the first point replaces it. */
static int clk_calibrated;

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
	clk_segs[0] = (struct clk_seg){ .tsc = tsc0, .mono = (int64_t)mono0, .rate = 1.0 };
	atomic_store_explicit(&clk_nsegs, 1, memory_order_relaxed);
	clk_calibrated = 0;
	return tp_clock_source_cur;
}

/* The segment for `ticks`: the last one starting at or before it, else the
 * oldest kept.  Called inside the seqlock. */
static struct clk_seg clk_find(uint64_t ticks)
{
	uint64_t n = atomic_load_explicit(&clk_nsegs, memory_order_relaxed);
	uint64_t kept = n < CLK_SEGS ? n : CLK_SEGS;
	for (uint64_t k = 1; k < kept; k++) {
		const struct clk_seg *g = &clk_segs[(n - k) % CLK_SEGS];
		if ((int64_t)(ticks - g->tsc) >= 0)
			return *g;
	}
	return clk_segs[(n - kept) % CLK_SEGS];
}

static int64_t clk_map(const struct clk_seg *g, uint64_t ticks)
{
	return g->mono + (int64_t)((double)(int64_t)(ticks - g->tsc) * g->rate);
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
	double rate = (double)(m - mono0) / (double)(t - tsc0);
	/* Only this thread writes the segments: reading them needs no lock. */
	uint64_t n = atomic_load_explicit(&clk_nsegs, memory_order_relaxed);
	struct clk_seg last = clk_segs[(n - 1) % CLK_SEGS];
	struct clk_seg g;
	int first = !clk_calibrated;
	if (first) {
		/* The first point: nothing has been converted with the placeholder
		 * rate (the flush thread calibrates before it drains), so segment 0
		 * gets the measured rate from start-up. */
		g = (struct clk_seg){ .tsc = tsc0, .mono = (int64_t)mono0, .rate = rate };
	} else {
		if ((int64_t)(t - last.tsc) <= 0)
			return;
		/* Continuous at t, and on the whole-interval line (through the
		 * start-up point with the new rate) again after one more interval
		 * of the length since the last point.  The slope is kept within
		 * a factor of two of the rate, so time never runs backwards. */
		int64_t at = clk_map(&last, t);
		double h = (double)(t - last.tsc);
		double line = (double)mono0 + (double)(t - tsc0) * rate + h * rate;
		double slope = (line - (double)at) / h;
		if (!(slope >= rate * 0.5))
			slope = rate * 0.5;
		if (slope > rate * 2)
			slope = rate * 2;
		g = (struct clk_seg){ .tsc = t, .mono = at, .rate = slope };
	}
	/* Pairs with the acquire loads in tp_clock_to_ns(). */
	atomic_fetch_add_explicit(&tp_clock_seq, 1, memory_order_acq_rel);
	if (first) {
		clk_segs[0] = g;
		clk_calibrated = 1;
	} else {
		clk_segs[n % CLK_SEGS] = g;
		atomic_store_explicit(&clk_nsegs, n + 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&tp_clock_seq, 1, memory_order_release);
}

uint64_t tp_clock_to_ns(uint64_t ticks)
{
	if (tp_clock_source_cur != TP_CLOCK_TSC)
		return ticks;
	unsigned s;
	struct clk_seg g;
	do {
		/* Pairs with the increments in tp_clock_recalibrate(). */
		s = atomic_load_explicit(&tp_clock_seq, memory_order_acquire);
		g = clk_find(ticks);
		atomic_thread_fence(memory_order_acquire);
	} while ((s & 1) || s != atomic_load_explicit(&tp_clock_seq, memory_order_relaxed));
	return (uint64_t)clk_map(&g, ticks);
}

int64_t tp_clock_wall_offset_ns(void)
{
	return wall_offset;
}

