/* Writing speed and size of traces, per output mode, and the cost of a
 * stack capture.
 *
 *   bench_compress [EVENTS] [RUNS] [FOLDER]
 *
 * Writes EVENTS (default 2000000) CUDA API events through format/trace.h and
 * format/json.h into a real sink (format/sink.h) in FOLDER (default /dev/shm,
 * else /tmp, so that the disk does not set the pace), RUNS times (default 5)
 * per setting, and prints the median and the spread (min..max) of events per
 * second (one core: the flush thread's) and bytes per event:
 *   - "result only": the smallest API event, whose only arg is its result
 *     (the bound of the issue: <= 130 bytes, >= 15M events/s in plain JSON);
 *   - "mix": a realistic mix of a training step's host calls (kernel launches
 *     with names, grids and blocks, async copies with sizes, driver
 *     launches, synchronizations, ProfilerStep ranges) in plain JSON, zstd at
 *     levels 1, 3 and 6 (and the fast level -3, for comparison), and gzip.
 * Then times unw_backtrace() at depth 16, which TRACEPROF_WITH_STACK adds to
 * every recorded call.
 *
 * Build: make build/libtpcore.a, then
 *   gcc -O2 -std=gnu11 -D_GNU_SOURCE -I. bench/bench_compress.c build/libtpcore.a \
 *       -lzstd -lz -lm -lpthread -o build/bench/bench_compress
 * (libunwind is found at run time, so -lunwind is optional). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/json.h"
#include "format/sink.h"
#include "format/trace.h"

static double bc_clock(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double bc_now(void)
{
	return bc_clock(CLOCK_MONOTONIC);
}

/* CPU time of this (single-threaded) process: on a shared machine whose CPU
 * is partly taken by others, events per CPU second is the per-core rate. */
static double bc_cpu(void)
{
	return bc_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* xorshift64*: deterministic, so that every run writes the same bytes. */
static uint64_t bc_rng = 88172645463325252ull;
static uint64_t bc_rand(void)
{
	bc_rng ^= bc_rng >> 12;
	bc_rng ^= bc_rng << 25;
	bc_rng ^= bc_rng >> 27;
	return bc_rng * 2685821657736338717ull;
}

static const char *const bc_kernels[] = {
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
	"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
	"at::detail::Array<char*, 3>)",
	"ampere_sgemm_128x64_tn",
	"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
	"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, "
	"float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)",
	"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
	"float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
	"at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
	"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8>("
	"cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8::Params)",
	"flash_fwd_kernel",
	"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
	"at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
	"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
	"TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
	"const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned "
	"int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
	"at::native::memory::StoreWithCast<1> >(int, ...)",
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
};
#define BC_NKERNELS (sizeof(bc_kernels) / sizeof(bc_kernels[0]))

struct bc_state {
	uint64_t ns;	 /* monotonic time of the next event */
	uint64_t corr;	 /* correlation ids */
	uint64_t step;
	uint64_t in_step; /* events since the step started */
	int64_t pid, tid;
};

static void bc_api_open(struct tp_trace *t, struct bc_state *s, const char *cat,
			const char *name, uint64_t dur)
{
	tp_trace_complete_open(t, cat, name, strlen(name), s->pid, s->tid, s->ns, s->ns + dur);
	s->ns += dur + 500 + bc_rand() % 4000;
}

static void bc_dim3(struct tp_json *j, const char *key, uint64_t x, uint64_t y, uint64_t z)
{
	tp_json_lit(j, key);
	tp_json_u64(j, x);
	tp_json_char(j, ',');
	tp_json_u64(j, y);
	tp_json_char(j, ',');
	tp_json_u64(j, z);
	tp_json_char(j, ']');
}

static void bc_common_args(struct tp_json *j, struct bc_state *s, unsigned cbid)
{
	tp_json_lit(j, ",\"args\":{\"result\":0,\"cbid\":");
	tp_json_u64(j, cbid);
	tp_json_lit(j, ",\"correlation\":");
	tp_json_u64(j, ++s->corr);
}

/* One event of a training step's host side. */
static void bc_mix_event(struct tp_trace *t, struct bc_state *s)
{
	struct tp_json *j = &t->j;
	uint64_t r = bc_rand();
	unsigned pick = (unsigned)(r % 100);
	if (s->in_step++ == 2000) {
		char name[40];
		int n = snprintf(name, sizeof(name), "ProfilerStep#%llu", (unsigned long long)s->step++);
		tp_trace_complete_open(t, "user_annotation", name, (size_t)n, s->pid, s->tid,
				       s->ns - 9000000, s->ns);
		tp_trace_event_close(t);
		s->in_step = 0;
		return;
	}
	if (pick < 60) {
		const char *k = bc_kernels[(r >> 8) % BC_NKERNELS];
		bc_api_open(t, s, "cuda_runtime", "cudaLaunchKernel", 2000 + (r >> 20) % 3000);
		bc_common_args(j, s, 211);
		tp_json_lit(j, ",\"kernel\":");
		tp_json_str(j, k);
		bc_dim3(j, ",\"grid\":[", 1 + (r >> 24) % 4096, 1 + (r >> 36) % 8, 1);
		bc_dim3(j, ",\"block\":[", 128u << ((r >> 40) % 3), 1, 1);
		tp_json_lit(j, ",\"stream\":7}");
	} else if (pick < 75) {
		bc_api_open(t, s, "cuda_runtime", "cudaMemcpyAsync", 3000 + (r >> 20) % 5000);
		bc_common_args(j, s, 41);
		tp_json_lit(j, ",\"bytes\":");
		tp_json_u64(j, (uint64_t)4 << ((r >> 30) % 24));
		tp_json_lit(j, ",\"kind\":\"HtoD\",\"stream\":7}");
	} else if (pick < 85) {
		bc_api_open(t, s, "cuda_driver", "cuLaunchKernel", 1500 + (r >> 20) % 2000);
		bc_common_args(j, s, 307);
		tp_json_lit(j, ",\"kernel\":");
		tp_json_str(j, bc_kernels[6]);
		bc_dim3(j, ",\"grid\":[", 1 + (r >> 24) % 1024, 16, 1);
		bc_dim3(j, ",\"block\":[", 128, 1, 1);
		tp_json_char(j, '}');
	} else if (pick < 92) {
		bc_api_open(t, s, "cuda_runtime", "cudaStreamSynchronize", 10000 + (r >> 20) % 900000);
		bc_common_args(j, s, 131);
		tp_json_char(j, '}');
	} else {
		bc_api_open(t, s, "cuda_runtime", "cudaEventRecord", 1000 + (r >> 20) % 1000);
		bc_common_args(j, s, 135);
		tp_json_char(j, '}');
	}
	tp_trace_event_close(t);
}

/* The smallest API event: its result is its only arg. */
static void bc_result_event(struct tp_trace *t, struct bc_state *s)
{
	static const char *const names[] = { "cudaLaunchKernel", "cudaMemcpyAsync",
					     "cudaStreamSynchronize", "cudaEventRecord" };
	uint64_t r = bc_rand();
	bc_api_open(t, s, "cuda_runtime", names[r % 4], 2000 + (r >> 20) % 3000);
	tp_json_lit(&t->j, ",\"args\":{\"result\":0}");
	tp_trace_event_close(t);
}

struct bc_result {
	double evs;	  /* events per second of CPU time */
	double wall;	  /* events per second of wall time */
	double bytes;	  /* file bytes per event */
	double json;	  /* JSON bytes per event */
};

static const char *bc_folder;

/* Writes one trace file of n events and returns its figures. */
static int bc_run(int compress, int level, int mix, uint64_t n, struct bc_result *res)
{
	struct tp_sink *sink;
	char name[64], path[4096];
	snprintf(name, sizeof(name), "bench.%ld.json", (long)getpid());
	int rc = tp_sink_open(&sink, bc_folder, name, compress, level, 1);
	if (rc < 0) {
		fprintf(stderr, "bench_compress: cannot open a sink in %s: %s\n", bc_folder,
			strerror(-rc));
		return -1;
	}
	struct tp_trace t;
	memset(&t, 0, sizeof(t));
	if (tp_json_init(&t.j, sink) < 0)
		return -1;
	/* The sizes of real runs: times 45 days after the base (the middle of
	 * Kineto's 90-day bucket: 13 digits of microseconds), and a pid and tid
	 * of 7 digits (pid_max is 4194304 on current distributions). */
	struct tp_trace_header h = { .trace_name = name, .base_wall_ns = 1775000000000000000ll,
				     .wall_offset_ns = 1775000000000000000ll,
				     .pid = 1234567, .rank = 0, .world_size = 1, .launcher = "none" };
	struct bc_state s = { .ns = 45ull * 86400 * 1000000000ull, .pid = 1234567,
			      .tid = 1234567 };
	bc_rng = 88172645463325252ull;
	double t0 = bc_now(), c0 = bc_cpu();
	tp_trace_begin(&t, &h);
	for (uint64_t i = 0; i < n; i++) {
		if (mix)
			bc_mix_event(&t, &s);
		else
			bc_result_event(&t, &s);
	}
	tp_trace_footer_open(&t);
	tp_json_lit(&t.j, "\"version\":\"bench\"");
	tp_trace_footer_close(&t);
	uint64_t json_bytes = tp_json_total(&t.j) + 3;
	rc = tp_trace_end(&t);
	if (!rc)
		rc = tp_sink_close(sink, path, sizeof(path));
	else
		tp_sink_abort(sink);
	double t1 = bc_now(), c1 = bc_cpu();
	tp_json_free(&t.j);
	if (rc) {
		fprintf(stderr, "bench_compress: writing failed: %s\n", strerror(-rc));
		return -1;
	}
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	unlink(path);
	res->evs = (double)n / (c1 - c0);
	res->wall = (double)n / (t1 - t0);
	res->bytes = (double)st.st_size / (double)n;
	res->json = (double)json_bytes / (double)n;
	return 0;
}

static int bc_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct bc_stat {
	double med, lo, hi;
};

static struct bc_stat bc_summary(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bc_cmp);
	struct bc_stat s = { n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1] };
	return s;
}

#define BC_MAX_RUNS 101

static int bc_setting(const char *label, int compress, int level, int mix, uint64_t n, int runs)
{
	double evs[BC_MAX_RUNS], wall[BC_MAX_RUNS], bytes[BC_MAX_RUNS], json[BC_MAX_RUNS];
	for (int i = 0; i < runs; i++) {
		struct bc_result r;
		if (bc_run(compress, level, mix, n, &r) < 0)
			return -1;
		evs[i] = r.evs / 1e6;
		wall[i] = r.wall / 1e6;
		bytes[i] = r.bytes;
		json[i] = r.json;
	}
	struct bc_stat e = bc_summary(evs, runs), w = bc_summary(wall, runs),
		       b = bc_summary(bytes, runs), js = bc_summary(json, runs);
	printf("%-20s %6.2f (%.2f..%.2f) %6.2f (%.2f..%.2f) %8.2f %8.2f %6.1fx\n", label, e.med,
	       e.lo, e.hi, w.med, w.lo, w.hi, b.med, js.med, js.med / b.med);
	return 0;
}

/* ---- stack capture -------------------------------------------------------- */

typedef int (*bc_backtrace_fn)(void **, int);

static bc_backtrace_fn bc_unw;
static volatile int bc_depth_sink;

/* Recurses to `depth` frames, then times `iters` captures of 16 frames. */
__attribute__((noinline)) static double bc_capture(int depth, long iters)
{
	if (depth > 0) {
		double r = bc_capture(depth - 1, iters);
		bc_depth_sink++; /* no tail call: the frame stays */
		return r;
	}
	void *ips[16];
	int got = 0;
	double t0 = bc_cpu();
	for (long i = 0; i < iters; i++)
		got += bc_unw(ips, 16);
	double t1 = bc_cpu();
	if (got != 16 * iters)
		fprintf(stderr, "bench_compress: captured %d frames, expected %ld\n", got,
			16 * iters);
	return (t1 - t0) / (double)iters * 1e9;
}

static void bc_stacks(int runs)
{
	void *p = dlsym(RTLD_DEFAULT, "unw_backtrace");
	if (!p) {
		void *h = dlopen("libunwind.so.8", RTLD_NOW);
		p = h ? dlsym(h, "unw_backtrace") : NULL;
	}
	if (!p) {
		printf("stack capture: libunwind not found, not measured\n");
		return;
	}
	memcpy(&bc_unw, &p, sizeof(p));
	double ns[BC_MAX_RUNS];
	bc_capture(24, 1000); /* warms libunwind's caches, as a long run does */
	for (int i = 0; i < runs; i++)
		ns[i] = bc_capture(24, 200000);
	struct bc_stat s = bc_summary(ns, runs);
	printf("stack capture (unw_backtrace, depth 16, CPU time)  %.0f ns/event (%.0f..%.0f)\n", s.med,
	       s.lo, s.hi);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	struct stat st;
	bc_folder = argc > 3 ? argv[3] : stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp";
	if (n == 0 || runs < 1 || runs > BC_MAX_RUNS) {
		fprintf(stderr, "usage: bench_compress [EVENTS] [RUNS 1-%d] [FOLDER]\n",
			BC_MAX_RUNS);
		return 2;
	}
	printf("%llu events per file, median of %d runs (min..max), one core, files in %s\n",
	       (unsigned long long)n, runs, bc_folder);
	printf("%-20s %-20s %-20s %8s %8s %7s\n", "setting", "M ev/s (CPU time)",
	       "M ev/s (wall)", "B/event", "JSON B/ev", "ratio");
	if (bc_setting("result only, plain", TP_SINK_PLAIN, 0, 0, n, runs) ||
	    bc_setting("mix, plain", TP_SINK_PLAIN, 0, 1, n, runs) ||
	    bc_setting("mix, zstd --fast=3", TP_SINK_ZSTD, -3, 1, n, runs) ||
	    bc_setting("mix, zstd -1", TP_SINK_ZSTD, 1, 1, n, runs) ||
	    bc_setting("mix, zstd -3", TP_SINK_ZSTD, 3, 1, n, runs) ||
	    bc_setting("mix, zstd -6", TP_SINK_ZSTD, 6, 1, n, runs) ||
	    bc_setting("mix, gzip -1", TP_SINK_GZIP, 0, 1, n, runs))
		return 1;
	bc_stacks(runs);
	return 0;
}
