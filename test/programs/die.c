/* A training-like loop that dies mid-window, for the cut-window tests
 * (rel_cut.sh, issue 44):
 *   prog_die MODE STEPS [EVENTS]
 * Each step: a "work" marker holding EVENTS (100) "launch" instants and 10 ms of
 * sleep, then traceprof_step(); after each it prints "ended STEP AT_NS"
 * (CLOCK_MONOTONIC; STEP as the trace numbers it, from 0).  It first
 * prints "pid PID".  After STEPS steps, in the middle of the next one, it
 * prints "dying AT_NS" and: MODE abort calls abort(); segv dereferences
 * NULL; loop goes on (the test kills it from outside); exit returns 0
 * instead (a run that ends normally: rel_cut_next.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A real NULL dereference, hidden from UBSan (a sanitizer build of the
 * tests would report it and exit 1 instead of dying of SIGSEGV). */
__attribute__((noinline, no_sanitize_undefined)) static int crash(void)
{
	volatile int *null = NULL;
	return *null;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	int steps = argc > 2 ? atoi(argv[2]) : 100;
	int events = argc > 3 ? atoi(argv[3]) : 100;
	struct timespec pause = { 0, 10000000L };
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int s = 1;; s++) {
		traceprof_marker_start("work");
		for (int i = 0; i < events; i++)
			traceprof_marker_instant("launch");
		if (s > steps && !strcmp(mode, "exit")) {
			traceprof_marker_finish("work");
			return 0;
		}
		if (s > steps && strcmp(mode, "loop")) {
			printf("dying %lld\n", now_ns());
			fflush(stdout);
			if (!strcmp(mode, "abort"))
				abort();
			return crash();
		}
		nanosleep(&pause, NULL);
		traceprof_marker_finish("work");
		traceprof_step();
		printf("ended %d %lld\n", s - 1, now_ns()); /* ProfilerStep#(s-1) */
		fflush(stdout);
	}
}
