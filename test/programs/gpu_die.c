/* A training-like loop on the stand-in driver (test/standin) that dies in
 * the middle of a window, for the GPU side of the cut-window test
 * (rel_cut_gpu.sh, issue 44):
 *   prog_gpu_die MODE STEPS [KERNELS]
 * Each step's work: KERNELS (20) cuLaunchKernel calls (through dlopen +
 * dlsym, as the CUDA runtime reaches the driver).  With the stand-in CUPTI
 * preloaded, every launch gets a made-up kernel.  With
 * FAKE_CUPTI_HIDDEN_RUNTIME set, each launch is made from inside a runtime
 * call traceprof cannot interpose (the runtime inside cuBLAS), which the
 * stand-in CUPTI records (fake_cupti_runtime_enter/exit, test/standin/
 * fake_cupti.c).  MODE, the steps and the lines it prints: die.h. */
#include <dlfcn.h>

#include "test/programs/die.h"

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

struct gd_work {
	launch_fn launch;
	void (*enter)(void), (*exit)(void); /* the hidden runtime's, or NULL */
	void *f;
	int kernels;
};

static int gd_launches(void *arg)
{
	struct gd_work *w = arg;
	int bad = 0;
	for (int k = 0; k < w->kernels; k++) {
		if (w->enter)
			w->enter();
		bad += w->launch(w->f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
		if (w->exit)
			w->exit();
	}
	if (bad)
		printf("%d launches failed\n", bad);
	return bad ? 4 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	int steps = argc > 2 ? atoi(argv[2]) : 100;
	struct gd_work w = { .kernels = argc > 3 ? atoi(argv[3]) : 20 };
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
	int (*get)(void **, void *, const char *) =
		h ? (int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction") : NULL;
	w.launch = h ? (launch_fn)dlsym(h, "cuLaunchKernel") : NULL;
	if (!init || !get || !w.launch) {
		printf("no stand-in driver\n");
		return 4;
	}
	if (getenv("FAKE_CUPTI_HIDDEN_RUNTIME")) {
		w.enter = (void (*)(void))dlsym(RTLD_DEFAULT, "fake_cupti_runtime_enter");
		w.exit = (void (*)(void))dlsym(RTLD_DEFAULT, "fake_cupti_runtime_exit");
		if (!w.enter || !w.exit) {
			printf("no stand-in CUPTI for FAKE_CUPTI_HIDDEN_RUNTIME\n");
			return 4;
		}
	}
	if (init(0) != 0 || get(&w.f, NULL, "saxpy") != 0) {
		printf("the stand-in driver failed\n");
		return 4;
	}
	return die_loop(mode, steps, gd_launches, &w);
}
