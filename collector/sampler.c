/* The host sampler (TRACEPROF_SAMPLE_MS): every SAMPLE_MS while a step
 * records, the flush thread reads the process's CPU time, resident memory and
 * thread count from /proc/self, and each saved window gets the samples that
 * fall in its time range as counter events ("ph":"C"), as Composer's system
 * profiler writes them, with the units in the names:
 *   "CPU %"                 process CPU time over wall time since the
 *                           previous sample, all threads: may exceed 100
 *   "Resident memory (MB)"  resident set size in MiB (2^20 bytes)
 *   "Threads"               threads of the process
 * Everything runs on the flush thread (the plugin's pass callback). */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "collector/control.h"
#include "collector/flush.h"
#include "common/procfs.h"
#include "common/log.h"

/* Samples kept for windows not yet written: 10 minutes at the default 100 ms.
 * When full, the oldest go (a window that old was already written, or is so
 * long that its first minutes lose their counters, not its events: counted,
 * when no file took them, in the footer's host_samples_lost). */
#define SM_MAX_SAMPLES 6000

struct sm_sample {
	uint64_t ns; /* CLOCK_MONOTONIC, as the records' times */
	double cpu_pct;
	double rss_mb;
	double threads;
	int written; /* into a window's file: its eviction loses nothing */
};

static struct {
	uint64_t period_ns;
	long ticks_per_s;
	long page_size;
	uint64_t last_ns;     /* time of the previous reading, 0: none */
	uint64_t last_cpu;    /* process CPU time then, ns */
	struct sm_sample *buf; /* ring of SM_MAX_SAMPLES */
	size_t first, n;
	uint64_t lost; /* samples evicted before any file took them */
	uint64_t said; /* M.lost as of the last line that said it */
} M;

/* /proc/self/stat: utime is field 14, stime 15 (clock ticks), num_threads
 * 20, rss 24 (pages).  Returns 0 or -1. */
static int sm_stat(uint64_t *ticks, uint64_t *threads, uint64_t *pages)
{
	char buf[1024];
	uint64_t utime, stime;
	/* Opened at each sample (tp_fd_read_small(): the number checked before
	 * it is closed), not held: each descriptor held is one fewer for a
	 * program under a small RLIMIT_NOFILE (issue 30), and one file gives
	 * all three figures. */
	if (tp_procfs_read("/proc/self/stat", buf, sizeof(buf)) < 0 ||
	    tp_procfs_stat_u64(buf, 14, &utime) || tp_procfs_stat_u64(buf, 15, &stime) ||
	    tp_procfs_stat_u64(buf, 20, threads) || tp_procfs_stat_u64(buf, 24, pages))
		return -1;
	*ticks = utime + stime;
	return 0;
}

/* CPU time of the whole process (all threads) in ns: the sum of utime and
 * stime of /proc/self/stat, which counts in clock ticks of 10 ms, too coarse
 * for 100 ms samples (each would be off by up to 10%); the kernel's own
 * nanosecond figure when it has one. */
static uint64_t sm_cpu_ns(uint64_t ticks)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return ticks * (1000000000ull / (uint64_t)M.ticks_per_s);
}

static void sm_take(uint64_t now)
{
	uint64_t ticks, threads, pages;
	if (sm_stat(&ticks, &threads, &pages) < 0)
		return;
	uint64_t cpu = sm_cpu_ns(ticks);
	if (M.last_ns && now > M.last_ns) {
		struct sm_sample s;
		s.ns = now;
		/* CPU time (all threads) over the wall time between the two
		 * readings. */
		double cpu_s = (double)(cpu - M.last_cpu) / 1e9;
		double wall_s = (double)(now - M.last_ns) / 1e9;
		s.cpu_pct = 100.0 * cpu_s / wall_s;
		s.rss_mb = (double)pages * (double)M.page_size / (1024.0 * 1024.0);
		s.threads = (double)threads;
		s.written = 0;
		if (M.n == SM_MAX_SAMPLES) {
			M.lost += !M.buf[M.first].written;
			M.first = (M.first + 1) % SM_MAX_SAMPLES;
			M.n--;
		}
		M.buf[(M.first + M.n) % SM_MAX_SAMPLES] = s;
		M.n++;
	}
	M.last_ns = now;
	M.last_cpu = cpu;
}

static void sm_pass(uint64_t now)
{
	/* Only while recording; a pause restarts the CPU baseline so that the
	 * first sample after it does not average over the pause. */
	if (!(atomic_load_explicit(&tp_state, memory_order_relaxed) & TP_STATE_RECORDING)) {
		M.last_ns = 0;
		return;
	}
	if (M.last_ns && now - M.last_ns < M.period_ns)
		return;
	sm_take(now);
}

static void sm_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			     int64_t pid)
{
	static const char k_value[] = "value";
	size_t kept = 0;
	for (size_t i = 0; i < M.n; i++) {
		struct sm_sample *s = &M.buf[(M.first + i) % SM_MAX_SAMPLES];
		if (s->ns < first_ns) {
			/* Windows are written in order: no later one wants it. */
			kept = i + 1;
			continue;
		}
		if (s->ns > last_ns)
			break;
		tp_writer_counter(out, "CPU %", 5, k_value, 5, pid, 0, s->ns, s->cpu_pct);
		tp_writer_counter(out, "Resident memory (MB)", 20, k_value, 5, pid, 0, s->ns,
				  s->rss_mb);
		tp_writer_counter(out, "Threads", 7, k_value, 5, pid, 0, s->ns, s->threads);
		s->written = 1;
	}
	M.first = (M.first + kept) % SM_MAX_SAMPLES;
	M.n -= kept;
}

static int sm_init(const struct tp_config *cfg)
{
	if (!cfg->sample_ms)
		return -1;
	M.ticks_per_s = sysconf(_SC_CLK_TCK);
	M.page_size = sysconf(_SC_PAGESIZE);
	if (M.ticks_per_s <= 0 || M.page_size <= 0) {
		tp_warn("TRACEPROF_SAMPLE_MS: cannot read the clock tick or page size; no host counters");
		return -1;
	}
	free(M.buf);
	M.buf = malloc(SM_MAX_SAMPLES * sizeof(*M.buf));
	if (!M.buf) {
		tp_warn("TRACEPROF_SAMPLE_MS: out of memory; no host counters");
		return -1;
	}
	M.period_ns = cfg->sample_ms * 1000000ull;
	M.first = M.n = 0;
	M.last_ns = 0;
	M.lost = M.said = 0;
	return 0;
}

static void sm_footer(struct tp_doc *d)
{
	tp_doc_u64(d, "host_samples_lost", M.lost);
	if (M.lost > M.said)
		tp_warn("%llu host samples (TRACEPROF_SAMPLE_MS) were lost: a window held more than "
			"the %d kept; its first counters are missing (the footer's host_samples_lost)",
			(unsigned long long)M.lost, SM_MAX_SAMPLES);
	M.said = M.lost;
}

const struct tp_flush_plugin tp_sampler_plugin = {
	.name = "sampler",
	.init = sm_init,
	.pass = sm_pass,
	.window_events = sm_window_events,
	.footer = sm_footer,
};
