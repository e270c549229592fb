/* BENCH STAND-IN, NOT NVIDIA'S RUNTIME.
 *
 * A minimal libcudart.so.13 for `make bench`: it exports a no-op
 * cudaLaunchKernel and cudaGetLastError, nothing else, so that the benchmark
 * measures what traceprof adds to an intercepted call and not the cost of a
 * real launch.  Built as build/bench/libcudart.so.13 and found by
 * build/bench/launch_loop through its $ORIGIN rpath; never installed, never
 * used by the tests (those have their own stand-ins under test/).
 *
 * No CUDA header is needed: the types below have the ABI of the real ones
 * (dim3 is three unsigned ints passed by value, errors are an enum). */
#include <stddef.h>

#define TP_STANDIN_EXPORT __attribute__((visibility("default"), noinline))

struct tp_standin_dim3 {
	unsigned x, y, z;
};

TP_STANDIN_EXPORT int cudaLaunchKernel(const void *func, struct tp_standin_dim3 grid,
				       struct tp_standin_dim3 block, void **args, size_t shared,
				       void *stream);
TP_STANDIN_EXPORT int cudaGetLastError(void);

/* cudaSuccess; the compiler barrier keeps the call a real call. */
int cudaLaunchKernel(const void *func, struct tp_standin_dim3 grid, struct tp_standin_dim3 block,
		     void **args, size_t shared, void *stream)
{
	__asm__ __volatile__("" ::: "memory");
	return 0;
}

int cudaGetLastError(void)
{
	return 0;
}
