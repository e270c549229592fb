/* The loop of the programs that die mid-window for the cut-window tests
 * (die.c: markers only; gpu_die.c: launches on the stand-in driver; issue
 * 44).  It first prints "pid PID".  Each step: a "work" marker around the
 * program's work and 10 ms of sleep, then traceprof_step(); after each it
 * prints "ended STEP AT_NS" (CLOCK_MONOTONIC; STEP as the trace numbers it,
 * from 0).  After STEPS steps, in the middle of the next one (its work
 * done), it prints "dying AT_NS" and: MODE abort calls abort(); segv
 * dereferences NULL; loop goes on (the test kills it from outside); exit
 * returns 0 instead (a run that ends normally). */
#ifndef TP_TEST_PROGRAMS_DIE_H
#define TP_TEST_PROGRAMS_DIE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

static long long die_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A real NULL dereference, hidden from UBSan (a sanitizer build of the
 * tests would report it and exit 1 instead of dying of SIGSEGV). */
__attribute__((noinline, no_sanitize_undefined)) static int die_crash(void)
{
	volatile int *null = NULL;
	return *null;
}

/* Runs the steps; work(arg) is one step's work inside its marker (nonzero:
 * the program stops with that status).  Returns the program's status when
 * it does not die. */
static int die_loop(const char *mode, int steps, int (*work)(void *), void *arg)
{
	struct timespec pause = { 0, 10000000L };
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int s = 1;; s++) {
		traceprof_marker_start("work");
		int rc = work(arg);
		if (rc)
			return rc;
		if (s > steps && !strcmp(mode, "exit")) {
			traceprof_marker_finish("work");
			return 0;
		}
		if (s > steps && strcmp(mode, "loop")) {
			printf("dying %lld\n", die_now_ns());
			fflush(stdout);
			if (!strcmp(mode, "abort"))
				abort();
			return die_crash();
		}
		nanosleep(&pause, NULL);
		traceprof_marker_finish("work");
		traceprof_step();
		printf("ended %d %lld\n", s - 1, die_now_ns()); /* ProfilerStep#(s-1) */
		fflush(stdout);
	}
}

#endif
