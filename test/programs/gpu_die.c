/* A training-like loop on the stand-in driver (test/standin) that dies in
 * the middle of a window, for the GPU side of the cut-window test
 * (rel_cut_gpu.sh, issue 44):
 *   prog_gpu_die MODE STEPS [KERNELS]
 * Each step: a "work" marker around KERNELS (20) cuLaunchKernel calls
 * (through dlopen + dlsym, as the CUDA runtime reaches the driver) and 10 ms
 * of sleep, then traceprof_step(); after each it prints "ended STEP AT_NS"
 * (CLOCK_MONOTONIC; STEP as the trace numbers it, from 0).  With the
 * stand-in CUPTI preloaded, every launch gets a made-up kernel.  It first
 * prints "pid PID".  After STEPS steps, in the middle of the next one (its
 * launches made), it prints "dying AT_NS" and: MODE abort calls abort();
 * segv dereferences NULL; loop goes on (the test kills it from outside). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

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
	int kernels = argc > 3 ? atoi(argv[3]) : 20;
	struct timespec pause = { 0, 10000000L };
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
	int (*get)(void **, void *, const char *) =
		h ? (int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction") : NULL;
	launch_fn launch = h ? (launch_fn)dlsym(h, "cuLaunchKernel") : NULL;
	if (!init || !get || !launch) {
		printf("no stand-in driver\n");
		return 4;
	}
	void *f = NULL;
	if (init(0) != 0 || get(&f, NULL, "saxpy") != 0) {
		printf("the stand-in driver failed\n");
		return 4;
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	for (int s = 1;; s++) {
		int bad = 0;
		traceprof_marker_start("work");
		for (int k = 0; k < kernels; k++)
			bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
		if (bad) {
			printf("%d launches failed\n", bad);
			return 4;
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
