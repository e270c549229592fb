/* Drives intercepted CUDA entry points through dlopen + dlsym, as the CUDA
 * runtime and PyTorch reach them (the library's dlsym hook hands out its
 * wrappers):
 *   prog_cuda_calls cuinit        dlopen libcuda.so.1, call cuInit(0) once
 *   prog_cuda_calls count N       dlopen libcudart.so.13, N x cudaGetDeviceCount
 *   prog_cuda_calls launch N [US] cuDriverGetVersion (as the CUDA runtime
 *                                 starts), cuInit(0), then N x cuLaunchKernel of the
 *                                 function cuModuleGetFunction hands back,
 *                                 sleeping US microseconds after each
 *   prog_cuda_calls profiler WHEN LOOKUP N M
 *                                 launch as above, N times, then M times as
 *                                 a second CUPTI client does (torch.profiler):
 *                                 each launch inside a push of its own
 *                                 external id (500, 501, ...).  The client
 *                                 registers its buffer callbacks and enables
 *                                 kernels and external correlation before
 *                                 cuInit (WHEN=early) or after the N launches
 *                                 (late), finding CUPTI's functions with
 *                                 dlsym(RTLD_DEFAULT) (LOOKUP=default, as a
 *                                 program linked with libcupti binds them) or
 *                                 on a handle of libcupti.so.13 (handle, as
 *                                 XLA does); it prints what its callbacks
 *                                 received, and how many of its kernels are
 *                                 not on CUPTI's default clock (realtime).
 * Prints what the calls returned; the output must be the same with and
 * without the library. */
#include <cupti.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The symbol sym of library lib (dlopen + dlsym, as the runtime and PyTorch
 * reach the driver), or NULL after printing what is missing. */
static void *sym_of(const char *lib, const char *sym)
{
	void *h = dlopen(lib, RTLD_NOW);
	void *p = h ? dlsym(h, sym) : NULL;
	if (!p)
		printf("no %s\n", h ? sym : lib);
	return p;
}

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);

/* The second CUPTI client of `profiler` mode, and what its callbacks got. */
static struct {
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
	CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	uint8_t *bufs[64];	/* handed out by p_request, not yet completed */
	int kernels, foreign, failed;
	int off_clock; /* kernels not on CUPTI's default clock, CLOCK_REALTIME */
	char ext[1024];
	size_t extlen;
} P;

static void CUPTIAPI p_request(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = NULL;
	*size = 0;
	*max_records = 0;
	for (int i = 0; i < 64; i++)
		if (!P.bufs[i]) {
			*buf = P.bufs[i] = malloc(1 << 16);
			*size = *buf ? 1 << 16 : 0;
			return;
		}
}

static void CUPTIAPI p_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				size_t valid)
{
	(void)ctx, (void)stream, (void)size;
	int mine = -1;
	for (int i = 0; i < 64 && buf; i++)
		if (P.bufs[i] == buf)
			mine = i;
	if (mine < 0) {
		P.foreign++; /* not one of ours: never free it */
		return;
	}
	CUpti_Activity *r = NULL;
	while (P.next(buf, valid, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			P.kernels++;
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
			int64_t start = (int64_t)((CUpti_ActivityKernel10 *)r)->start;
			P.off_clock += start < now - 60000000000ll || start > now + 60000000000ll;
		}
		if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION &&
		    P.extlen + 24 < sizeof(P.ext))
			P.extlen += (size_t)snprintf(
				P.ext + P.extlen, sizeof(P.ext) - P.extlen, "%s%llu", P.extlen ? "," : "",
				(unsigned long long)((CUpti_ActivityExternalCorrelation *)r)->externalId);
	}
	free(buf);
	P.bufs[mine] = NULL;
}

static void p_start(void)
{
	P.failed += P.reg(p_request, p_complete) != CUPTI_SUCCESS;
	P.failed += P.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS;
	P.failed += P.enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) != CUPTI_SUCCESS;
}

static int profiler(const char *when, const char *lookup, int n, int m)
{
	int early = !strcmp(when, "early"), by_handle = !strcmp(lookup, "handle");
	void *h = dlopen("libcupti.so.13", RTLD_NOW | (by_handle ? RTLD_LOCAL : RTLD_GLOBAL));
	if (!h) {
		printf("no libcupti.so.13\n");
		return 4;
	}
	void *from = by_handle ? h : RTLD_DEFAULT;
	*(void **)&P.reg = dlsym(from, "cuptiActivityRegisterCallbacks");
	*(void **)&P.enable = dlsym(from, "cuptiActivityEnable");
	*(void **)&P.push = dlsym(from, "cuptiActivityPushExternalCorrelationId");
	*(void **)&P.pop = dlsym(from, "cuptiActivityPopExternalCorrelationId");
	*(void **)&P.flush = dlsym(from, "cuptiActivityFlushAll");
	*(void **)&P.next = dlsym(from, "cuptiActivityGetNextRecord");
	int (*init)(unsigned) = (int (*)(unsigned))sym_of("libcuda.so.1", "cuInit");
	int (*get)(void **, void *, const char *) = (int (*)(void **, void *, const char *))
		sym_of("libcuda.so.1", "cuModuleGetFunction");
	launch_fn launch = (launch_fn)sym_of("libcuda.so.1", "cuLaunchKernel");
	if (!P.reg || !P.enable || !P.push || !P.pop || !P.flush || !P.next || !init || !get ||
	    !launch) {
		printf("missing a CUPTI or driver function\n");
		return 4;
	}
	if (early)
		p_start();
	void *f = NULL;
	int r = init(0), bad = 0;
	int g = get(&f, NULL, "saxpy");
	for (int i = 0; i < n; i++)
		bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
	if (!early)
		p_start();
	for (int i = 0; i < m; i++) {
		P.failed += P.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 500 + (uint64_t)i) !=
			    CUPTI_SUCCESS;
		bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
		P.failed += P.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL) != CUPTI_SUCCESS;
	}
	P.failed += P.flush(0) != CUPTI_SUCCESS;
	printf("cuInit=%d get=%d launches=%d failed=%d client: kernels=%d ext=%s off_clock=%d "
	       "foreign=%d failed=%d\n",
	       r, g, n + m, bad, P.kernels, P.ext, P.off_clock, P.foreign, P.failed);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "cuinit")) {
		int (*init)(unsigned) = (int (*)(unsigned))sym_of("libcuda.so.1", "cuInit");
		if (!init)
			return 4;
		int r = init(0);
		usleep(20000);
		printf("cuInit=%d\n", r);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "launch")) {
		int (*init)(unsigned) = (int (*)(unsigned))sym_of("libcuda.so.1", "cuInit");
		int (*get)(void **, void *, const char *) = (int (*)(void **, void *, const char *))
			sym_of("libcuda.so.1", "cuModuleGetFunction");
		launch_fn launch = (launch_fn)sym_of("libcuda.so.1", "cuLaunchKernel");
		if (!init || !get || !launch)
			return 4;
		int (*version)(int *) = (int (*)(int *))sym_of("libcuda.so.1", "cuDriverGetVersion");
		int v = 0;
		if (version)
			version(&v);
		void *f = NULL;
		int r = init(0), n = atoi(argv[2]), bad = 0;
		int g = get(&f, NULL, "saxpy");
		useconds_t pause = argc > 3 ? (useconds_t)atoi(argv[3]) : 0;
		for (int i = 0; i < n; i++) {
			bad += launch(f, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL) != 0;
			if (pause)
				usleep(pause);
		}
		printf("cuInit=%d get=%d launches=%d failed=%d\n", r, g, n, bad);
		return 0;
	}
	if (argc > 5 && !strcmp(argv[1], "profiler"))
		return profiler(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc > 2 && !strcmp(argv[1], "count")) {
		int (*count)(int *) =
			(int (*)(int *))sym_of("libcudart.so.13", "cudaGetDeviceCount");
		if (!count)
			return 4;
		int n = atoi(argv[2]), r = 0, devs = 0;
		for (int i = 0; i < n; i++) {
			r |= count(&devs);
			usleep(2000);
		}
		printf("calls=%d result=%d\n", n, r);
		return 0;
	}
	fprintf(stderr, "usage: %s cuinit | count N | launch N | profiler early|late default|handle N M\n",
		argv[0]);
	return 2;
}
