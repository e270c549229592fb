/* TEST STAND-IN, NOT NVIDIA'S RUNTIME.
 *
 * A tiny libcudart.so.13 for traceprof's tests on machines without a GPU.
 * Like the real runtime since CUDA 11.3 it reaches the driver only through
 * dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2") +
 * cuGetProcAddress, so the tests see that path with either driver (the test
 * stand-in or NVIDIA's stub).  Calls succeed with plausible values; kernel
 * launches do nothing.  Built as build/standin/libcudart.so.13; only the tests
 * use it.  No CUDA header: the types below have the real ABI. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SI __attribute__((visibility("default"), noinline))

typedef struct {
	unsigned x, y, z;
} dim3_t;
typedef int (*get_proc_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*mem_alloc_fn)(unsigned long long *, size_t);
typedef int (*mem_free_fn)(unsigned long long);

static struct {
	int tried;
	mem_alloc_fn mem_alloc;
	mem_free_fn mem_free;
} drv;

static int driver(void)
{
	if (drv.tried)
		return drv.mem_alloc ? 0 : 35; /* cudaErrorInsufficientDriver */
	drv.tried = 1;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 35;
	get_proc_fn gpa = (get_proc_fn)dlsym(h, "cuGetProcAddress_v2");
	if (!gpa)
		return 35;
	void *p = NULL;
	int st;
	if (gpa("cuMemAlloc", &p, 13000, 0, &st) == 0)
		drv.mem_alloc = (mem_alloc_fn)p;
	if (gpa("cuMemFree", &p, 13000, 0, &st) == 0)
		drv.mem_free = (mem_free_fn)p;
	return drv.mem_alloc ? 0 : 35;
}

/* STANDIN_PAD: 4 KiB of code before the functions below (1) or after them
 * (2): two builds of the same size whose functions lie at different offsets
 * (test/scope/reload.c: a stale address into one build then lands
 * mid-function in the other, mapped at the same place). */
#if defined(STANDIN_PAD)
SI void standin_pad(void);
#endif
#if defined(STANDIN_PAD) && STANDIN_PAD == 1
void standin_pad(void) { __asm__ volatile(".skip 4096, 0x90"); }
#endif

/* STANDIN_DEVICES (default 1): the device count this build reports, so that
 * a test can tell two builds of the same major apart (test/scope/reload.c). */
#ifndef STANDIN_DEVICES
#define STANDIN_DEVICES 1
#endif
SI int cudaGetDeviceCount(int *n);
int cudaGetDeviceCount(int *n) { *n = STANDIN_DEVICES; return 0; }

/* Built for two majors (STANDIN_MAJOR, default 13; the Makefile also builds a
 * libcudart.so.12), so that a test can tell which runtime answered a call. */
#ifndef STANDIN_MAJOR
#define STANDIN_MAJOR 13
#endif
SI int cudaRuntimeGetVersion(int *v);
int cudaRuntimeGetVersion(int *v) { *v = STANDIN_MAJOR * 1000; return 0; }

SI int cudaMalloc(void **p, size_t n);
int cudaMalloc(void **p, size_t n)
{
	int r = driver();
	if (r)
		return r;
	unsigned long long d = 0;
	if (drv.mem_alloc(&d, n))
		return 2; /* cudaErrorMemoryAllocation */
	*p = (void *)(uintptr_t)d;
	return 0;
}

SI int cudaFree(void *p);
int cudaFree(void *p)
{
	int r = driver();
	if (r)
		return r;
	return p ? drv.mem_free((unsigned long long)(uintptr_t)p) : 0;
}

static uintptr_t async_next = 0x7e0000000000u;
SI int cudaMallocAsync(void **p, size_t n, void *stream);
int cudaMallocAsync(void **p, size_t n, void *stream) { *p = (void *)async_next; async_next += (n + 0xfff) & ~(uintptr_t)0xfff; return 0; }
SI int cudaFreeAsync(void *p, void *stream);
int cudaFreeAsync(void *p, void *stream) { return 0; }
SI int cudaMemcpy(void *d, const void *s, size_t n, int kind);
int cudaMemcpy(void *d, const void *s, size_t n, int kind) { return 0; }
SI int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *stream);
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *stream) { return 0; }
SI int cudaMemset(void *d, int v, size_t n);
/* As cudaStreamSynchronize's knob below, for a call that is not a
 * synchronization (test/integration/live_pystack.sh): with
 * STANDIN_MEMSET_SLEEP_AT=N and STANDIN_MEMSET_SLEEP_MS=M the Nth call
 * sleeps M ms. */
static unsigned long memset_calls;
static void standin_sleep_at(unsigned long *calls, const char *at, const char *ms);
int cudaMemset(void *d, int v, size_t n)
{
	(void)d;
	(void)v;
	(void)n;
	standin_sleep_at(&memset_calls, getenv("STANDIN_MEMSET_SLEEP_AT"),
			 getenv("STANDIN_MEMSET_SLEEP_MS"));
	return 0;
}
SI int cudaDeviceSynchronize(void);
int cudaDeviceSynchronize(void) { return 0; }
SI int cudaStreamSynchronize(void *s);
/* Knob for the live-state tests (test/integration/live_ranks.sh): with
 * STANDIN_SYNC_SLEEP_AT=N and STANDIN_SYNC_SLEEP_MS=M in the environment,
 * the Nth call (from 1) of this process sleeps M ms, as a synchronization
 * waiting for a GPU that does not finish.  Without them it returns at once. */
static unsigned long sync_calls;
static void standin_sleep_at(unsigned long *calls, const char *at, const char *ms)
{
	if (at && *at && ms && ++*calls == strtoul(at, NULL, 10)) {
		struct timespec ts = { atol(ms) / 1000, (atol(ms) % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) != 0)
			;
	}
}
int cudaStreamSynchronize(void *s)
{
	(void)s;
	standin_sleep_at(&sync_calls, getenv("STANDIN_SYNC_SLEEP_AT"), getenv("STANDIN_SYNC_SLEEP_MS"));
	return 0;
}
SI int cudaGetLastError(void);
int cudaGetLastError(void) { return 0; }

SI int cudaLaunchKernel(const void *f, dim3_t g, dim3_t b, void **args, size_t shm, void *stream);
int cudaLaunchKernel(const void *f, dim3_t g, dim3_t b, void **args, size_t shm, void *stream)
{
	__asm__ __volatile__("" ::: "memory");
	return 0;
}

/* What nvcc-generated code calls. */
static char fatbin_handle;
SI void **__cudaRegisterFatBinary(void *fat);
void **__cudaRegisterFatBinary(void *fat) { return (void **)&fatbin_handle; }
SI void __cudaRegisterFatBinaryEnd(void **h);
void __cudaRegisterFatBinaryEnd(void **h) {}
SI void __cudaUnregisterFatBinary(void **h);
void __cudaUnregisterFatBinary(void **h) {}
SI void __cudaRegisterFunction(void **h, const char *host, char *dev, const char *name, int tl,
			       void *tid, void *bid, dim3_t *bd, dim3_t *gd, int *ws);
void __cudaRegisterFunction(void **h, const char *host, char *dev, const char *name, int tl,
			    void *tid, void *bid, dim3_t *bd, dim3_t *gd, int *ws) {}

static struct {
	dim3_t g, b;
	size_t shm;
	void *stream;
} pushed;
SI unsigned __cudaPushCallConfiguration(dim3_t g, dim3_t b, size_t shm, void *stream);
unsigned __cudaPushCallConfiguration(dim3_t g, dim3_t b, size_t shm, void *stream)
{
	pushed.g = g;
	pushed.b = b;
	pushed.shm = shm;
	pushed.stream = stream;
	return 0;
}
SI int __cudaPopCallConfiguration(dim3_t *g, dim3_t *b, size_t *shm, void *stream);
int __cudaPopCallConfiguration(dim3_t *g, dim3_t *b, size_t *shm, void *stream)
{
	*g = pushed.g;
	*b = pushed.b;
	*shm = pushed.shm;
	memcpy(stream, &pushed.stream, sizeof(void *));
	return 0;
}
/* A kernel handle distinct from the stub address, as with the real one. */
SI int __cudaGetKernel(void **k, const void *host);
int __cudaGetKernel(void **k, const void *host) { *k = (void *)((uintptr_t)host + 0x100000); return 0; }
SI int __cudaLaunchKernel(void *k, dim3_t g, dim3_t b, void **args, size_t shm, void *stream);
int __cudaLaunchKernel(void *k, dim3_t g, dim3_t b, void **args, size_t shm, void *stream) { return 0; }

/* cudaProfilerStart/Stop: as the real runtime, they call the driver's
 * cuProfilerStart/Stop, found through cuGetProcAddress (so that traceprof
 * sees the driver's call nested in the runtime's); standin_profiler_calls()
 * counts the runtime's calls. */
static int profiler_calls;
static int profiler_driver(const char *name)
{
	if (driver())
		return 35;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	get_proc_fn gpa = h ? (get_proc_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	void *p = NULL;
	int st;
	if (!gpa || gpa(name, &p, 13000, 0, &st) || !p)
		return 35;
	return ((int (*)(void))p)() ? 999 : 0;
}
SI int cudaProfilerStart(void);
int cudaProfilerStart(void)
{
	profiler_calls++;
	return profiler_driver("cuProfilerStart");
}
SI int cudaProfilerStop(void);
int cudaProfilerStop(void)
{
	profiler_calls++;
	return profiler_driver("cuProfilerStop");
}
SI int standin_profiler_calls(void);
int standin_profiler_calls(void) { return profiler_calls; }

#if defined(STANDIN_PAD) && STANDIN_PAD == 2
void standin_pad(void) { __asm__ volatile(".skip 4096, 0x90"); }
#endif
