/* demo_train: a training-like loop for `make demo` and the CLI tests.
 *
 * Each step copies a batch to the GPU, runs "forward", "backward" and
 * "optimizer" phases (markers around CUDA runtime calls: memsets, copies,
 * synchronisations, plus some CPU work), reports a loss counter and calls
 * traceprof_step().  The CUDA runtime is loaded at run time (dlopen), so the
 * program builds and runs without a GPU or toolkit: when the runtime cannot
 * be loaded it says so and still does the steps and markers.
 *
 *     prog_demo_train [STEPS] [BATCH_MB]      (default 8 steps, 4 MB) */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload/traceprof.h"

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*memcpy_async_fn)(void *, const void *, size_t, int, void *);
typedef int (*memset_async_fn)(void *, int, size_t, void *);
typedef int (*sync_fn)(void *);
typedef int (*dsync_fn)(void);
typedef int (*count_fn)(int *);
typedef const char *(*errstr_fn)(int);
typedef struct {
	unsigned x, y, z;
} dim3_t;
typedef int (*launch_fn)(const void *, dim3_t, dim3_t, void **, size_t, void *);
typedef int (*memset_fn)(void *, int, size_t);

/* cudaMemcpyKind */
enum { H2D = 1, D2H = 2, D2D = 3 };

static struct {
	malloc_fn malloc;
	free_fn free;
	memcpy_fn memcpy;
	memcpy_async_fn memcpy_async;
	memset_async_fn memset_async;
	sync_fn stream_sync;
	dsync_fn device_sync;
	count_fn device_count;
	errstr_fn errstr;
	memset_fn memset; /* used when cudaMemsetAsync is missing */
	launch_fn launch; /* optional */
} rt;

static int cuda_errors;

/* Looks the symbol up through the global scope, so that a preloaded
 * profiler's wrapper is found before the runtime's own definition. */
static void *sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (!p) {
		fprintf(stderr, "demo_train: %s not found in the CUDA runtime\n", name);
		exit(1);
	}
	return p;
}

static void *opt_sym(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

/* The host stub of a "kernel", as nvcc would emit one per __global__
 * function.  The test stand-in runtime accepts it; the real runtime rejects
 * it (it was never registered from a fat binary), and the demo then stops
 * launching. */
static void demo_kernel_stub(float *x, int n)
{
	(void)x;
	(void)n;
}

static int load_runtime(void)
{
	static const char *const names[] = { "libcudart.so.13", "libcudart.so.12", "libcudart.so" };
	void *h = NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		printf("demo_train: no CUDA runtime (%s); running the steps and markers without "
		       "CUDA calls\n",
		       dlerror());
		return -1;
	}
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
		printf("demo_train: CUDA runtime: %s\n", lm->l_name);
	rt.malloc = (malloc_fn)sym("cudaMalloc");
	rt.free = (free_fn)sym("cudaFree");
	rt.memcpy = (memcpy_fn)sym("cudaMemcpy");
	rt.memcpy_async = (memcpy_async_fn)sym("cudaMemcpyAsync");
	rt.memset_async = (memset_async_fn)opt_sym("cudaMemsetAsync");
	rt.memset = (memset_fn)opt_sym("cudaMemset");
	rt.stream_sync = (sync_fn)sym("cudaStreamSynchronize");
	rt.device_sync = (dsync_fn)sym("cudaDeviceSynchronize");
	rt.device_count = (count_fn)sym("cudaGetDeviceCount");
	rt.errstr = (errstr_fn)opt_sym("cudaGetErrorString");
	rt.launch = (launch_fn)opt_sym("cudaLaunchKernel");
	return 0;
}

static void check(int rc, const char *what)
{
	if (rc == 0)
		return;
	if (cuda_errors++ == 0)
		printf("demo_train: %s failed: %s (error %d); continuing without a GPU\n", what,
		       rt.errstr ? rt.errstr(rc) : "?", rc);
}

static void memset_dev(void *p, int v, size_t n)
{
	if (rt.memset_async)
		check(rt.memset_async(p, v, n, NULL), "cudaMemsetAsync");
	else if (rt.memset)
		check(rt.memset(p, v, n), "cudaMemset");
}

static void launch(void *buf, int n)
{
	if (!rt.launch)
		return;
	dim3_t grid = { (unsigned)(n + 255) / 256, 1, 1 }, block = { 256, 1, 1 };
	void *args[] = { &buf, &n };
	int rc = rt.launch((const void *)demo_kernel_stub, grid, block, args, 0, NULL);
	if (rc) {
		printf("demo_train: cudaLaunchKernel: error %d (a kernel needs nvcc's registration); "
		       "no more launches\n",
		       rc);
		rt.launch = NULL;
	}
}

/* Some CPU work standing in for the framework's Python and kernels. */
static double busy(double ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	double x = 1.0;
	do {
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
	return x;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8;
	size_t bytes = (size_t)(argc > 2 ? atoi(argv[2]) : 4) << 20;
	int have_cuda = load_runtime() == 0;
	void *host = calloc(1, bytes);
	void *dev = NULL, *grad = NULL;
	if (!host)
		return 1;
	if (have_cuda) {
		int n = 0;
		check(rt.device_count(&n), "cudaGetDeviceCount");
		printf("demo_train: %d CUDA device(s)\n", n);
		check(rt.malloc(&dev, bytes), "cudaMalloc");
		check(rt.malloc(&grad, bytes), "cudaMalloc");
	}
	double sink = 0;
	for (int s = 0; s < steps; s++) {
		traceprof_marker_start("data");
		memset(host, s & 0xff, bytes);
		if (have_cuda)
			check(rt.memcpy(dev, host, bytes, H2D), "cudaMemcpy");
		traceprof_marker_finish("data");

		traceprof_marker_start("forward");
		if (have_cuda) {
			memset_dev(grad, 0, bytes);
			check(rt.memcpy_async(grad, dev, bytes / 2, D2D, NULL), "cudaMemcpyAsync");
			for (int k = 0; k < 4; k++)
				launch(dev, (int)(bytes / 4));
		}
		sink += busy(2.0);
		traceprof_marker_finish("forward");

		traceprof_marker_start("backward");
		if (have_cuda) {
			for (int k = 0; k < 8; k++)
				launch(grad, (int)(bytes / 4));
			check(rt.memcpy_async(dev, grad, bytes / 2, D2D, NULL), "cudaMemcpyAsync");
			check(rt.stream_sync(NULL), "cudaStreamSynchronize");
		}
		sink += busy(3.0);
		traceprof_marker_finish("backward");

		traceprof_marker_start("optimizer");
		if (have_cuda) {
			memset_dev(dev, 1, bytes / 4);
			launch(dev, (int)(bytes / 4));
			check(rt.device_sync(), "cudaDeviceSynchronize");
		}
		sink += busy(1.0);
		traceprof_marker_finish("optimizer");

		traceprof_marker_counter("loss", "value", 2.0 / (s + 1));
		if (s == steps / 2)
			traceprof_marker_instant("checkpoint");
		printf("demo_train: step %d done\n", s);
		traceprof_step();
	}
	if (have_cuda) {
		check(rt.memcpy(host, dev, bytes, D2H), "cudaMemcpy");
		check(rt.free(dev), "cudaFree");
		check(rt.free(grad), "cudaFree");
	}
	free(host);
	printf("demo_train: %d steps done%s (%g)\n", steps,
	       have_cuda && cuda_errors ? ", CUDA calls failed (no GPU?)" : "", sink > 0 ? 0.0 : 1.0);
	return 0;
}
