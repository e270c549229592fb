/* The cost traceprof adds to an intercepted CUDA call: a no-op
 * cudaLaunchKernel of the test stand-in runtime (build/standin/libcudart.so.13),
 * looked up with dlopen + dlsym so that the same binary measures the plain
 * call (no preload) and the traced one (LD_PRELOAD=libtraceprof.so, where the
 * dlsym hook hands back the wrapper).
 *
 *   bench_cuda [stand-in libcudart] [calls]
 *
 * Without TP_BENCH_CHILD in the environment it runs itself twice, without and
 * with the library (TRACEPROF_LIB, default build/libtraceprof.so), a 16M-event
 * ring so that no record is dropped, and prints
 *   cuda_launch_ns_per_call=<traced> cuda_launch_untraced_ns_per_call=<plain>
 *   cuda_launch_overhead_ns=<difference> */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct dim3s {
	unsigned x, y, z;
};
typedef int (*launch_fn)(const void *, struct dim3s, struct dim3s, void **, size_t, void *);

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int child(const char *lib, long calls)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	launch_fn f = h ? (launch_fn)dlsym(h, "cudaLaunchKernel") : NULL;
	if (!f) {
		fprintf(stderr, "bench_cuda: cannot load cudaLaunchKernel from %s\n", lib);
		return 1;
	}
	struct dim3s g = { 1, 1, 1 }, b = { 128, 1, 1 };
	for (long i = 0; i < calls / 10; i++) /* warm-up */
		f((const void *)f, g, b, NULL, 0, NULL);
	double t0 = now_ns();
	for (long i = 0; i < calls; i++)
		f((const void *)f, g, b, NULL, 0, NULL);
	printf("%.2f\n", (now_ns() - t0) / (double)calls);
	return 0;
}

static double run(const char *self, const char *lib, long calls, const char *preload)
{
	char cmd[4096];
	char dir[] = "/tmp/tp-bench-cuda.XXXXXX";
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "TP_BENCH_CHILD=1 TRACEPROF_FOLDER=%s TRACEPROF_BUFFER_EVENTS=16777216 %s%s '%s' '%s' %ld;"
		 " rm -rf %s",
		 dir, preload ? "LD_PRELOAD=" : "", preload ? preload : "", self, lib, calls, dir);
	FILE *p = popen(cmd, "r");
	double v = -1;
	if (!p || fscanf(p, "%lf", &v) != 1)
		v = -1;
	if (p)
		pclose(p);
	return v;
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "build/standin/libcudart.so.13";
	long calls = argc > 2 ? atol(argv[2]) : 10000000;
	if (getenv("TP_BENCH_CHILD"))
		return child(lib, calls);
	const char *tp = getenv("TRACEPROF_LIB") ? getenv("TRACEPROF_LIB") : "build/libtraceprof.so";
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	double plain = run(self, lib, calls, NULL);
	double traced = run(self, lib, calls, tp);
	if (plain < 0 || traced < 0) {
		fprintf(stderr, "bench_cuda: a run failed\n");
		return 1;
	}
	printf("cuda_launch_ns_per_call=%.2f cuda_launch_untraced_ns_per_call=%.2f "
	       "cuda_launch_overhead_ns=%.2f calls=%ld\n",
	       traced, plain, traced - plain, calls);
	return 0;
}
