/* TRACEPROF_CAPTURE=cudaProfilerApi over the test stand-ins
 * (test/integration/capture_range.sh): ten steps of one cudaMemset each,
 * of 100 + the step's number bytes, so that the trace shows which steps a
 * range holds.  A range over steps 2-3 (with a nested start inside and an
 * unpaired stop after it), a second range from step 6 left open at exit.
 * Prints the return values and how many profiler calls reached the
 * runtime and the driver: the same with and without traceprof. */
#include <dlfcn.h>
#include <stdio.h>

#include "preload/traceprof.h"

int cudaMemset(void *d, int v, size_t n);
int cudaProfilerStart(void);
int cudaProfilerStop(void);
int cuProfilerStart(void);
int cuProfilerStop(void);
int standin_profiler_calls(void);

int main(void)
{
	int rc = 0;
	for (int i = 0; i < 10; i++) {
		if (i == 2 || i == 6)
			rc |= cudaProfilerStart();
		if (i == 3)
			rc |= cudaProfilerStart(); /* nested: ignored */
		if (i == 5)
			rc |= cudaProfilerStop(); /* unpaired: ignored */
		rc |= cudaMemset((void *)0x1000, i, 100 + (size_t)i);
		if (i == 3)
			rc |= cudaProfilerStop();
		if (i < 9)
			traceprof_step();
	}
	/* The driver's API names its own range.  Run after the loop: the open
	 * range from step 6 makes this start a nested one (ignored). */
	rc |= cuProfilerStart();
	int (*drv_calls)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "standin_driver_profiler_calls");
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (h)
		drv_calls = (int (*)(void))dlsym(h, "standin_driver_profiler_calls");
	printf("rc=%d runtime-profiler-calls=%d driver-profiler-calls=%d\n", rc,
	       standin_profiler_calls(), drv_calls ? drv_calls() : -1);
	return 0;
}
