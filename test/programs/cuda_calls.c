/* Drives intercepted CUDA entry points through dlopen + dlsym, as the CUDA
 * runtime and PyTorch reach them (the library's dlsym hook hands out its
 * wrappers):
 *   prog_cuda_calls cuinit        dlopen libcuda.so.1, call cuInit(0) once
 *   prog_cuda_calls count N       dlopen libcudart.so.13, N x cudaGetDeviceCount
 *   prog_cuda_calls launch N      cuInit(0), then N x cuLaunchKernel of the
 *                                 function cuModuleGetFunction hands back
 * Prints what the calls returned; the output must be the same with and
 * without the library. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The symbol sym of library lib (dlopen + dlsym, as the runtime and PyTorch
 * reach the driver), or NULL after printing what is missing. */
static void *sym_of(const char *lib, const char *sym)
{
	void *h = dlopen(lib, RTLD_NOW);
	void *p = h ? dlsym(h, sym) : NULL;
	if (!p)
		printf("no %s\n", h ? sym : lib);
	return p;
}

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "cuinit")) {
		int (*init)(unsigned) = (int (*)(unsigned))sym_of("libcuda.so.1", "cuInit");
		if (!init)
			return 4;
		int r = init(0);
		usleep(20000);
		printf("cuInit=%d\n", r);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "launch")) {
		int (*init)(unsigned) = (int (*)(unsigned))sym_of("libcuda.so.1", "cuInit");
		int (*get)(void **, void *, const char *) = (int (*)(void **, void *, const char *))
			sym_of("libcuda.so.1", "cuModuleGetFunction");
		launch_fn launch = (launch_fn)sym_of("libcuda.so.1", "cuLaunchKernel");
		if (!init || !get || !launch)
			return 4;
		void *f = NULL;
		int r = init(0), n = atoi(argv[2]), bad = 0;
		int g = get(&f, NULL, "saxpy");
		for (int i = 0; i < n; i++)
			bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
		printf("cuInit=%d get=%d launches=%d failed=%d\n", r, g, n, bad);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "count")) {
		int (*count)(int *) =
			(int (*)(int *))sym_of("libcudart.so.13", "cudaGetDeviceCount");
		if (!count)
			return 4;
		int n = atoi(argv[2]), r = 0, devs = 0;
		for (int i = 0; i < n; i++) {
			r |= count(&devs);
			usleep(2000);
		}
		printf("calls=%d result=%d\n", n, r);
		return 0;
	}
	fprintf(stderr, "usage: %s cuinit | count N | launch N\n", argv[0]);
	return 2;
}
