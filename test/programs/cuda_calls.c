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

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "cuinit")) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW);
		if (!h) {
			printf("no libcuda.so.1\n");
			return 3;
		}
		int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
		if (!init) {
			printf("no cuInit\n");
			return 4;
		}
		int r = init(0);
		usleep(20000);
		printf("cuInit=%d\n", r);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "launch")) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW);
		if (!h) {
			printf("no libcuda.so.1\n");
			return 3;
		}
		int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
		int (*get)(void **, void *, const char *) =
			(int (*)(void **, void *, const char *))dlsym(h, "cuModuleGetFunction");
		int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, void *, void **, void **) =
			(int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, void *, void **, void **))dlsym(h, "cuLaunchKernel");
		if (!init || !get || !launch) {
			printf("no cuInit, cuModuleGetFunction or cuLaunchKernel\n");
			return 4;
		}
		void *f = NULL;
		int r = init(0), n = atoi(argv[2]), bad = 0;
		int g = get(&f, NULL, "saxpy");
		for (int i = 0; i < n; i++)
			bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
		printf("cuInit=%d get=%d launches=%d failed=%d\n", r, g, n, bad);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "count")) {
		void *h = dlopen("libcudart.so.13", RTLD_NOW);
		if (!h) {
			printf("no libcudart.so.13\n");
			return 3;
		}
		int (*count)(int *) = (int (*)(int *))dlsym(h, "cudaGetDeviceCount");
		if (!count) {
			printf("no cudaGetDeviceCount\n");
			return 4;
		}
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
