/* BENCH STAND-IN, NOT NVIDIA'S DRIVER.
 *
 * A minimal libcuda.so.1 for `make bench`'s cold-launch row: a no-op
 * cuLaunchKernel, which the stand-in runtime (bench/standin/noop_cudart.c)
 * calls from its __cudaLaunchKernel as the real runtime calls the driver.
 * Built as build/bench/libcuda.so.1; never installed, never used by tests. */
#define TP_STANDIN_EXPORT __attribute__((visibility("default"), noinline))

typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

TP_STANDIN_EXPORT int cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
				     unsigned bx, unsigned by, unsigned bz, unsigned shm,
				     CUstream s, void **params, void **extra);

int cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shm, CUstream s, void **params, void **extra)
{
	__asm__ __volatile__("" ::: "memory");
	return 0;
}
