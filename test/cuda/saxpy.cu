// The nvcc example of traceprof's tests and README: a kernel launched with
// <<<...>>> plus the usual allocation, copies and synchronization.  On a
// machine without a GPU (the toolkit's stub driver) every call fails, and
// the program reports the errors and exits 0 all the same.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

int main()
{
	const int n = 1 << 20;
	float *x = nullptr, *y = nullptr;
	static float host[1 << 20];
	printf("cudaMalloc: %d\n", (int)cudaMalloc(&x, n * sizeof(float)));
	printf("cudaMalloc: %d\n", (int)cudaMalloc(&y, n * sizeof(float)));
	printf("cudaMemcpy: %d\n", (int)cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice));
	saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
	printf("launch: %d\n", (int)cudaGetLastError());
	printf("cudaDeviceSynchronize: %d\n", (int)cudaDeviceSynchronize());
	printf("cudaFree: %d\n", (int)cudaFree(x));
	printf("cudaFree: %d\n", (int)cudaFree(y));
	return 0;
}
