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
 * The events written and the three mixes of calls ("result only", "iid
 * mix", "step mix") are described in bench/compress_mix.h.  Each mix is
 * written in plain JSON, zstd at several levels (the default of
 * TRACEPROF_ZSTD_LEVEL is marked; --fast=3 is TRACEPROF_ZSTD_LEVEL=-3), and
 * gzip (the iid mix only: its level is fixed).
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

#include "bench/compress_mix.h"

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
