/* Writing speed and size of traces, per output mode, and the cost of a
 * stack capture.
 *
 *   bench_compress [EVENTS] [RUNS] [FOLDER] [ONLY]
 *
 * Writes EVENTS (default 2000000) CUDA API events through the real trace
 * writer (format/writer.h's events through the JSON writer, with the args of
 * format/api_args.h) into a real sink
 * (format/sink.h) in FOLDER (default /dev/shm, else /tmp, so that the disk
 * does not set the pace), RUNS times (default 5) per setting, and prints the
 * median and the spread (min..max) of events per second (one core: the flush
 * thread's; CPU time, see bc_cpu) and bytes per event.  ONLY, when given,
 * runs the settings whose label contains it (and skips the stack capture).
 * The last rows repeat the step mix at the default zstd level compressed in 1
 * and 2 threads of libzstd's (TRACEPROF_ZSTD_THREADS).
 *
 * The events are the bytes a real trace holds: a tp_event with "result" and
 * the tp_api_args_*() builders' args is what collector/cuda_decode.c writes a
 * record as, and kernel names are stable args (escaped once per kernel by
 * the writer) as there.  Sizes are the largest real runs give: pid and
 * tid of 7 digits (pid_max is 4194304 on current distributions) and times
 * 45 days after the base (the middle of Kineto's 90-day bucket: 13 digits of
 * microseconds, 3 decimals).
 *
 * Settings:
 *   - "result only": the smallest API event, whose only arg is its result
 *     (cudaEventRecord and friends; the bound of the issue: <= 130 bytes,
 *     >= 15 M events/s in plain JSON).  One of 4 API names per event.
 *   - "iid mix": every event drawn independently, so that no two steps look
 *     alike: the worst case for a compressor.  Per event: 60% cudaLaunchKernel
 *     (one of 10 PyTorch/cuBLAS/NCCL kernel names, grid x 1..4096 and y 1..8,
 *     block 128/256/512, dynamic shared memory 0 or 48 KiB (1 in 4)),
 *     15% cudaMemcpyAsync (4 B..32 MiB, HtoD/DtoH/DtoD, device-like
 *     addresses), 10% cuLaunchKernel (flash_fwd_kernel, grid x 1..1024),
 *     7% cudaStreamSynchronize, 8% cudaEventRecord (result only).  Streams:
 *     the default stream (0x0) or one created stream, 50/50.  Durations
 *     1-10 us (syncs up to 0.9 ms), gaps 0.5-4.5 us, and a ProfilerStep#N
 *     range every 2000 events.  These draws are the previous bench's, kept
 *     as they were; only the args now follow the real decoder.
 *   - "step mix": what a training loop records.  A step runs the same ops
 *     in the same order every time (same kernels, grids, sizes, addresses:
 *     PyTorch's caching allocator hands out the same blocks), and only times
 *     change; that repetition is what step-scheduled profiling records.  The
 *     program is 2000 ops (the iid mix's step length) drawn ONCE from the
 *     iid mix's distributions above, then replayed every step with each
 *     op's duration jittered +-10% and every gap drawn afresh, and a
 *     ProfilerStep#N range around each step.  2000 host calls per step is
 *     a small model's step (a ResNet-50 training step is of that order);
 *     larger models lengthen the program.  zstd only profits from the
 *     repetition while a whole step's JSON (about 630 KB here) fits its
 *     window: 512 KiB at level 1, 1 MiB at level 2, 2 MiB at level 3; a
 *     longer step compresses like the iid mix.
 *   Plain JSON, zstd at several levels (the default of TRACEPROF_ZSTD_LEVEL
 *   is marked; --fast=3 is TRACEPROF_ZSTD_LEVEL=-3), and
 *   gzip (the iid mix only: its level is fixed).
 * Then times unw_backtrace() at depth 16, which TRACEPROF_WITH_STACK adds to
 * every recorded call.
 *
 * Build: make build/bench/bench_compress (links build/libtpcore.a). */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "format/api_args.h"
#include "format/sink.h"
#include "format/writer.h"

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

/* CPU time of this process: on a shared machine whose CPU is partly taken
 * by others, events per CPU second is the per-core rate.  It counts
 * libzstd's own threads too (the "N thr" rows), whose gain shows in the
 * wall-time column instead. */
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

/* Kernel i's name and its length, as the registry (collector/cuda_kernels.c)
 * hands them to collector/cuda_decode.c: measured once. */
static const char *bc_kernel(unsigned i, uint32_t *len)
{
	static uint32_t lens[BC_NKERNELS];
	if (!lens[i])
		lens[i] = (uint32_t)strlen(bc_kernels[i]);
	*len = lens[i];
	return bc_kernels[i];
}
#define BC_FLASH 6 /* the kernel the driver launches */

/* A created stream and device memory, as cudaStreamCreate and the caching
 * allocator hand them out (14 hex digits). */
#define BC_STREAM 0x55d0c3a4e2f0ull
#define BC_DEVMEM 0x7f2c4a000000ull

/* Host calls between two ProfilerStep ranges, in both mixes. */
#define BC_STEP_OPS 2000

enum bc_kind { BC_LAUNCH, BC_MEMCPY, BC_DRV_LAUNCH, BC_SYNC, BC_EVENT };

/* Names with their lengths, as collector/cuda_decode.c has them (the generated
 * function table's name_len): measuring strlen() is not the writer's cost. */
struct bc_name {
	const char *s;
	uint32_t len;
};
#define BC_NAME(s) { s, sizeof(s) - 1 }
static const struct bc_name bc_api_names[] = { BC_NAME("cudaLaunchKernel"),
					       BC_NAME("cudaMemcpyAsync"),
					       BC_NAME("cuLaunchKernel"),
					       BC_NAME("cudaStreamSynchronize"),
					       BC_NAME("cudaEventRecord") };

/* One host call: what a record holds, once decoded. */
struct bc_op {
	enum bc_kind kind;
	uint64_t dur; /* ns */
	struct tp_api_launch launch;
	uint64_t bytes, dst, src, stream;
	unsigned copy_kind;
};

/* The iid mix's distribution of one call (see the header comment). */
static void bc_draw(struct bc_op *o)
{
	uint64_t r = bc_rand();
	unsigned pick = (unsigned)(r % 100);
	memset(o, 0, sizeof(*o));
	o->stream = (r >> 50) & 1 ? BC_STREAM : 0;
	if (pick < 60) {
		uint32_t klen;
		const char *k = bc_kernel((unsigned)((r >> 8) % BC_NKERNELS), &klen);
		o->kind = BC_LAUNCH;
		o->dur = 2000 + (r >> 20) % 3000;
		o->launch = (struct tp_api_launch){
			.name = k,
			.name_len = klen,
			.grid = { (uint32_t)(1 + (r >> 24) % 4096), (uint32_t)(1 + (r >> 36) % 8), 1 },
			.block = { 128u << ((r >> 40) % 3), 1, 1 },
			.shared = (r >> 44) % 4 == 0 ? 49152 : 0,
			.stream = o->stream,
		};
	} else if (pick < 75) {
		o->kind = BC_MEMCPY;
		o->dur = 3000 + (r >> 20) % 5000;
		o->bytes = (uint64_t)4 << ((r >> 30) % 24);
		o->copy_kind = 1 + (unsigned)((r >> 54) % 3);
		o->dst = BC_DEVMEM + ((r >> 8) % (1u << 20)) * 512;
		o->src = BC_DEVMEM + ((r >> 28) % (1u << 20)) * 512;
	} else if (pick < 85) {
		uint32_t klen;
		const char *k = bc_kernel(BC_FLASH, &klen);
		o->kind = BC_DRV_LAUNCH;
		o->dur = 1500 + (r >> 20) % 2000;
		o->launch = (struct tp_api_launch){
			.name = k,
			.name_len = klen,
			.grid = { (uint32_t)(1 + (r >> 24) % 1024), 16, 1 },
			.block = { 128, 1, 1 },
			.shared = 49152,
			.stream = o->stream,
		};
	} else if (pick < 92) {
		o->kind = BC_SYNC;
		o->dur = 10000 + (r >> 20) % 900000;
	} else {
		o->kind = BC_EVENT;
		o->dur = 1000 + (r >> 20) % 1000;
	}
}

struct bc_state {
	uint64_t ns;	   /* monotonic time of the next event */
	uint64_t step;
	uint64_t in_step;  /* calls since the step started */
	uint64_t step_ns;  /* when the step started */
	int64_t pid, tid;
	struct bc_op *program; /* the step mix's ops, BC_STEP_OPS of them */
};

/* One call as collector/cuda_decode.c writes it: "result", then the decoder
 * class's args. */
static void bc_write_op(struct tp_writer *w, struct bc_state *s, const struct bc_op *o,
			uint64_t dur)
{
	struct tp_arg args[1 + TP_API_ARGS_MAX];
	unsigned n = 0;
	const struct bc_name *name = &bc_api_names[o->kind];
	args[n++] = TP_ARG(i64, "result", 0);
	switch (o->kind) {
	case BC_LAUNCH:
	case BC_DRV_LAUNCH:
		tp_api_args_launch(args, &n, &o->launch);
		break;
	case BC_MEMCPY:
		tp_api_args_memcpy(args, &n, o->bytes, o->copy_kind, o->dst, o->src, 1, o->stream);
		break;
	case BC_SYNC:
		tp_api_args_sync(args, &n, 1, o->stream, 0);
		break;
	case BC_EVENT:
		break;
	}
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 1,
		.nargs = (uint16_t)n,
		.name_len = name->len,
		.cat = o->kind == BC_DRV_LAUNCH ? "cuda_driver" : "cuda_runtime",
		.name = name->s,
		.pid = s->pid,
		.tid = s->tid,
		.ts = s->ns,
		.end = s->ns + dur,
		.args = args,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
	s->ns += dur + 500 + bc_rand() % 4000;
}

/* The ProfilerStep#N range of the step that just ended, as collector/convert.c
 * writes it. */
static void bc_step_range(struct tp_writer *w, struct bc_state *s)
{
	char name[40];
	int n = snprintf(name, sizeof(name), "ProfilerStep#%llu", (unsigned long long)s->step++);
	tp_writer_slice(w, "user_annotation", name, (size_t)n, s->pid, s->tid, s->step_ns, s->ns,
			NULL, 0);
	s->step_ns = s->ns;
	s->in_step = 0;
}

static void bc_iid_event(struct tp_writer *w, struct bc_state *s)
{
	if (s->in_step == BC_STEP_OPS) {
		bc_step_range(w, s);
		return;
	}
	struct bc_op o;
	bc_draw(&o);
	s->in_step++;
	bc_write_op(w, s, &o, o.dur);
}

static void bc_step_event(struct tp_writer *w, struct bc_state *s)
{
	if (s->in_step == BC_STEP_OPS) {
		bc_step_range(w, s);
		return;
	}
	const struct bc_op *o = &s->program[s->in_step++];
	/* +-10% of the op's own duration. */
	uint64_t dur = o->dur - o->dur / 10 + bc_rand() % (o->dur / 5 + 1);
	bc_write_op(w, s, o, dur);
}

/* The smallest API event: its result is its only arg. */
static void bc_result_event(struct tp_writer *w, struct bc_state *s)
{
	static const struct bc_name names[] = { BC_NAME("cudaLaunchKernel"),
						BC_NAME("cudaMemcpyAsync"),
						BC_NAME("cudaStreamSynchronize"),
						BC_NAME("cudaEventRecord") };
	uint64_t r = bc_rand();
	const struct bc_name *name = &names[r % 4];
	uint64_t dur = 2000 + (r >> 20) % 3000;
	struct tp_arg result = TP_ARG(i64, "result", 0);
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 1,
		.nargs = 1,
		.name_len = name->len,
		.cat = "cuda_runtime",
		.name = name->s,
		.pid = s->pid,
		.tid = s->tid,
		.ts = s->ns,
		.end = s->ns + dur,
		.args = &result,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
	s->ns += dur + 500 + bc_rand() % 4000;
}

enum bc_mix { BC_RESULT_ONLY, BC_IID, BC_STEPS };

struct bc_result {
	double evs;	  /* events per second of CPU time */
	double wall;	  /* events per second of wall time */
	double bytes;	  /* file bytes per event */
	double json;	  /* JSON bytes per event */
};

static const char *bc_folder;
/* TRACEPROF_ZSTD_THREADS of the run: 0, the flush thread compresses. */
static int bc_threads;
/* Events between two flushes of the writer (0: none): the flush thread's
 * drain to disk every 0.5 s (collector/parts.c), a compressor block end. */
static uint64_t bc_flush_every;

/* Writes one trace file of n events and returns its figures. */
static int bc_run(int compress, int level, enum bc_mix mix, uint64_t n, struct bc_result *res)
{
	struct tp_sink *sink;
	char name[64], path[4096];
	snprintf(name, sizeof(name), "bench.%ld.json", (long)getpid());
	int rc = tp_sink_open(&sink, bc_folder, name, compress, level, 1);
	if (rc == 0 && tp_sink_zstd_threads(sink, bc_threads) < 0) {
		tp_sink_abort(sink);
		rc = -ENOTSUP;
	}
	if (rc < 0) {
		fprintf(stderr, "bench_compress: cannot open a sink in %s: %s\n", bc_folder,
			strerror(-rc));
		return -1;
	}
	struct tp_writer_header h = { .base_wall_ns = 1775000000000000000ll,
				     .wall_offset_ns = 1775000000000000000ll,
				     .pid = 1234567, .rank = 0, .world_size = 1, .launcher = "none" };
	struct bc_state s = { .ns = 45ull * 86400 * 1000000000ull, .pid = 1234567,
			      .tid = 1234567 };
	s.step_ns = s.ns;
	bc_rng = 88172645463325252ull;
	if (mix == BC_STEPS) {
		/* Drawn before the clock starts: the program is the job's, not
		 * the writer's. */
		s.program = malloc(BC_STEP_OPS * sizeof(*s.program));
		if (!s.program)
			return -1;
		for (int i = 0; i < BC_STEP_OPS; i++)
			bc_draw(&s.program[i]);
	}
	struct tp_doc footer;
	tp_doc_init(&footer);
	tp_doc_str(&footer, "version", "bench");
	struct tp_writer_trailer tr = { .trace_name = name, .footer = &footer };
	double t0 = bc_now(), c0 = bc_cpu();
	struct tp_writer *w = tp_writer_open(&tp_json_writer, sink, &h);
	if (!w) {
		tp_sink_abort(sink);
		free(s.program);
		tp_doc_free(&footer);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (mix == BC_IID)
			bc_iid_event(w, &s);
		else if (mix == BC_STEPS)
			bc_step_event(w, &s);
		else
			bc_result_event(w, &s);
		if (bc_flush_every && (i + 1) % bc_flush_every == 0)
			tp_writer_flush(w);
	}
	/* The footer's few bytes are left out: per event they are nothing. */
	uint64_t json_bytes = tp_writer_bytes(w);
	rc = tp_writer_close(w, &tr);
	if (!rc)
		rc = tp_sink_close(sink, path, sizeof(path));
	else
		tp_sink_abort(sink);
	double t1 = bc_now(), c1 = bc_cpu();
	tp_doc_free(&footer);
	free(s.program);
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

static const char *bc_only;

static int bc_setting(const char *label, int compress, int level, enum bc_mix mix, uint64_t n,
		      int runs)
{
	if (bc_only && !strstr(label, bc_only))
		return 0;
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
	printf("%-28s %6.2f (%.2f..%.2f) %6.2f (%.2f..%.2f) %8.2f %8.2f %6.1fx\n", label, e.med,
	       e.lo, e.hi, w.med, w.lo, w.hi, b.med, js.med, js.med / b.med);
	fflush(stdout);
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

static const char *bc_no_env(const char *name, void *ctx)
{
	(void)name;
	(void)ctx;
	return NULL;
}

/* TRACEPROF_ZSTD_LEVEL's default, from the configuration parser itself. */
static int bc_default_level(void)
{
	struct tp_config cfg;
	char err[256];
	return tp_config_parse(&cfg, bc_no_env, NULL, err, sizeof(err)) < 0 ? 0 : cfg.zstd_level;
}

/* A zstd setting's label: "MIX, zstd -L", "(default)" appended for the
 * default level, negative levels as zstd's CLI names them. */
static const char *bc_zstd_label(char *buf, size_t size, const char *mix, int level)
{
	if (level < 0)
		snprintf(buf, size, "%s, zstd --fast=%d", mix, -level);
	else
		snprintf(buf, size, "%s, zstd -%d%s", mix, level,
			 level == bc_default_level() ? " (default)" : "");
	return buf;
}

static int bc_zstd(const char *mix_label, enum bc_mix mix, const int *levels, size_t nlevels,
		   uint64_t n, int runs)
{
	for (size_t i = 0; i < nlevels; i++) {
		char label[64];
		bc_zstd_label(label, sizeof(label), mix_label, levels[i]);
		if (bc_setting(label, TP_SINK_ZSTD, levels[i], mix, n, runs))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	struct stat st;
	bc_folder = argc > 3 ? argv[3] : stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp";
	bc_only = argc > 4 ? argv[4] : NULL;
	if (n == 0 || runs < 1 || runs > BC_MAX_RUNS) {
		fprintf(stderr, "usage: bench_compress [EVENTS] [RUNS 1-%d] [FOLDER] [ONLY]\n",
			BC_MAX_RUNS);
		return 2;
	}
	/* --fast=3 (TRACEPROF_ZSTD_LEVEL=-3): the fastest level worth a row. */
	static const int iid_levels[] = { -3, 1, 2, 3, 6 };
	static const int step_levels[] = { -3, 1, 2, 3 };
	printf("%llu events per file, median of %d runs (min..max), one core, files in %s\n",
	       (unsigned long long)n, runs, bc_folder);
	printf("%-28s %-20s %-20s %8s %8s %7s\n", "setting", "M ev/s (CPU time)",
	       "M ev/s (wall)", "B/event", "JSON B/ev", "ratio");
	if (bc_setting("result only, plain", TP_SINK_PLAIN, 0, BC_RESULT_ONLY, n, runs) ||
	    bc_setting("iid mix, plain", TP_SINK_PLAIN, 0, BC_IID, n, runs) ||
	    bc_zstd("iid mix", BC_IID, iid_levels, sizeof(iid_levels) / sizeof(iid_levels[0]), n,
		    runs) ||
	    bc_setting("iid mix, gzip -1", TP_SINK_GZIP, 0, BC_IID, n, runs) ||
	    bc_setting("step mix, plain", TP_SINK_PLAIN, 0, BC_STEPS, n, runs) ||
	    bc_zstd("step mix", BC_STEPS, step_levels, sizeof(step_levels) / sizeof(step_levels[0]),
		    n, runs))
		return 1;
	/* The default level with libzstd's own threads: per CPU second the
	 * same work, per wall second the flush thread's share only. */
	for (bc_threads = 1; bc_threads <= 2; bc_threads++) {
		char label[64];
		snprintf(label, sizeof(label), "step mix, zstd -%d, %d thr", bc_default_level(),
			 bc_threads);
		if (bc_setting(label, TP_SINK_ZSTD, bc_default_level(), BC_STEPS, n, runs))
			return 1;
	}
	bc_threads = 0;
	/* The cost of the 0.5 s drains (issue 44): the same files with a flush
	 * every N events, N the events of a drain interval. */
	static const struct { const char *mix; enum bc_mix m; int sink; uint64_t every; } fl[] = {
		{ "step mix", BC_STEPS, TP_SINK_ZSTD, 50000 }, { "step mix", BC_STEPS, TP_SINK_ZSTD, 5000 },
		{ "step mix", BC_STEPS, TP_SINK_ZSTD, 500 }, { "iid mix", BC_IID, TP_SINK_ZSTD, 5000 },
		{ "iid mix", BC_IID, TP_SINK_GZIP, 5000 } };
	for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
		char label[64];
		bc_flush_every = fl[i].every;
		snprintf(label, sizeof(label), "%s, %s -%d, flush/%llu", fl[i].mix,
			 fl[i].sink == TP_SINK_GZIP ? "gzip" : "zstd",
			 fl[i].sink == TP_SINK_GZIP ? 1 : bc_default_level(),
			 (unsigned long long)fl[i].every);
		if (bc_setting(label, fl[i].sink, bc_default_level(), fl[i].m, n, runs))
			return 1;
	}
	bc_flush_every = 0;
	if (!bc_only)
		bc_stacks(runs);
	return 0;
}
