/* Throughput of the JSON writer alone on the event a trace has most of, a
 * CUDA API event whose only arg is its result, written as
 * collector/cuda_decode.c writes it (a tp_event with one typed arg through the
 * JSON writer, format/json_writer.c: the real path):
 *
 *   {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1234567,
 *    "tid":1234567,"ts":3888000000123.456,"dur":2.345,"args":{"result":0}},
 *
 * with the sizes of real runs, the same as bench_compress's "result only"
 * row: pid and tid of 7 digits, times 45 days after Kineto's 90-day base
 * (13 digits of microseconds).  One of 4 API names and one of 8 threads per
 * event (the flush thread drains one ring at a time, so threads come in runs
 * of 64 events here).
 *
 * First without a sink (the file is dropped and a new one begun whenever it
 * passes 1 MiB, as a flush would empty the buffer, but nothing is written:
 * the formatting cost alone), then through zstd sinks at levels 1 (the
 * default), 2 and 3 into a temporary folder (one pass each).  bench_compress
 * measures the same events through a real sink, write(2) included.  Rates
 * are per second of this thread's CPU time.
 *
 * The formatting passes come in rounds of two, with the file's aggregate
 * table (format/aggregate.h, as tp_writer_open() opens every file) and
 * without it (the writer opened directly), in turn (ABBA: the first of a
 * round alternates), so that both see the same machine: the table's cost
 * on the writer (issue 35 asks for none measurable).  Prints:
 *
 *   json_events_per_sec=N bytes_per_event=N
 *   table_off_events_per_sec=N table_on_over_off=R (LO-HI) added_ns_per_event=D rounds=K
 *   zstd_level=L events_per_sec=N bytes_per_event=N
 *
 * The rates are the best pass of each (the one least disturbed); R is the
 * median over rounds of on/off throughput (its range in brackets), D the
 * best passes' difference.  bytes_per_event is the JSON size for the first
 * line and the compressed size for the zstd lines.  BENCH_EVENTS overrides
 * the event count (per pass); BENCH_ROUNDS the rounds (default 5);
 * BENCH_TABLE=1 or 0 runs only passes with or without the table (for
 * callgrind: instructions per event with and without); BENCH_ZSTD=0 skips
 * the zstd runs (for profiling the formatter alone). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/json.h"
#include "format/sink.h"
#include "format/writer.h"

/* CPU time of this thread: the target is events per second per core, and
 * on a shared machine wall time mostly measures the neighbours. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* With their lengths, as collector/cuda_decode.c has them (the generated
 * function table's name_len): measuring strlen() is not the writer's cost. */
#define BJ_NAME(s) { s, sizeof(s) - 1 }
static const struct {
	const char *s;
	uint32_t len;
} api_names[] = { BJ_NAME("cudaLaunchKernel"), BJ_NAME("cudaMemcpyAsync"),
		  BJ_NAME("cudaStreamSynchronize"), BJ_NAME("cudaEventRecord") };

static void write_event(struct tp_writer *w, uint64_t i, uint64_t *ns)
{
	/* Calls take 2-5 us and follow each other 0.5-4.5 us apart. */
	uint64_t h = i * 2654435761u;
	uint64_t dur = 2000 + h % 3000;
	unsigned k = (h >> 12) & 3;
	struct tp_arg result = TP_ARG(i64, "result", 0);
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 1,
		.nargs = 1,
		.name_len = api_names[k].len,
		.cat = "cuda_runtime",
		.name = api_names[k].s,
		.pid = 1234567,
		.tid = 1234567 + (int64_t)((i >> 6) & 7),
		.ts = *ns,
		.end = *ns + dur,
		.args = &result,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
	*ns += dur + 500 + (h >> 16) % 4000;
}

/* 45 days into Kineto's 90-day bucket, as bench_compress. */
#define START_NS (45ull * 86400 * 1000000000ull)

/* A file whose time base is 0: ts is the monotonic time itself.  table 0:
 * opened without tp_writer_open(), so without the aggregate table. */
static struct tp_writer *open_file(struct tp_sink *s, int table)
{
	struct tp_writer_header h;
	memset(&h, 0, sizeof(h));
	return table ? tp_writer_open(&tp_json_writer, s, &h) : tp_json_writer.open(s, &h);
}

/* One pass of n events through files of up to 1 MiB with no sink: its CPU
 * seconds, or -1; *bytes: the JSON written. */
static double plain_pass(uint64_t n, int table, uint64_t *bytes)
{
	uint64_t ns = START_NS;
	struct tp_writer *w = open_file(NULL, table);
	if (!w)
		return -1;
	/* The header is not an event's. */
	uint64_t base = tp_writer_bytes(w);
	*bytes = 0;
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++) {
		write_event(w, i, &ns);
		if (tp_writer_bytes(w) - base >= TP_JSON_BUF - 512) {
			*bytes += tp_writer_bytes(w) - base;
			tp_writer_discard(w);
			if (!(w = open_file(NULL, table)))
				return -1;
			base = tp_writer_bytes(w);
		}
	}
	double dt = now_s() - t0;
	*bytes += tp_writer_bytes(w) - base;
	int err = tp_writer_error(w);
	tp_writer_discard(w);
	return err ? -1 : dt;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

#define MAX_ROUNDS 64

/* only: -1 both, in rounds; 1 or 0: with or without the table only. */
static int bench_plain(uint64_t n, int rounds, int only)
{
	double best[2] = { 0, 0 }, ratio[MAX_ROUNDS];
	uint64_t bytes = 0;
	for (int r = 0; r < rounds; r++) {
		double dt[2] = { 0, 0 };
		for (int k = 0; k < 2; k++) {
			int table = (r + k) % 2 ? 0 : 1; /* ABBA */
			if (only >= 0 && table != only)
				continue;
			dt[table] = plain_pass(n, table, &bytes);
			if (dt[table] < 0)
				return 1;
			if (!best[table] || dt[table] < best[table])
				best[table] = dt[table];
		}
		ratio[r] = only < 0 ? dt[0] / dt[1] : 0;
	}
	int t = only == 0 ? 0 : 1;
	printf("json_events_per_sec=%.0f bytes_per_event=%.1f%s\n", (double)n / best[t],
	       (double)bytes / (double)n, t ? "" : " table=off");
	if (only < 0) {
		qsort(ratio, (size_t)rounds, sizeof(ratio[0]), cmp_double);
		double mid = rounds % 2 ? ratio[rounds / 2]
					: (ratio[rounds / 2 - 1] + ratio[rounds / 2]) / 2;
		printf("table_off_events_per_sec=%.0f table_on_over_off=%.3f (%.3f-%.3f) "
		       "added_ns_per_event=%.2f rounds=%d\n",
		       (double)n / best[0], mid, ratio[0], ratio[rounds - 1],
		       (best[1] - best[0]) / (double)n * 1e9, rounds);
	}
	return 0;
}

static int bench_zstd(uint64_t n, int level, const char *dir)
{
	struct tp_sink *s;
	int rc = tp_sink_open(&s, dir, "bench.json", TP_SINK_ZSTD, level, 1);
	if (rc) {
		fprintf(stderr, "bench_json: sink in %s: %s\n", dir, strerror(-rc));
		return 1;
	}
	struct tp_writer *w = open_file(s, 1);
	if (!w) {
		tp_sink_abort(s);
		return 1;
	}
	uint64_t ns = START_NS;
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		write_event(w, i, &ns);
	char path[4096];
	struct tp_writer_trailer tr = { 0 };
	rc = tp_writer_close(w, &tr);
	if (rc)
		tp_sink_abort(s);
	else
		rc = tp_sink_close(s, path, sizeof(path));
	double dt = now_s() - t0;
	if (rc) {
		fprintf(stderr, "bench_json: zstd: %s\n", strerror(-rc));
		return 1;
	}
	struct stat st;
	if (stat(path, &st))
		return 1;
	unlink(path);
	printf("zstd_level=%d events_per_sec=%.0f bytes_per_event=%.1f\n", level, (double)n / dt,
	       (double)st.st_size / (double)n);
	return 0;
}

int main(void)
{
	uint64_t n = 20000000;
	const char *e = getenv("BENCH_EVENTS");
	if (e && atoll(e) > 0)
		n = (uint64_t)atoll(e);
	char dir[] = "/tmp/tp-bench-json.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_json: mkdtemp");
		return 1;
	}
	int rounds = 5, only = -1;
	if ((e = getenv("BENCH_ROUNDS")) && atoi(e) > 0)
		rounds = atoi(e) < MAX_ROUNDS ? atoi(e) : MAX_ROUNDS;
	if ((e = getenv("BENCH_TABLE")) && (!strcmp(e, "0") || !strcmp(e, "1")))
		only = atoi(e);
	int rc = bench_plain(n, rounds, only);
	e = getenv("BENCH_ZSTD");
	if (e && !strcmp(e, "0")) {
		rmdir(dir);
		return rc;
	}
	/* 1 is TRACEPROF_ZSTD_LEVEL's default. */
	for (int level = 1; level <= 3 && !rc; level++)
		rc = bench_zstd(n, level, dir);
	rmdir(dir);
	return rc;
}
