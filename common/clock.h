/* The timestamp source of the hot path.
 *
 * On x86-64 with an invariant TSC, records carry raw rdtsc ticks: one
 * instruction, no syscall, no vDSO page walk.  The flush thread converts ticks
 * to CLOCK_MONOTONIC nanoseconds with a rate calibrated against
 * clock_gettime over the lifetime of the process (the longer the interval,
 * the better the rate).  Without an invariant TSC, or with
 * TRACEPROF_CLOCK=monotonic, ticks are CLOCK_MONOTONIC nanoseconds and the
 * conversion is the identity. */
#ifndef TP_COMMON_CLOCK_H
#define TP_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

enum tp_clock_source {
	TP_CLOCK_TSC = 0,
	TP_CLOCK_MONOTONIC = 1,
};

/* Written once by tp_clock_init() before any recording starts; read on the hot
 * path without ordering (it never changes afterwards). */
extern int tp_clock_source_cur;

static inline uint64_t tp_clock_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The TSC itself, for the hot path's short form, which runs only when
 * tp_clock_source_cur is TP_CLOCK_TSC (collector/control.h's TP_FULL_CLOCK).
 * Elsewhere than x86-64 that never happens; the fallback keeps it correct. */
static inline __attribute__((always_inline)) uint64_t tp_clock_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return tp_clock_monotonic_ns();
#endif
}

/* always_inline: the wrappers are in one very large generated file, where
 * GCC's unit-growth limits otherwise leave these calls out of line. */
static inline __attribute__((always_inline)) uint64_t tp_clock_now(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(tp_clock_source_cur == TP_CLOCK_TSC, 1))
		return tp_clock_tsc();
#endif
	return tp_clock_monotonic_ns();
}

/* Chooses the source (TP_CLOCK_TSC only where the CPU reports an invariant
 * TSC) and takes the first calibration point.  Returns the source chosen. */
int tp_clock_init(int want);

/* Takes a new calibration point; called by the flush thread. */
void tp_clock_recalibrate(void);

/* Converts ticks to CLOCK_MONOTONIC nanoseconds. */
uint64_t tp_clock_to_ns(uint64_t ticks);

/* CLOCK_REALTIME minus CLOCK_MONOTONIC at start, in nanoseconds: adds to a
 * monotonic time to give wall-clock time. */
int64_t tp_clock_wall_offset_ns(void);

#endif
