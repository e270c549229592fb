/* TEST STAND-IN, NOT NVIDIA'S DRIVER.
 *
 * A tiny libcuda.so.1 for traceprof's tests on machines without a GPU: every
 * call succeeds with a plausible value, so that the success paths, argument
 * decoding, the memory counter and cuGetProcAddress's variant handling can be
 * tested.  Built as build/standin/libcuda.so.1; only the tests put it on
 * LD_LIBRARY_PATH.  No CUDA header: the types below have the real ABI.
 * What numba-cuda and Triton need for a launch is in fake_cuda_launch.c,
 * built into the same library.
 *
 * Every function stores its exact exported name in fake_cuda_last, so a test
 * can tell which variant (cuMemcpyHtoD_v2 or cuMemcpyHtoD_v2_ptds) ran.
 *
 * Like the real driver under the CUDA runtime, it stops answering at exit:
 * cuInit registers an exit handler (as the runtime does before its first
 * cuInit), after which cuFuncGetName fails with CUDA_ERROR_DEINITIALIZED.
 * FAKE_CUDA_INIT_US makes cuInit take that long, as a real GPU's first one
 * does (a few hundred ms on an H100); FAKE_CUDA_LAUNCH_US makes each
 * cuLaunchKernel take that long (a few us on a GPU), so that a record of
 * the stand-in CUPTI around it (FAKE_CUPTI_HIDDEN_RUNTIME) overlaps it by
 * far more than the two clocks differ. */
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#define SI __attribute__((visibility("default"), noinline))
typedef unsigned long long dptr_t;
typedef struct {
	int dummy;
} *func_t;

__attribute__((visibility("default"))) const char *fake_cuda_last;
static dptr_t next_ptr = 0x7f0000000000ull;

/* Stream capture in global mode, as the driver enforces it: while a capture
 * is open, any call from another thread, or from the capturing thread other
 * than a launch or the capture calls, invalidates it (cuStreamEndCapture then
 * fails with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED).  Each such call is
 * counted, so that a test sees whether traceprof added one. */
static _Atomic int capture_open, capture_foreign;
static __thread int capture_thread;
static const char *_Atomic capture_foreign_name = "";
static void capture_note(const char *fn)
{
	if (!capture_open)
		return;
	if (capture_thread && (!strncmp(fn, "cuLaunchKernel", 14) || !strncmp(fn, "cuStream", 8)))
		return;
	capture_foreign++;
	capture_foreign_name = fn;
}

#define MARK() (fake_cuda_last = __func__, capture_note(__func__))

SI int cuInit(unsigned flags);
static int torn_down;
static void tear_down(void) { torn_down = 1; }
SI int cuInit(unsigned flags)
{
	static int once;
	MARK();
	if (!once++) {
		atexit(tear_down);
		const char *us = getenv("FAKE_CUDA_INIT_US");
		if (us)
			usleep((useconds_t)atoi(us));
	}
	return 0;
}
SI int cuDriverGetVersion(int *v);
SI int cuDriverGetVersion(int *v) { MARK(); *v = 13000; return 0; }
SI int cuGetExportTable(const void **t, const void *id);
/* One table, for the id whose first byte is 0x42: the caller must get this
 * very pointer back (traceprof passes the call through untouched). */
static const void *export_table[4];
SI const void *fake_cuda_export_table(void);
SI const void *fake_cuda_export_table(void) { return export_table; }
SI int cuGetExportTable(const void **t, const void *id)
{
	MARK();
	if (id && *(const unsigned char *)id == 0x42) {
		*t = export_table;
		return 0;
	}
	*t = NULL;
	return 500;
}
SI int cuCtxSynchronize(void);
SI int cuCtxSynchronize(void) { MARK(); return 0; }
SI int cuMemAlloc_v2(dptr_t *p, size_t n);
SI int cuMemAlloc_v2(dptr_t *p, size_t n) { MARK(); *p = next_ptr; next_ptr += (n + 0xfff) & ~0xfffull; return 0; }
/* The legacy ABI (CUDA < 3.2): 32-bit pointer and size. */
SI int cuMemAlloc(unsigned *p, unsigned n);
SI int cuMemAlloc(unsigned *p, unsigned n) { MARK(); *p = 0x1000; return 0; }
SI int cuMemFree_v2(dptr_t p);
SI int cuMemFree_v2(dptr_t p) { MARK(); return 0; }
SI int cuMemcpyHtoD_v2(dptr_t d, const void *s, size_t n);
SI int cuMemcpyHtoD_v2(dptr_t d, const void *s, size_t n) { MARK(); return 0; }
SI int cuMemcpyHtoD_v2_ptds(dptr_t d, const void *s, size_t n);
SI int cuMemcpyHtoD_v2_ptds(dptr_t d, const void *s, size_t n) { MARK(); return 0; }
SI int cuLaunchKernel(func_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		      unsigned bz, unsigned shm, void *st, void **p, void **e);
static void launch_time(void)
{
	static long us = -1;
	if (us < 0) {
		const char *v = getenv("FAKE_CUDA_LAUNCH_US");
		us = v ? atol(v) : 0;
	}
	if (us > 0) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
	}
}
SI int cuLaunchKernel(func_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		      unsigned bz, unsigned shm, void *st, void **p, void **e) { MARK(); launch_time(); return 0; }
SI int cuLaunchKernel_ptsz(func_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			   unsigned by, unsigned bz, unsigned shm, void *st, void **p, void **e);
SI int cuLaunchKernel_ptsz(func_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			   unsigned by, unsigned bz, unsigned shm, void *st, void **p, void **e) { MARK(); return 0; }
SI int cuModuleGetFunction(func_t *f, void *mod, const char *name);
static struct { int dummy; } fake_function;
/* fake_cuda_launch.c: handles that remember their name. */
SI int fake_cuda_launch_function(void **f, const char *name);
SI const char *fake_cuda_launch_name(const void *h);
SI void *fake_cuda_launch_proc(const char *sym, int ptds);
SI void *fake_cuda_launch_module(const void *image);
/* A module loaded from a real image (an ELF cubin, as Triton's) hands out
 * functions named as asked; any other, the one saxpy_drv of the older
 * tests, whatever the name. */
SI int cuModuleGetFunction(func_t *f, void *mod, const char *name)
{
	MARK();
	if (mod && mod == fake_cuda_launch_module(NULL))
		return fake_cuda_launch_function((void **)f, name);
	*f = (func_t)&fake_function;
	return 0;
}
SI int cuFuncGetName(const char **name, func_t f);
SI int cuFuncGetName(const char **name, func_t f)
{
	capture_note(__func__);
	if (torn_down)
		return 4; /* CUDA_ERROR_DEINITIALIZED */
	if (f == (func_t)&fake_function) {
		*name = "_Z9saxpy_drvfPf";
		return 0;
	}
	const char *n = fake_cuda_launch_name(f);
	if (!n)
		return 400; /* CUDA_ERROR_INVALID_HANDLE */
	*name = n;
	return 0;
}
SI int cuKernelGetName(const char **name, void *k);
SI int cuKernelGetName(const char **name, void *k)
{
	capture_note(__func__);
	if (torn_down)
		return 4;
	const char *n = fake_cuda_launch_name(k);
	if (!n)
		return 400;
	*name = n;
	return 0;
}

/* One made-up device, for deviceProperties: every attribute 1 except the
 * ones named. */
SI int cuDeviceGetCount(int *n);
SI int cuDeviceGetCount(int *n) { *n = 1; return 0; }
SI int cuDeviceGet(int *dev, int ordinal);
SI int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return ordinal == 0 ? 0 : 101; }
SI int cuDeviceGetName(char *name, int len, int dev);
SI int cuDeviceGetName(char *name, int len, int dev)
{
	const char n[] = "Stand-in GPU";
	if (len < (int)sizeof(n))
		return 1;
	memcpy(name, n, sizeof(n));
	return 0;
}
SI int cuDeviceTotalMem_v2(size_t *bytes, int dev);
SI int cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = (size_t)1 << 30; return 0; }
SI int cuDeviceGetAttribute(int *v, int attr, int dev);
SI int cuDeviceGetAttribute(int *v, int attr, int dev)
{
	switch (attr) {
	case 16: *v = 4; break;			 /* multiprocessors */
	case 10: *v = 32; break;		 /* warp size */
	case 75: *v = 9; break;			 /* compute capability 9.0: numba-cuda */
	case 76: *v = 0; break;			 /* and NVVM want a real one */
	case 1: case 2: case 3: *v = 1024; break; /* threads per block, block x, y */
	case 4: *v = 64; break;			 /* block z */
	case 5: *v = 0x7fffffff; break;		 /* grid x */
	case 6: case 7: *v = 65535; break;	 /* grid y, z */
	case 8: case 97: *v = 49152; break;	 /* shared memory per block (optin) */
	default: *v = 1;
	}
	return 0;
}

/* The profiler control API: counts its calls (standin_driver_profiler_calls),
 * so that a test sees that they reach the driver. */
static int profiler_calls;
SI int cuProfilerStart(void);
SI int cuProfilerStart(void) { profiler_calls++; return 0; }
SI int cuProfilerStop(void);
SI int cuProfilerStop(void) { profiler_calls++; return 0; }
SI int standin_driver_profiler_calls(void);
SI int standin_driver_profiler_calls(void) { return profiler_calls; }

/* What cuda.bindings needs for a launch (test/integration/cuda_pylibs.sh):
 * a device, its primary context, a module, a stream. */
static struct { int dummy; } fake_context, fake_module, fake_stream;
SI int cuDevicePrimaryCtxRetain(void **ctx, int dev);
SI int cuDevicePrimaryCtxRetain(void **ctx, int dev) { MARK(); *ctx = &fake_context; return dev == 0 ? 0 : 101; }
SI int cuCtxSetCurrent(void *ctx); /* fake_cuda_launch.c */
SI int cuModuleLoadData(void **mod, const void *image);
SI int cuModuleLoadData(void **mod, const void *image)
{
	MARK();
	void *m = fake_cuda_launch_module(image);
	*mod = m ? m : &fake_module;
	return image ? 0 : 1;
}
SI int cuStreamCreate(void **st, unsigned flags);
SI int cuStreamCreate(void **st, unsigned flags) { MARK(); *st = &fake_stream; return 0; }
SI int cuStreamSynchronize(void *st);
SI int cuStreamSynchronize(void *st) { MARK(); return 0; }

SI int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *status);
SI int cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags);

/* Which variant each base name resolves to, as the real driver decides: by
 * the requested version, and for stream-ordered calls by flags bit 2
 * (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM). */
int cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, int *status)
{
	MARK();
	int ptds = (flags & 2) != 0;
	void *p = NULL;
	if (!strcmp(sym, "cuInit")) p = (void *)cuInit;
	else if (!strcmp(sym, "cuDriverGetVersion")) p = (void *)cuDriverGetVersion;
	else if (!strcmp(sym, "cuMemAlloc")) p = ver >= 3020 ? (void *)cuMemAlloc_v2 : (void *)cuMemAlloc;
	else if (!strcmp(sym, "cuMemFree")) p = (void *)cuMemFree_v2;
	else if (!strcmp(sym, "cuMemcpyHtoD")) p = ptds ? (void *)cuMemcpyHtoD_v2_ptds : (void *)cuMemcpyHtoD_v2;
	else if (!strcmp(sym, "cuLaunchKernel")) p = ptds ? (void *)cuLaunchKernel_ptsz : (void *)cuLaunchKernel;
	else if (!strcmp(sym, "cuModuleGetFunction")) p = (void *)cuModuleGetFunction;
	else if (!strcmp(sym, "cuGetExportTable")) p = (void *)cuGetExportTable;
	else if (!strcmp(sym, "cuGetProcAddress")) p = ver >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
	else if (!strcmp(sym, "cuDeviceGet")) p = (void *)cuDeviceGet;
	else if (!strcmp(sym, "cuDeviceGetCount")) p = (void *)cuDeviceGetCount;
	else if (!strcmp(sym, "cuDevicePrimaryCtxRetain")) p = (void *)cuDevicePrimaryCtxRetain;
	else if (!strcmp(sym, "cuCtxSetCurrent")) p = (void *)cuCtxSetCurrent;
	else if (!strcmp(sym, "cuModuleLoadData")) p = (void *)cuModuleLoadData;
	else if (!strcmp(sym, "cuStreamCreate")) p = (void *)cuStreamCreate;
	else if (!strcmp(sym, "cuStreamSynchronize")) p = (void *)cuStreamSynchronize;
	else if (!strcmp(sym, "cuFuncGetName")) p = (void *)cuFuncGetName;
	else if (!strcmp(sym, "cuCtxSynchronize")) p = NULL; /* "supported by no driver": success, NULL */
	else if (!strcmp(sym, "cuProfilerStart") && ver < 4000) {
		/* Older than the function: as the driver, NOT_FOUND with
		 * CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT. */
		if (status)
			*status = 2;
		*pfn = NULL;
		return 500;
	} else if (!strcmp(sym, "cuProfilerStart")) p = (void *)cuProfilerStart;
	else if (!strcmp(sym, "cuProfilerStop")) p = (void *)cuProfilerStop;
	else if (!strcmp(sym, "cuKernelGetName")) p = (void *)cuKernelGetName;
	else if (!strcmp(sym, "cuDeviceGetName")) p = (void *)cuDeviceGetName;
	else if (!strcmp(sym, "cuDeviceTotalMem")) p = (void *)cuDeviceTotalMem_v2;
	else if (!strcmp(sym, "cuDeviceGetAttribute")) p = (void *)cuDeviceGetAttribute;
	else if ((p = fake_cuda_launch_proc(sym, ptds)))
		;
	else {
		if (status)
			*status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
		*pfn = NULL;
		return 500; /* CUDA_ERROR_NOT_FOUND */
	}
	if (status)
		*status = 0;
	*pfn = p;
	return 0;
}

int cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags)
{
	int r = cuGetProcAddress_v2(sym, pfn, ver, flags, NULL);
	MARK();
	return r;
}

/* Capture and graphs (see capture_note).  The graph records how many
 * launches were captured; cuGraphLaunch "runs" them. */
static int captured_launches;
SI int cuStreamBeginCapture_v2(void *st, int mode);
SI int cuStreamBeginCapture_v2(void *st, int mode)
{
	MARK();
	if (capture_open)
		return 900; /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
	capture_thread = 1;
	capture_foreign = 0;
	captured_launches = 0;
	capture_open = 1;
	return 0;
}
SI int cuStreamIsCapturing(void *st, int *status);
SI int cuStreamIsCapturing(void *st, int *status) { MARK(); *status = capture_open ? 1 : 0; return 0; }
SI int cuStreamEndCapture(void *st, void **graph);
SI int cuStreamEndCapture(void *st, void **graph)
{
	MARK();
	if (!capture_open || !capture_thread)
		return 400;
	capture_open = 0;
	capture_thread = 0;
	*graph = capture_foreign ? NULL : (void *)&captured_launches;
	return capture_foreign ? 901 : 0; /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
}
SI int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags);
SI int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
	MARK();
	if (!graph)
		return 400;
	*exec = graph;
	return 0;
}
SI int cuGraphLaunch(void *exec, void *st);
SI int cuGraphLaunch(void *exec, void *st) { MARK(); return exec ? 0 : 400; }
SI int fake_cuda_capture_foreign(void);
SI int fake_cuda_capture_foreign(void) { return capture_foreign; }
SI const char *fake_cuda_capture_foreign_name(void);
SI const char *fake_cuda_capture_foreign_name(void) { return capture_foreign_name; }
