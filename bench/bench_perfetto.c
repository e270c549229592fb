/* The writers compared on bench_json's event mix, through the writer
 * interface (format/writer.h) as the collector drives them: a CUDA API slice
 * whose only arg is its result, one of 4 API names, one of 8 threads in runs
 * of 64 events, pid and tid of 7 digits, times 45 days after boot, calls of
 * 2-5 us 0.5-4.5 us apart.
 *
 * Each writer writes N events (BENCH_EVENTS, default 1,000,000) into a real
 * sink in a temporary folder, plain and zstd -1 (the default level), the
 * best of 3 passes (BENCH_PASSES) after a warm-up pass; write(2) is
 * included.  Rates are per
 * second of this thread's CPU time (events/s per core).  Prints, per writer
 * and compression:
 *
 *   writer=json compress=plain events_per_sec=N bytes_per_event=N
 *
 * and the ratios the issue sets goals for:
 *
 *   perfetto_vs_json_plain=0.NN perfetto_vs_json_zstd1=N.NN
 *
 * (the Perfetto file's size over the plain JSON's, and over the zstd -1
 * JSON's). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "format/sink.h"
#include "format/writer.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *const api_names[] = { "cudaLaunchKernel", "cudaMemcpyAsync",
					  "cudaStreamSynchronize", "cudaEventRecord" };
static size_t api_lens[4];

#define START_NS (45ull * 86400 * 1000000000ull)

struct result {
	double events_per_sec, bytes_per_event;
};

/* One file of n events; 0 or 1. */
static int run(const struct tp_writer_ops *ops, int compress, uint64_t n, const char *dir,
	       struct result *r)
{
	char name[64];
	snprintf(name, sizeof(name), "bench%s", ops->ext);
	struct tp_sink *s;
	int rc = tp_sink_open(&s, dir, name, compress, 1, 1);
	if (rc) {
		fprintf(stderr, "bench_perfetto: sink in %s: %s\n", dir, strerror(-rc));
		return 1;
	}
	struct tp_writer_header h = {
		.base_wall_ns = (int64_t)START_NS,
		.wall_offset_ns = 1700000000000000000ll,
		.pid = 1234567,
	};
	double t0 = now_s();
	struct tp_writer *w = tp_writer_open(ops, s, &h);
	if (!w) {
		tp_sink_abort(s);
		return 1;
	}
	uint64_t ns = START_NS;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t hsh = i * 2654435761u;
		uint64_t dur = 2000 + hsh % 3000;
		unsigned k = (hsh >> 12) & 3;
		struct tp_arg a = TP_ARG(i64, "result", 0);
		tp_writer_slice(w, "cuda_runtime", api_names[k], api_lens[k], 1234567,
				1234567 + (int64_t)((i >> 6) & 7), ns, ns + dur, &a, 1);
		ns += dur + 500 + (hsh >> 16) % 4000;
	}
	tp_writer_process(w, 1234567, "python train.py", NULL, 0);
	for (int t = 0; t < 8; t++)
		tp_writer_thread(w, 1234567, 1234567 + t, "thread", t);
	struct tp_writer_trailer tr = { 0 };
	rc = tp_writer_close(w, &tr);
	char path[4096];
	if (rc)
		tp_sink_abort(s);
	else
		rc = tp_sink_close(s, path, sizeof(path));
	double dt = now_s() - t0;
	if (rc) {
		fprintf(stderr, "bench_perfetto: %s: %s\n", ops->name, strerror(-rc));
		return 1;
	}
	struct stat st;
	if (stat(path, &st))
		return 1;
	unlink(path);
	r->events_per_sec = (double)n / dt;
	r->bytes_per_event = (double)st.st_size / (double)n;
	return 0;
}

int main(void)
{
	uint64_t n = 1000000;
	const char *env = getenv("BENCH_EVENTS");
	if (env && strtoull(env, NULL, 10) > 0)
		n = strtoull(env, NULL, 10);
	int passes = 3;
	env = getenv("BENCH_PASSES");
	if (env && atoi(env) > 0)
		passes = atoi(env);
	for (int k = 0; k < 4; k++)
		api_lens[k] = strlen(api_names[k]);
	char dir[] = "/tmp/tp-bench-pf.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_perfetto: mkdtemp");
		return 1;
	}
	const struct tp_writer_ops *ops[] = { &tp_json_writer, &tp_perfetto_writer };
	const int comp[] = { TP_SINK_PLAIN, TP_SINK_ZSTD };
	struct result r[2][2], warm;
	int rc = 0;
	for (int w = 0; w < 2 && !rc; w++) {
		rc |= run(ops[w], TP_SINK_PLAIN, n / 4, dir, &warm);
		for (int c = 0; c < 2 && !rc; c++) {
			/* Best of the passes: the one least disturbed by the
			 * neighbours of a shared machine. */
			for (int pass = 0; pass < passes && !rc; pass++) {
				struct result x;
				rc |= run(ops[w], comp[c], n, dir, &x);
				if (!rc && (!pass || x.events_per_sec > r[w][c].events_per_sec))
					r[w][c] = x;
			}
			if (!rc)
				printf("writer=%s compress=%s events_per_sec=%.0f bytes_per_event=%.1f\n",
				       ops[w]->name, c ? "zstd1" : "plain", r[w][c].events_per_sec,
				       r[w][c].bytes_per_event);
		}
	}
	rmdir(dir);
	if (rc)
		return 1;
	printf("perfetto_vs_json_plain=%.2f perfetto_vs_json_zstd1=%.2f "
	       "perfetto_zstd1_vs_json_zstd1=%.2f\n",
	       r[1][0].bytes_per_event / r[0][0].bytes_per_event,
	       r[1][0].bytes_per_event / r[0][1].bytes_per_event,
	       r[1][1].bytes_per_event / r[0][1].bytes_per_event);
	return 0;
}
