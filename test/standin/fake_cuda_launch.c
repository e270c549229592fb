/* TEST STAND-IN, NOT NVIDIA'S DRIVER: part of build/standin/libcuda.so.1
 * (with fake_cuda.c).
 *
 * What numba-cuda (through cuda.core and cuda.bindings) and Triton's launcher
 * need, beyond fake_cuda.c, so that a kernel launch returns success on a
 * machine without a GPU (test/integration/cuda_pylaunch.sh): contexts,
 * modules and libraries that load any image, functions and kernels that
 * remember the name they were looked up by (cuFuncGetName and cuKernelGetName
 * answer it, as the real driver does), memory that is host memory, streams
 * and events that are always complete, and launches that do nothing.  Every
 * function is exported under its real versioned name (cuMemcpyDtoH_v2, ...)
 * and reached by its base name through cuGetProcAddress_v2
 * (fake_cuda_launch_proc()).  No CUDA header: the types have the real ABI. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SI __attribute__((visibility("default"), noinline))
typedef unsigned long long dptr_t;

extern const char *fake_cuda_last;
#define MARK() (fake_cuda_last = __func__)

/* ---- contexts ---------------------------------------------------------- */

/* The primary context of device 0 (fake_cuda.c's cuDevicePrimaryCtxRetain
 * hands out its own; any non-NULL handle is accepted below). */
static struct { int dummy; } ctx0;
static __thread void *current;

SI int cuCtxSetCurrent(void *ctx);
SI int cuCtxSetCurrent(void *ctx) { MARK(); current = ctx; return 0; }
SI int cuCtxGetCurrent(void **ctx);
SI int cuCtxGetCurrent(void **ctx) { MARK(); *ctx = current; return 0; }
SI int cuCtxPushCurrent_v2(void *ctx);
SI int cuCtxPushCurrent_v2(void *ctx) { MARK(); current = ctx; return ctx ? 0 : 201; }
SI int cuCtxPopCurrent_v2(void **ctx);
SI int cuCtxPopCurrent_v2(void **ctx)
{
	MARK();
	if (ctx)
		*ctx = current;
	current = NULL;
	return 0;
}
SI int cuCtxGetDevice(int *dev);
SI int cuCtxGetDevice(int *dev) { MARK(); *dev = 0; return current ? 0 : 201; }
SI int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev);
SI int cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev)
{
	MARK();
	*ctx = &ctx0;
	current = &ctx0;
	return dev == 0 ? 0 : 101;
}
SI int cuCtxDestroy_v2(void *ctx);
SI int cuCtxDestroy_v2(void *ctx) { MARK(); return 0; }
SI int cuCtxGetApiVersion(void *ctx, unsigned *v);
SI int cuCtxGetApiVersion(void *ctx, unsigned *v) { MARK(); *v = 13000; return 0; }
SI int cuCtxGetFlags(unsigned *flags);
SI int cuCtxGetFlags(unsigned *flags) { MARK(); *flags = 0; return 0; }
SI int cuCtxGetId(void *ctx, unsigned long long *id);
SI int cuCtxGetId(void *ctx, unsigned long long *id) { MARK(); *id = 1; return 0; }
SI int cuCtxGetLimit(size_t *v, int limit);
SI int cuCtxGetLimit(size_t *v, int limit) { MARK(); *v = 1024; return 0; }
SI int cuCtxSetLimit(int limit, size_t v);
SI int cuCtxSetLimit(int limit, size_t v) { MARK(); return 0; }
SI int cuDevicePrimaryCtxRelease_v2(int dev);
SI int cuDevicePrimaryCtxRelease_v2(int dev) { MARK(); return dev == 0 ? 0 : 101; }
SI int cuDevicePrimaryCtxReset_v2(int dev);
SI int cuDevicePrimaryCtxReset_v2(int dev) { MARK(); return dev == 0 ? 0 : 101; }
SI int cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active);
SI int cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active)
{
	MARK();
	*flags = 0;
	*active = 1;
	return dev == 0 ? 0 : 101;
}
SI int cuDevicePrimaryCtxSetFlags_v2(int dev, unsigned flags);
SI int cuDevicePrimaryCtxSetFlags_v2(int dev, unsigned flags) { MARK(); return 0; }

/* ---- the device -------------------------------------------------------- */

SI int cuDeviceGetUuid_v2(unsigned char *uuid, int dev);
SI int cuDeviceGetUuid_v2(unsigned char *uuid, int dev)
{
	MARK();
	for (int i = 0; i < 16; i++)
		uuid[i] = (unsigned char)(0x50 + i);
	return dev == 0 ? 0 : 101;
}
SI int cuDeviceGetPCIBusId(char *id, int len, int dev);
SI int cuDeviceGetPCIBusId(char *id, int len, int dev)
{
	static const char bus[] = "0000:00:00.0";
	MARK();
	if (len < (int)sizeof(bus))
		return 1;
	memcpy(id, bus, sizeof(bus));
	return 0;
}
SI int cuDeviceCanAccessPeer(int *can, int dev, int peer);
SI int cuDeviceCanAccessPeer(int *can, int dev, int peer) { MARK(); *can = 0; return 0; }

/* ---- memory: host memory under device addresses ------------------------ */

SI int cuMemGetInfo_v2(size_t *free_b, size_t *total);
SI int cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	MARK();
	*free_b = (size_t)1 << 29;
	*total = (size_t)1 << 30;
	return 0;
}
SI int cuMemcpyDtoH_v2(void *dst, dptr_t src, size_t n);
SI int cuMemcpyDtoH_v2(void *dst, dptr_t src, size_t n) { MARK(); memset(dst, 0, n); return 0; }
SI int cuMemcpyHtoDAsync_v2(dptr_t dst, const void *src, size_t n, void *st);
SI int cuMemcpyHtoDAsync_v2(dptr_t dst, const void *src, size_t n, void *st) { MARK(); return 0; }
SI int cuMemcpyDtoHAsync_v2(void *dst, dptr_t src, size_t n, void *st);
SI int cuMemcpyDtoHAsync_v2(void *dst, dptr_t src, size_t n, void *st)
{
	MARK();
	memset(dst, 0, n);
	return 0;
}
SI int cuMemcpyDtoD_v2(dptr_t dst, dptr_t src, size_t n);
SI int cuMemcpyDtoD_v2(dptr_t dst, dptr_t src, size_t n) { MARK(); return 0; }
SI int cuMemsetD8_v2(dptr_t dst, unsigned char v, size_t n);
SI int cuMemsetD8_v2(dptr_t dst, unsigned char v, size_t n) { MARK(); return 0; }
SI int cuMemsetD8Async(dptr_t dst, unsigned char v, size_t n, void *st);
SI int cuMemsetD8Async(dptr_t dst, unsigned char v, size_t n, void *st) { MARK(); return 0; }
SI int cuMemAllocHost_v2(void **p, size_t n);
SI int cuMemAllocHost_v2(void **p, size_t n) { MARK(); *p = calloc(1, n ? n : 1); return *p ? 0 : 2; }
SI int cuMemHostAlloc(void **p, size_t n, unsigned flags);
SI int cuMemHostAlloc(void **p, size_t n, unsigned flags) { MARK(); *p = calloc(1, n ? n : 1); return *p ? 0 : 2; }
SI int cuMemFreeHost(void *p);
SI int cuMemFreeHost(void *p) { MARK(); free(p); return 0; }
SI int cuPointerGetAttribute(void *data, int attr, dptr_t p);
SI int cuPointerGetAttribute(void *data, int attr, dptr_t p)
{
	MARK();
	/* CU_POINTER_ATTRIBUTE_CONTEXT (1): the context; others: 0. */
	if (attr == 1)
		*(void **)data = &ctx0;
	else
		memset(data, 0, sizeof(unsigned long long));
	return 0;
}
SI int cuMemGetAddressRange_v2(dptr_t *base, size_t *size, dptr_t p);
SI int cuMemGetAddressRange_v2(dptr_t *base, size_t *size, dptr_t p)
{
	MARK();
	if (base)
		*base = p;
	if (size)
		*size = 0;
	return 0;
}

/* ---- functions and kernels: named handles ------------------------------ */

/* A function or kernel handle is a slot that remembers the name it was
 * looked up by; the same slot serves as CUkernel and CUfunction (a CUkernel
 * may be passed where a CUfunction is expected). */
#define FN_SLOTS 64
struct fn_slot {
	char name[256];
};
static struct fn_slot fn_slots[FN_SLOTS];
static int fn_used;
static pthread_mutex_t fn_lock = PTHREAD_MUTEX_INITIALIZER;

static struct fn_slot *fn_named(const char *name)
{
	struct fn_slot *f = NULL;
	if (!name || strlen(name) >= sizeof(f->name))
		return NULL;
	pthread_mutex_lock(&fn_lock);
	for (int i = 0; i < fn_used && !f; i++)
		if (!strcmp(fn_slots[i].name, name))
			f = &fn_slots[i];
	if (!f && fn_used < FN_SLOTS) {
		f = &fn_slots[fn_used++];
		strcpy(f->name, name);
	}
	pthread_mutex_unlock(&fn_lock);
	return f;
}

/* The name of a slot handle, or NULL for any other pointer (fake_cuda.c's
 * cuFuncGetName and cuKernelGetName). */
SI const char *fake_cuda_launch_name(const void *h);
const char *fake_cuda_launch_name(const void *h)
{
	const struct fn_slot *f = h;
	if (f < fn_slots || f >= fn_slots + FN_SLOTS || (size_t)((const char *)f - (const char *)fn_slots) % sizeof(*f))
		return NULL;
	return f->name[0] ? f->name : NULL;
}

/* fake_cuda.c: "saxpy_drv" keeps its own handle there (older tests). */
SI int fake_cuda_launch_function(void **f, const char *name);
int fake_cuda_launch_function(void **f, const char *name)
{
	struct fn_slot *s = fn_named(name);
	*f = s;
	return s ? 0 : 500;
}

static struct { int dummy; } module0, library0, linker0;
static const char cubin[] = "stand-in cubin";

/* The module of real images (fake_cuda.c's cuModuleLoadData and
 * cuModuleGetFunction): an ELF image (a cubin) gets it, anything else NULL;
 * image NULL: the module itself. */
SI void *fake_cuda_launch_module(const void *image);
void *fake_cuda_launch_module(const void *image)
{
	if (!image)
		return &module0;
	return memcmp(image, "\177ELF", 4) ? NULL : &module0;
}

SI int cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals);
SI int cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	MARK();
	*mod = &module0;
	return image ? 0 : 1;
}
SI int cuModuleUnload(void *mod);
SI int cuModuleUnload(void *mod) { MARK(); return 0; }
SI int cuModuleGetGlobal_v2(dptr_t *p, size_t *bytes, void *mod, const char *name);
SI int cuModuleGetGlobal_v2(dptr_t *p, size_t *bytes, void *mod, const char *name)
{
	MARK();
	if (p)
		*p = 0x7e0000000000ull;
	if (bytes)
		*bytes = 8;
	return 0;
}
SI int cuLibraryLoadData(void **lib, const void *code, int *jopts, void **jvals, unsigned nj,
			 int *lopts, void **lvals, unsigned nl);
SI int cuLibraryLoadData(void **lib, const void *code, int *jopts, void **jvals, unsigned nj,
			 int *lopts, void **lvals, unsigned nl)
{
	MARK();
	*lib = &library0;
	return code ? 0 : 1;
}
SI int cuLibraryUnload(void *lib);
SI int cuLibraryUnload(void *lib) { MARK(); return 0; }
SI int cuLibraryGetKernel(void **k, void *lib, const char *name);
SI int cuLibraryGetKernel(void **k, void *lib, const char *name)
{
	MARK();
	return fake_cuda_launch_function(k, name);
}
SI int cuLibraryGetModule(void **mod, void *lib);
SI int cuLibraryGetModule(void **mod, void *lib) { MARK(); *mod = &module0; return 0; }
SI int cuLibraryGetGlobal(dptr_t *p, size_t *bytes, void *lib, const char *name);
SI int cuLibraryGetGlobal(dptr_t *p, size_t *bytes, void *lib, const char *name)
{
	MARK();
	return cuModuleGetGlobal_v2(p, bytes, &module0, name);
}
SI int cuKernelGetFunction(void **f, void *k);
SI int cuKernelGetFunction(void **f, void *k) { MARK(); *f = k; return fake_cuda_launch_name(k) ? 0 : 400; }
SI int cuKernelGetAttribute(int *v, int attr, void *k, int dev);
SI int cuKernelGetAttribute(int *v, int attr, void *k, int dev)
{
	MARK();
	*v = attr == 0 ? 1024 : 0; /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
	return 0;
}
SI int cuKernelSetAttribute(int attr, int v, void *k, int dev);
SI int cuKernelSetAttribute(int attr, int v, void *k, int dev) { MARK(); return 0; }
SI int cuKernelSetCacheConfig(void *k, int config, int dev);
SI int cuKernelSetCacheConfig(void *k, int config, int dev) { MARK(); return 0; }
SI int cuFuncGetAttribute(int *v, int attr, void *f);
SI int cuFuncGetAttribute(int *v, int attr, void *f)
{
	MARK();
	*v = attr == 0 ? 1024 : 0;
	return 0;
}
SI int cuFuncSetAttribute(void *f, int attr, int v);
SI int cuFuncSetAttribute(void *f, int attr, int v) { MARK(); return 0; }
SI int cuFuncSetCacheConfig(void *f, int config);
SI int cuFuncSetCacheConfig(void *f, int config) { MARK(); return 0; }
SI int cuFuncGetModule(void **mod, void *f);
SI int cuFuncGetModule(void **mod, void *f) { MARK(); *mod = &module0; return 0; }

/* The JIT linker: any input links into the same stand-in image. */
SI int cuLinkCreate_v2(unsigned n, int *opts, void **vals, void **state);
SI int cuLinkCreate_v2(unsigned n, int *opts, void **vals, void **state) { MARK(); *state = &linker0; return 0; }
SI int cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
			unsigned n, int *opts, void **vals);
SI int cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name,
			unsigned n, int *opts, void **vals)
{
	MARK();
	return 0;
}
SI int cuLinkAddFile_v2(void *state, int type, const char *path, unsigned n, int *opts, void **vals);
SI int cuLinkAddFile_v2(void *state, int type, const char *path, unsigned n, int *opts, void **vals)
{
	MARK();
	return 0;
}
SI int cuLinkComplete(void *state, void **out, size_t *size);
SI int cuLinkComplete(void *state, void **out, size_t *size)
{
	MARK();
	*out = (void *)cubin;
	*size = sizeof(cubin);
	return 0;
}
SI int cuLinkDestroy(void *state);
SI int cuLinkDestroy(void *state) { MARK(); return 0; }

SI int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t shm);
SI int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t shm)
{
	MARK();
	*n = 1;
	return 0;
}
SI int cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, void *f, int block, size_t shm,
							     unsigned flags);
SI int cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, void *f, int block, size_t shm,
							     unsigned flags)
{
	MARK();
	*n = 1;
	return 0;
}

/* ---- launches ---------------------------------------------------------- */

/* CUlaunchConfig's layout. */
struct launch_config {
	unsigned grid[3], block[3], shm;
	void *stream;
	void *attrs;
	unsigned nattrs;
};

SI int cuLaunchKernelEx(const struct launch_config *c, void *f, void **params, void **extra);
SI int cuLaunchKernelEx(const struct launch_config *c, void *f, void **params, void **extra)
{
	MARK();
	return c && f ? 0 : 1;
}
SI int cuLaunchKernelEx_ptsz(const struct launch_config *c, void *f, void **params, void **extra);
SI int cuLaunchKernelEx_ptsz(const struct launch_config *c, void *f, void **params, void **extra)
{
	MARK();
	return c && f ? 0 : 1;
}

/* ---- streams and events: always complete -------------------------------- */

static struct { int dummy; } stream1, event0;

SI int cuStreamCreateWithPriority(void **st, unsigned flags, int prio);
SI int cuStreamCreateWithPriority(void **st, unsigned flags, int prio) { MARK(); *st = &stream1; return 0; }
SI int cuStreamDestroy_v2(void *st);
SI int cuStreamDestroy_v2(void *st) { MARK(); return 0; }
SI int cuStreamQuery(void *st);
SI int cuStreamQuery(void *st) { MARK(); return 0; }
SI int cuStreamWaitEvent(void *st, void *ev, unsigned flags);
SI int cuStreamWaitEvent(void *st, void *ev, unsigned flags) { MARK(); return 0; }
SI int cuStreamGetCtx(void *st, void **ctx);
SI int cuStreamGetCtx(void *st, void **ctx) { MARK(); *ctx = &ctx0; return 0; }
SI int cuStreamGetPriority(void *st, int *prio);
SI int cuStreamGetPriority(void *st, int *prio) { MARK(); *prio = 0; return 0; }
SI int cuStreamGetFlags(void *st, unsigned *flags);
SI int cuStreamGetFlags(void *st, unsigned *flags) { MARK(); *flags = 0; return 0; }
SI int cuStreamGetId(void *st, unsigned long long *id);
SI int cuStreamGetId(void *st, unsigned long long *id) { MARK(); *id = st ? 1 : 0; return 0; }
SI int cuCtxGetStreamPriorityRange(int *least, int *greatest);
SI int cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	MARK();
	*least = 0;
	*greatest = -5;
	return 0;
}
SI int cuEventCreate(void **ev, unsigned flags);
SI int cuEventCreate(void **ev, unsigned flags) { MARK(); *ev = &event0; return 0; }
SI int cuEventDestroy_v2(void *ev);
SI int cuEventDestroy_v2(void *ev) { MARK(); return 0; }
SI int cuEventRecord(void *ev, void *st);
SI int cuEventRecord(void *ev, void *st) { MARK(); return 0; }
SI int cuEventQuery(void *ev);
SI int cuEventQuery(void *ev) { MARK(); return 0; }
SI int cuEventSynchronize(void *ev);
SI int cuEventSynchronize(void *ev) { MARK(); return 0; }
SI int cuEventElapsedTime_v2(float *ms, void *a, void *b);
SI int cuEventElapsedTime_v2(float *ms, void *a, void *b) { MARK(); *ms = 0.5f; return 0; }

/* ---- errors ------------------------------------------------------------ */

SI int cuGetErrorName(int err, const char **s);
SI int cuGetErrorName(int err, const char **s)
{
	*s = err == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_STAND_IN";
	return 0;
}
SI int cuGetErrorString(int err, const char **s);
SI int cuGetErrorString(int err, const char **s)
{
	*s = err == 0 ? "no error" : "stand-in driver error";
	return 0;
}

/* ---- cuGetProcAddress_v2 ----------------------------------------------- */

#define E(base, fn) { #base, (void *)fn }
static const struct {
	const char *base;
	void *fn;
} procs[] = {
	E(cuCtxGetCurrent, cuCtxGetCurrent),
	E(cuCtxPushCurrent, cuCtxPushCurrent_v2),
	E(cuCtxPopCurrent, cuCtxPopCurrent_v2),
	E(cuCtxGetDevice, cuCtxGetDevice),
	E(cuCtxCreate, cuCtxCreate_v4),
	E(cuCtxDestroy, cuCtxDestroy_v2),
	E(cuCtxGetApiVersion, cuCtxGetApiVersion),
	E(cuCtxGetFlags, cuCtxGetFlags),
	E(cuCtxGetId, cuCtxGetId),
	E(cuCtxGetLimit, cuCtxGetLimit),
	E(cuCtxSetLimit, cuCtxSetLimit),
	E(cuCtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange),
	E(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2),
	E(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2),
	E(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState),
	E(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2),
	E(cuDeviceGetUuid, cuDeviceGetUuid_v2),
	E(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId),
	E(cuDeviceCanAccessPeer, cuDeviceCanAccessPeer),
	E(cuMemGetInfo, cuMemGetInfo_v2),
	E(cuMemcpyDtoH, cuMemcpyDtoH_v2),
	E(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2),
	E(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2),
	E(cuMemcpyDtoD, cuMemcpyDtoD_v2),
	E(cuMemsetD8, cuMemsetD8_v2),
	E(cuMemsetD8Async, cuMemsetD8Async),
	E(cuMemAllocHost, cuMemAllocHost_v2),
	E(cuMemHostAlloc, cuMemHostAlloc),
	E(cuMemFreeHost, cuMemFreeHost),
	E(cuPointerGetAttribute, cuPointerGetAttribute),
	E(cuMemGetAddressRange, cuMemGetAddressRange_v2),
	E(cuModuleLoadDataEx, cuModuleLoadDataEx),
	E(cuModuleUnload, cuModuleUnload),
	E(cuModuleGetGlobal, cuModuleGetGlobal_v2),
	E(cuLibraryLoadData, cuLibraryLoadData),
	E(cuLibraryUnload, cuLibraryUnload),
	E(cuLibraryGetKernel, cuLibraryGetKernel),
	E(cuLibraryGetModule, cuLibraryGetModule),
	E(cuLibraryGetGlobal, cuLibraryGetGlobal),
	E(cuKernelGetFunction, cuKernelGetFunction),
	E(cuKernelGetAttribute, cuKernelGetAttribute),
	E(cuKernelSetAttribute, cuKernelSetAttribute),
	E(cuKernelSetCacheConfig, cuKernelSetCacheConfig),
	E(cuFuncGetAttribute, cuFuncGetAttribute),
	E(cuFuncSetAttribute, cuFuncSetAttribute),
	E(cuFuncSetCacheConfig, cuFuncSetCacheConfig),
	E(cuFuncGetModule, cuFuncGetModule),
	E(cuLinkCreate, cuLinkCreate_v2),
	E(cuLinkAddData, cuLinkAddData_v2),
	E(cuLinkAddFile, cuLinkAddFile_v2),
	E(cuLinkComplete, cuLinkComplete),
	E(cuLinkDestroy, cuLinkDestroy),
	E(cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor),
	E(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
	  cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
	E(cuStreamCreateWithPriority, cuStreamCreateWithPriority),
	E(cuStreamDestroy, cuStreamDestroy_v2),
	E(cuStreamQuery, cuStreamQuery),
	E(cuStreamWaitEvent, cuStreamWaitEvent),
	E(cuStreamGetCtx, cuStreamGetCtx),
	E(cuStreamGetPriority, cuStreamGetPriority),
	E(cuStreamGetFlags, cuStreamGetFlags),
	E(cuStreamGetId, cuStreamGetId),
	E(cuEventCreate, cuEventCreate),
	E(cuEventDestroy, cuEventDestroy_v2),
	E(cuEventRecord, cuEventRecord),
	E(cuEventQuery, cuEventQuery),
	E(cuEventSynchronize, cuEventSynchronize),
	E(cuEventElapsedTime, cuEventElapsedTime_v2),
	E(cuGetErrorName, cuGetErrorName),
	E(cuGetErrorString, cuGetErrorString),
};
#undef E

/* The variant of base name sym (fake_cuda.c's cuGetProcAddress_v2), or
 * NULL; ptds: the per-thread default stream was asked for. */
SI void *fake_cuda_launch_proc(const char *sym, int ptds);
void *fake_cuda_launch_proc(const char *sym, int ptds)
{
	if (!strcmp(sym, "cuLaunchKernelEx"))
		return ptds ? (void *)cuLaunchKernelEx_ptsz : (void *)cuLaunchKernelEx;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(procs[i].base, sym))
			return procs[i].fn;
	return NULL;
}
