/* A training-like loop on the stand-in driver (test/standin), for the tests
 * of what trace readers get from GPU traces (test/integration/readers_*.sh):
 * STEPS steps, each with a "forward" and a "backward" marker around KERNELS
 * launches (cuLaunchKernel through dlopen + dlsym, as the CUDA runtime
 * reaches the driver), sleeping US microseconds after each launch, and
 * traceprof_step() after each step.  With the stand-in CUPTI preloaded,
 * every launch gets a made-up kernel.
 *
 *     prog_gpu_steps STEPS KERNELS US
 *
 * Prints "steps=N launches=N failed=N" and exits 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload/traceprof.h"

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 4;
	int kernels = argc > 2 ? atoi(argv[2]) : 4;
	useconds_t pause = argc > 3 ? (useconds_t)atoi(argv[3]) : 10;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("no libcuda.so.1\n");
		return 4;
	}
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
	int (*get)(void **, void *, const char *) =
		(int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction");
	launch_fn launch = (launch_fn)dlsym(h, "cuLaunchKernel");
	if (!init || !get || !launch) {
		printf("stand-in driver incomplete\n");
		return 4;
	}
	void *f = NULL;
	int bad = init(0) != 0;
	bad += get(&f, NULL, "saxpy") != 0;
	int n = 0;
	static const char *const phases[] = { "forward", "backward" };
	for (int s = 0; s < steps; s++) {
		for (int p = 0; p < 2; p++) {
			traceprof_marker_start(phases[p]);
			for (int k = 0; k < kernels; k++) {
				bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
				n++;
				usleep(pause);
			}
			traceprof_marker_finish(phases[p]);
		}
		traceprof_step();
	}
	printf("steps=%d launches=%d failed=%d\n", steps, n, bad);
	return 0;
}
