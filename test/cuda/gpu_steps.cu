// The GPU side of a training loop in miniature, for the real-GPU test
// (test/integration/gpu_cupti.sh).  Each step:
//   - copies a batch in (stream A, pinned memory),
//   - runs saxpy three times on stream A and scale once on stream B,
//   - replays a CUDA graph of two kernels (scale, saxpy) on stream A,
//   - clears a buffer on stream B,
//   - copies the result out on stream A,
//   - synchronizes both streams and calls traceprof_step().
// That is 6 kernels, 2 copies and 1 memset a step.  It prints a checksum of
// the results, so that a run under traceprof can be compared with a plain
// run, and "nogpu: <reason>" (exit 0) when no GPU answers, so that the test
// can skip on a machine without one.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "preload/traceprof.h"

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void scale(int n, float a, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * y[i];
}

// A failed call ends the program with its name and error: the test then
// fails on the exit code, with and without traceprof alike.
static void check(cudaError_t e, const char *what)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const int steps = argc > 1 ? atoi(argv[1]) : 6;
	const int n = 1 << 20;
	const size_t bytes = n * sizeof(float);
	const int block = 256, grid = (n + block - 1) / block;

	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		printf("nogpu: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no device");
		return 0;
	}

	float *in, *out, *x, *y, *z;
	check(cudaMallocHost(&in, bytes), "cudaMallocHost");
	check(cudaMallocHost(&out, bytes), "cudaMallocHost");
	check(cudaMalloc(&x, bytes), "cudaMalloc");
	check(cudaMalloc(&y, bytes), "cudaMalloc");
	check(cudaMalloc(&z, bytes), "cudaMalloc");
	check(cudaMemset(y, 0, bytes), "cudaMemset");
	cudaStream_t a, b;
	check(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), "cudaStreamCreate");
	check(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), "cudaStreamCreate");

	// The graph: scale then saxpy on y, captured from stream A.
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	check(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
	scale<<<grid, block, 0, a>>>(n, 0.5f, y);
	saxpy<<<grid, block, 0, a>>>(n, 1.0f, x, y);
	check(cudaStreamEndCapture(a, &graph), "cudaStreamEndCapture");
	check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

	double sum = 0;
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++)
			in[i] = (float)((i + s) % 7);
		check(cudaMemcpyAsync(x, in, bytes, cudaMemcpyHostToDevice, a), "cudaMemcpyAsync");
		for (int k = 0; k < 3; k++)
			saxpy<<<grid, block, 0, a>>>(n, 0.25f, x, y);
		scale<<<grid, block, 0, b>>>(n, 2.0f, z);
		check(cudaGetLastError(), "launch");
		check(cudaGraphLaunch(exec, a), "cudaGraphLaunch");
		check(cudaMemsetAsync(z, 0, bytes, b), "cudaMemsetAsync");
		check(cudaMemcpyAsync(out, y, bytes, cudaMemcpyDeviceToHost, a), "cudaMemcpyAsync");
		check(cudaStreamSynchronize(a), "cudaStreamSynchronize");
		check(cudaStreamSynchronize(b), "cudaStreamSynchronize");
		for (int i = 0; i < n; i += 4096)
			sum += out[i];
		traceprof_step();
	}
	check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
	check(cudaGraphDestroy(graph), "cudaGraphDestroy");
	check(cudaStreamDestroy(a), "cudaStreamDestroy");
	check(cudaStreamDestroy(b), "cudaStreamDestroy");
	check(cudaFree(x), "cudaFree");
	check(cudaFree(y), "cudaFree");
	check(cudaFree(z), "cudaFree");
	check(cudaFreeHost(in), "cudaFreeHost");
	check(cudaFreeHost(out), "cudaFreeHost");
	printf("steps=%d kernels=%d checksum=%.3f\n", steps, 6 * steps, sum);
	return 0;
}
