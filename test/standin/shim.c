/* A CUDA interposer of the kind quota shims, vGPU layers and API loggers
 * are: preloaded, it defines cudaGetDeviceCount and forwards it to the next
 * definition with dlsym(RTLD_NEXT), adding 100 to the count so that a test
 * sees that it ran (test/integration/cuda_shim.sh, issue 30 item 6). */
#define _GNU_SOURCE
#include <dlfcn.h>

__attribute__((visibility("default"))) int cudaGetDeviceCount(int *n);
int cudaGetDeviceCount(int *n)
{
	int (*next)(int *) = (int (*)(int *))dlsym(RTLD_NEXT, "cudaGetDeviceCount");
	if (!next)
		return 999;
	int r = next(n);
	if (r == 0)
		*n += 100;
	return r;
}
