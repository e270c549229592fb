/* A test program that does what nvcc-generated code and a CUDA program do,
 * written in C against the test stand-ins (fake_cudart.c, fake_cuda.c), so
 * that the success paths can be traced without a GPU.  It prints what it
 * observes; test/integration/cuda_standin.sh runs it with and without
 * traceprof, requires the same output, and checks the trace. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	unsigned x, y, z;
} dim3_t;

int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMallocAsync(void **p, size_t n, void *stream);
int cudaFreeAsync(void *p, void *stream);
int cudaMemcpy(void *d, const void *s, size_t n, int kind);
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *stream);
int cudaMemset(void *d, int v, size_t n);
int cudaDeviceSynchronize(void);
int cudaStreamSynchronize(void *s);
int cudaLaunchKernel(const void *f, dim3_t g, dim3_t b, void **args, size_t shm, void *stream);
void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFatBinaryEnd(void **h);
void __cudaRegisterFunction(void **h, const char *host, char *dev, const char *name, int tl,
			    void *tid, void *bid, dim3_t *bd, dim3_t *gd, int *ws);
unsigned __cudaPushCallConfiguration(dim3_t g, dim3_t b, size_t shm, void *stream);
int __cudaPopCallConfiguration(dim3_t *g, dim3_t *b, size_t *shm, void *stream);
int __cudaGetKernel(void **k, const void *host);
int __cudaLaunchKernel(void *k, dim3_t g, dim3_t b, void **args, size_t shm, void *stream);

typedef int (*gpa_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*htod_fn)(unsigned long long, const void *, size_t);
typedef int (*alloc_v1_fn)(unsigned *, unsigned);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);
typedef int (*getfn_fn)(void **, void *, const char *);

/* The host stub of a kernel, as nvcc emits one per __global__ function. */
static void saxpy_stub(int n, float a, float *x, float *y)
{
	(void)n, (void)a, (void)x, (void)y;
}

/* Registration runs from a static constructor in nvcc's output, usually
 * before traceprof's own constructor: the registry must work then. */
__attribute__((constructor)) static void register_module(void)
{
	static char fatbin[16];
	void **h = __cudaRegisterFatBinary(fatbin);
	/* STANDIN_KERNEL_NAME: another mangled name for it (cuda_long_name.sh). */
	const char *name = getenv("STANDIN_KERNEL_NAME");
	if (!name)
		name = "_Z5saxpyifPfS_";
	__cudaRegisterFunction(h, (const char *)saxpy_stub, (char *)name, name, -1, 0, 0, 0, 0,
			       0);
	__cudaRegisterFatBinaryEnd(h);
}

int main(void)
{
	void *stream = (void *)0x5000;
	void *d = NULL, *a = NULL;
	static char host[4096];
	/* errno passes through the wrappers untouched, also on the first
	 * recorded call of a thread (which creates its ring). */
	errno = 4242;
	int rc = cudaMalloc(&d, 1 << 20);
	printf("errno-after-first-call=%d\n", errno);
	printf("cudaMalloc=%d\n", rc);
	errno = 77;
	rc = cudaMemset(d, 1, 8);
	printf("errno-after-call=%d\n", errno);
	printf("cudaMallocAsync=%d\n", cudaMallocAsync(&a, 8192, stream));
	printf("cudaMemcpy=%d\n", cudaMemcpy(d, host, sizeof(host), 1));
	printf("cudaMemcpyAsync=%d\n", cudaMemcpyAsync(host, d, 512, 2, stream));
	printf("cudaMemset=%d\n", cudaMemset(d, 7, 100));

	/* saxpy<<<dim3(4, 2), 128, 256, stream>>>(...), as nvcc expands it. */
	dim3_t g = { 4, 2, 1 }, b = { 128, 1, 1 }, g2, b2;
	size_t shm;
	void *st;
	int n = 1;
	float f = 2;
	float *x = 0, *y = 0;
	void *args[] = { &n, &f, &x, &y };
	__cudaPushCallConfiguration(g, b, 256, stream);
	__cudaPopCallConfiguration(&g2, &b2, &shm, &st);
	void *k = NULL;
	printf("__cudaGetKernel=%d\n", __cudaGetKernel(&k, (const void *)saxpy_stub));
	printf("__cudaLaunchKernel=%d\n", __cudaLaunchKernel(k, g2, b2, args, shm, st));
	/* Every field of both dim3s distinct and x above 16 bits, so that the
	 * packing of each is checked. */
	dim3_t g3 = { 70000, 3, 2 }, b3 = { 32, 4, 2 };
	printf("cudaLaunchKernel=%d\n", cudaLaunchKernel((const void *)saxpy_stub, g3, b3, args, 0, 0));

	printf("cudaStreamSynchronize=%d\n", cudaStreamSynchronize(stream));
	printf("cudaFreeAsync=%d\n", cudaFreeAsync(a, stream));
	printf("cudaFree=%d\n", cudaFree(d));
	printf("cudaDeviceSynchronize=%d\n", cudaDeviceSynchronize());

	/* The driver, as the runtime and libraries reach it. */
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	const char **last = h ? (const char **)dlsym(h, "fake_cuda_last") : NULL;
	gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!gpa || !last) {
		printf("no driver\n");
		return 1;
	}
	void *p = NULL;
	int status = -1, r, c;
	/* One call per statement: printf's arguments have no evaluation order. */
	r = gpa("cuMemcpyHtoD", &p, 13000, 2, &status);
	c = ((htod_fn)p)(0x7f0000000000ull, host, 64);
	printf("pa(cuMemcpyHtoD, ptds)=%d call=%d variant=%s\n", r, c, *last);
	r = gpa("cuMemcpyHtoD", &p, 13000, 0, &status);
	c = ((htod_fn)p)(0x7f0000000000ull, host, 64);
	printf("pa(cuMemcpyHtoD, default)=%d call=%d variant=%s\n", r, c, *last);
	unsigned small = 0;
	r = gpa("cuMemAlloc", &p, 3000, 0, &status);
	c = ((alloc_v1_fn)p)(&small, 64);
	printf("pa(cuMemAlloc, 3000)=%d call=%d variant=%s ptr=%#x\n", r, c, *last, small);
	p = (void *)1;
	r = gpa("cuCtxSynchronize", &p, 13000, 0, &status);
	printf("pa(cuCtxSynchronize)=%d null=%d\n", r, p == NULL);
	p = (void *)1;
	r = gpa("cuBogus", &p, 13000, 0, &status);
	printf("pa(cuBogus)=%d null=%d\n", r, p == NULL);
	r = gpa("cuGetProcAddress", &p, 13000, 0, &status);
	printf("pa(cuGetProcAddress)=%d self=%d\n", r, p == (void *)gpa);
	getfn_fn getfn;
	gpa("cuModuleGetFunction", (void **)&getfn, 13000, 0, &status);
	void *fn = NULL;
	getfn(&fn, NULL, "saxpy_drv");
	launch_fn launch;
	r = gpa("cuLaunchKernel", (void **)&launch, 13000, 2, &status);
	c = launch(fn, 8, 1, 1, 64, 2, 1, 512, stream, NULL, NULL);
	printf("pa(cuLaunchKernel, ptsz)=%d call=%d variant=%s\n", r, c, *last);
	/* symbolStatus as the driver fills it (0 found, 1 no such symbol, 2
	 * version not sufficient), and cuGetExportTable's table untouched. */
	status = -1;
	r = gpa("cuProfilerStart", &p, 13000, 0, &status);
	printf("pa(cuProfilerStart)=%d status=%d\n", r, status);
	status = -1;
	r = gpa("cuProfilerStart", &p, 3000, 0, &status);
	printf("pa(cuProfilerStart, 3000)=%d status=%d null=%d\n", r, status, p == NULL);
	status = -1;
	r = gpa("cuBogus", &p, 13000, 0, &status);
	printf("pa(cuBogus) status=%d\n", status);
	typedef int (*export_fn)(const void **, const void *);
	typedef const void *(*table_fn)(void);
	export_fn get_table = NULL;
	r = gpa("cuGetExportTable", (void **)&get_table, 13000, 0, &status);
	table_fn real_table = (table_fn)dlsym(h, "fake_cuda_export_table");
	static const unsigned char table_id[16] = { 0x42 }, no_id[16] = { 0x17 };
	const void *table = NULL;
	if (get_table && real_table) {
		c = get_table(&table, table_id);
		printf("cuGetExportTable=%d same=%d\n", c, table == real_table());
		c = get_table(&table, no_id);
		printf("cuGetExportTable(unknown)=%d null=%d\n", c, table == NULL);
	} else {
		printf("cuGetExportTable: pa=%d, not found\n", r);
	}
	Dl_info info;
	/* Where the function handed out lives: traceprof when traced.  Printed
	 * to stderr, since it is the one line that must differ. */
	if (dladdr((void *)launch, &info) && info.dli_fname)
		fprintf(stderr, "cuLaunchKernel pointer in %s\n", info.dli_fname);
	return 0;
}
