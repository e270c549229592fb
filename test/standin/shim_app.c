/* A program linked with the CUDA runtime (the test stand-in), for
 * test/integration/cuda_shim.sh: calls cudaGetDeviceCount three times through
 * its own relocation and prints what it answered, so that a preloaded shim
 * (test/standin/shim.c) shows whether it was reached. */
#include <stdio.h>

int cudaGetDeviceCount(int *n);

int main(void)
{
	for (int i = 0; i < 3; i++) {
		int n = -1;
		int r = cudaGetDeviceCount(&n);
		printf("linked call %d: rc=%d count=%d\n", i, r, n);
	}
	fflush(stdout);
	return 0;
}
