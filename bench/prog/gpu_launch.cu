// What traceprof adds to a real kernel launch on a real GPU (bench/gpu runs
// it with and without the library).  An empty kernel is launched in bursts
// of BURST (the launch queue holds about a thousand), each burst timed on
// the launching thread and followed by an untimed synchronization, so that
// the time is the launch calls' own: the runtime, the driver, and whatever
// traceprof (and, with it, CUPTI) adds to them.
//
//   gpu_launch [BURSTS] [BURST]
//
// Prints "calls=N cpu_ns=N wall_ns=N" (thread CPU time and wall time summed
// over the timed bursts), or "nogpu: <reason>" with exit status 2.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

static unsigned long long now(clockid_t c)
{
	timespec ts;
	clock_gettime(c, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const int bursts = argc > 1 ? atoi(argv[1]) : 200;
	const int burst = argc > 2 ? atoi(argv[2]) : 500;
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		printf("nogpu: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no device");
		return 2;
	}
	// Warm-up: module load, the queue's first pages, CUPTI's first buffer.
	for (int i = 0; i < 4 * burst; i++)
		empty_kernel<<<1, 32>>>();
	if (cudaDeviceSynchronize() != cudaSuccess) {
		printf("nogpu: warm-up failed: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 2;
	}
	unsigned long long cpu = 0, wall = 0;
	for (int b = 0; b < bursts; b++) {
		unsigned long long c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
		for (int i = 0; i < burst; i++)
			empty_kernel<<<1, 32>>>();
		cpu += now(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall += now(CLOCK_MONOTONIC) - w0;
		cudaDeviceSynchronize();
	}
	e = cudaGetLastError();
	if (e != cudaSuccess) {
		fprintf(stderr, "launch: %s\n", cudaGetErrorString(e));
		return 1;
	}
	printf("calls=%llu cpu_ns=%llu wall_ns=%llu\n", (unsigned long long)bursts * burst, cpu,
	       wall);
	return 0;
}
