/* Throughput of the JSON writer on Chrome trace complete events, the shape
 * the flush thread writes most:
 *
 *   {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1234,
 *    "tid":1240,"ts":123456.789,"dur":2.345,"args":{"result":0}}
 *
 * First without a sink (the buffer is emptied whenever it passes 1 MiB, as a
 * flush would, but nothing is written: the formatting cost alone; best of
 * three passes), then through zstd sinks at levels 1 and 3 into a temporary
 * folder (one pass each).  Rates are per second of this thread's CPU time.
 * Prints:
 *
 *   json_events_per_sec=N bytes_per_event=N
 *   zstd_level=L events_per_sec=N bytes_per_event=N
 *
 * bytes_per_event is the JSON size for the first line and the compressed
 * size for the zstd lines.  BENCH_EVENTS overrides the event count;
 * BENCH_ZSTD=0 skips the zstd runs (for perf stat on the formatter alone). */
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

/* CPU time of this thread: the target is events per second per core, and
 * on a shared machine wall time mostly measures the neighbours. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void write_event(struct tp_json *j, uint64_t i, int64_t *ts)
{
	/* Roughly what launch loops on eight threads look like: each thread
	 * launches every ~8 us, so events are ~1 us apart and ts reaches about
	 * 20 s over 20 million events; calls take 1-10 us. */
	int64_t dur = 1000 + (int64_t)((i * 2654435761u) % 9000);
	tp_json_lit(j, "{\"ph\":\"X\",\"cat\":");
	tp_json_str(j, "cuda_runtime");
	tp_json_lit(j, ",\"name\":");
	tp_json_str(j, "cudaLaunchKernel");
	tp_json_lit(j, ",\"pid\":");
	tp_json_u64(j, 1234);
	tp_json_lit(j, ",\"tid\":");
	tp_json_u64(j, 1240 + (i & 7));
	tp_json_lit(j, ",\"ts\":");
	tp_json_us(j, *ts);
	tp_json_lit(j, ",\"dur\":");
	tp_json_us(j, dur);
	tp_json_lit(j, ",\"args\":{\"result\":");
	tp_json_i64(j, 0);
	tp_json_lit(j, "}},");
	*ts += 200 + (int64_t)(i % 1600);
}

/* Best of three passes: the fastest is the one least disturbed. */
static int bench_plain(uint64_t n)
{
	struct tp_json j;
	if (tp_json_init(&j, NULL))
		return 1;
	double best = 0;
	uint64_t bytes = 0;
	for (int pass = 0; pass < 3; pass++) {
		int64_t ts = 123456789;
		bytes = 0;
		j.len = 0;
		double t0 = now_s();
		for (uint64_t i = 0; i < n; i++) {
			write_event(&j, i, &ts);
			if (j.len >= TP_JSON_BUF - 512) {
				bytes += j.len;
				j.len = 0;
			}
		}
		double dt = now_s() - t0;
		bytes += j.len;
		if (pass == 0 || dt < best)
			best = dt;
	}
	if (tp_json_error(&j))
		return 1;
	printf("json_events_per_sec=%.0f bytes_per_event=%.1f\n", (double)n / best,
	       (double)bytes / (double)n);
	tp_json_free(&j);
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
	struct tp_json j;
	if (tp_json_init(&j, s)) {
		tp_sink_abort(s);
		return 1;
	}
	int64_t ts = 123456789;
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++)
		write_event(&j, i, &ts);
	tp_json_flush(&j);
	char path[4096];
	rc = tp_json_error(&j);
	if (rc)
		tp_sink_abort(s);
	else
		rc = tp_sink_close(s, path, sizeof(path));
	double dt = now_s() - t0;
	tp_json_free(&j);
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
	int rc = bench_plain(n);
	e = getenv("BENCH_ZSTD");
	if (e && !strcmp(e, "0")) {
		rmdir(dir);
		return rc;
	}
	if (!rc)
		rc = bench_zstd(n, 1, dir);
	if (!rc)
		rc = bench_zstd(n, 3, dir);
	rmdir(dir);
	return rc;
}
