/* A known call chain for the stack tests, and a CPU load for the sampler's:
 *   prog_stack_chain [STEPS] [BUSY_MS]
 * Each step calls chain_a -> chain_b -> chain_c, which records an instant
 * ("leaf") and a marker ("leaf_range"), then burns BUSY_MS of CPU.  Build with
 * -g -fno-omit-frame-pointer (and -rdynamic, so that dladdr() can name the
 * functions of an executable).  Prints "done". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "preload/traceprof.h"

/* Keeps the compiler from turning the calls below into tail calls, which
 * would take the caller's frame off the stack.  Unsigned: the busy loop
 * below adds to it for as long as it runs, and a signed int overflowed
 * (undefined behaviour, reported by UBSan under make check-asan). */
static volatile unsigned chain_sink;

__attribute__((noinline)) void chain_c(int i);
__attribute__((noinline)) void chain_b(int i);
__attribute__((noinline)) void chain_a(int i);

__attribute__((noinline)) void chain_c(int i)
{
	traceprof_marker_instant("leaf");
	traceprof_marker_start("leaf_range");
	chain_sink += (unsigned)i;
	traceprof_marker_finish("leaf_range");
	chain_sink += (unsigned)i;
}

__attribute__((noinline)) void chain_b(int i)
{
	chain_c(i + 1);
	chain_sink += (unsigned)i;
}

__attribute__((noinline)) void chain_a(int i)
{
	chain_b(i + 1);
	chain_sink += (unsigned)i;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	double busy_ms = argc > 2 ? atof(argv[2]) : 0;
	for (int s = 0; s < steps; s++) {
		chain_a(s);
		double end = now_ms() + busy_ms;
		while (now_ms() < end)
			for (int k = 0; k < 1000; k++)
				chain_sink += (unsigned)k;
		traceprof_step();
	}
	printf("done\n");
	return 0;
}
