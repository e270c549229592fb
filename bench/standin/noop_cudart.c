/* BENCH STAND-IN, NOT NVIDIA'S RUNTIME.
 *
 * A minimal libcudart.so.13 for `make bench`: it exports a no-op
 * cudaLaunchKernel and cudaGetLastError, and what an nvcc <<<>>> launch calls
 * (__cudaPushCallConfiguration, __cudaPopCallConfiguration and a
 * __cudaLaunchKernel that calls the stand-in driver's cuLaunchKernel, as the
 * real runtime does), nothing else, so that the benchmark measures what
 * traceprof adds to intercepted calls and not the cost of a real launch.  Built as build/bench/libcudart.so.13 and found by
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

/* nvcc's launch sequence (bench/prog/cold_launch.c). */
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
int cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shm, CUstream s, void **params, void **extra);

static struct {
	struct tp_standin_dim3 grid, block;
	size_t shared;
	void *stream;
} pending;

TP_STANDIN_EXPORT unsigned __cudaPushCallConfiguration(struct tp_standin_dim3 grid,
						       struct tp_standin_dim3 block, size_t shared,
						       void *stream);
TP_STANDIN_EXPORT int __cudaPopCallConfiguration(struct tp_standin_dim3 *grid,
						 struct tp_standin_dim3 *block, size_t *shared,
						 void *stream);
TP_STANDIN_EXPORT int __cudaLaunchKernel(const void *func, struct tp_standin_dim3 grid,
					 struct tp_standin_dim3 block, void **args, size_t shared,
					 void *stream);

unsigned __cudaPushCallConfiguration(struct tp_standin_dim3 grid, struct tp_standin_dim3 block,
				     size_t shared, void *stream)
{
	pending.grid = grid;
	pending.block = block;
	pending.shared = shared;
	pending.stream = stream;
	return 0;
}

int __cudaPopCallConfiguration(struct tp_standin_dim3 *grid, struct tp_standin_dim3 *block,
			       size_t *shared, void *stream)
{
	*grid = pending.grid;
	*block = pending.block;
	*shared = pending.shared;
	*(void **)stream = pending.stream;
	return 0;
}

int __cudaLaunchKernel(const void *func, struct tp_standin_dim3 grid, struct tp_standin_dim3 block,
		       void **args, size_t shared, void *stream)
{
	return cuLaunchKernel((CUfunction)func, grid.x, grid.y, grid.z, block.x, block.y, block.z,
			      (unsigned)shared, (CUstream)stream, args, NULL);
}
