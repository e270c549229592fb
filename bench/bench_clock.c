/* The physical floor of the hot path: what one timestamp read costs with each
 * source traceprof can use (common/clock.h).  A recorded call reads the clock
 * twice, so twice the rdtsc figure is the floor a recorded call cannot beat.
 *
 *   bench_clock [TRIALS] [READS]
 *
 * Prints one line per trial:
 *   rdtsc_ns=X clock_gettime_ns=Y
 * each the average cost of one read over READS back-to-back reads (the reads
 * are summed so that none can be dropped).  rdtsc_ns is "nan" where the CPU
 * has no invariant TSC (traceprof then uses clock_gettime). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"

static volatile uint64_t sink;

static double per_read_ns(int tsc, uint64_t reads)
{
	uint64_t s = 0;
	struct timespec a, b;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	if (tsc) {
		for (uint64_t i = 0; i < reads; i++)
			s += tp_clock_now();
	} else {
		for (uint64_t i = 0; i < reads; i++)
			s += tp_clock_monotonic_ns();
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	sink = s;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)reads;
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 7;
	uint64_t reads = argc > 2 ? strtoull(argv[2], NULL, 0) : 5000000;
	int tsc = tp_clock_init(TP_CLOCK_TSC) == TP_CLOCK_TSC;
	per_read_ns(tsc, reads / 10); /* warm up */
	per_read_ns(0, reads / 10);
	for (int i = 0; i < trials; i++) {
		double r = tsc ? per_read_ns(1, reads) : NAN;
		double g = per_read_ns(0, reads);
		printf("rdtsc_ns=%.3f clock_gettime_ns=%.3f\n", r, g);
	}
	return 0;
}
