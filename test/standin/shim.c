/* A CUDA interposer of the kind quota shims, vGPU layers and API loggers
 * are: preloaded, it defines cudaGetDeviceCount and forwards it to the next
 * definition with dlsym(RTLD_NEXT), adding 100 to the count so that a test
 * sees that it ran, and it prints how many calls it saw at exit
 * (test/integration/cuda_shim.sh, issue 30 item 6).  Built twice: without
 * symbol versions (libshim.so, the usual shim) and with its definition
 * versioned as another runtime major's, cudaGetDeviceCount@@libcudart.so.12
 * (libshim12.so), which a caller linked with libcudart.so.13 never binds. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static int calls;

__attribute__((visibility("default"))) int cudaGetDeviceCount(int *n);
int cudaGetDeviceCount(int *n)
{
	calls++;
	int (*next)(int *) = (int (*)(int *))dlsym(RTLD_NEXT, "cudaGetDeviceCount");
	if (!next)
		return 999;
	int r = next(n);
	if (r == 0)
		*n += 100;
	return r;
}

/* write(2), not stdio: the program's stdout may already be flushed and
 * closed down by exit when this runs. */
__attribute__((destructor)) static void shim_report(void)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "shim: %d calls\n", calls);
	if (len > 0 && write(1, line, (size_t)len) < 0)
		return;
}
