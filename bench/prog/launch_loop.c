/* The program `make bench` runs with and without the library: threads that
 * call cudaLaunchKernel (the no-op stand-in, bench/standin/noop_cudart.c)
 * through the PLT, as a training loop's launches do.
 *
 *   launch_loop [-t THREADS] [-n CALLS] [-b BURST] [-p PAUSE_US] [-w WARMUP] [-g] [-k]
 *   launch_loop -r RATE -s SECONDS [-t THREADS] [-S STEP_MS]
 *   launch_loop -m [-t THREADS] [-w WARMUP]
 *
 * Burst mode (default): each thread makes WARMUP untimed calls (so that its
 * ring's pages are faulted in before timing), sleeps, then CALLS timed calls
 * in bursts of BURST separated by PAUSE_US of sleep.  The pauses let the
 * flush thread drain the rings and are not timed.  Prints
 *   calls=N cpu_ns=N wall_ns=N errors=N
 * where cpu_ns is the sum over threads of CLOCK_THREAD_CPUTIME_ID spent in
 * bursts (what the calls cost the calling threads, whatever else shares the
 * cores) and wall_ns the sum over threads of CLOCK_MONOTONIC in bursts.
 * -g: the calls are cudaGetLastError() (no argument: its wrapper calls the
 * real function from a frame of its own while not recording, to publish it
 * for the live file; cudaLaunchKernel's passes arguments on the stack and
 * jumps).  -k: thread 0 calls traceprof_step() after the warm-up, so that
 * with a schedule recording step 0 alone the timed calls run in a step that
 * does not record, on threads that recorded before (bench/run row 16).
 *
 * Paced mode (-r): each thread makes RATE calls per second for SECONDS, in
 * slices every 200 us against absolute deadlines; thread 0 calls
 * traceprof_step() every STEP_MS (0: never) so that a schedule can rotate
 * files.  Prints calls=N seconds=S rate_min=R (calls/s of the slowest thread)
 * late_slices=N (slices that started after their deadline had passed).
 *
 * Memory mode (-m): each thread makes WARMUP calls, then, with every thread
 * still alive, prints VmRSS and VmHWM in kB (vm_rss_kb=N vm_hwm_kb=N). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

/* The stand-in's ABI (the real cudaLaunchKernel's, without CUDA headers). */
struct bench_dim3 {
	unsigned x, y, z;
};
int cudaLaunchKernel(const void *func, struct bench_dim3 grid, struct bench_dim3 block,
		     void **args, size_t shared, void *stream);
int cudaGetLastError(void);

static struct {
	int threads;
	uint64_t calls, burst, pause_us, warmup;
	double rate, seconds;
	uint64_t step_ms;
	int memory, getlast, step_after_warmup;
	pthread_barrier_t ready, done, warm;
} O = { .threads = 1, .calls = 10000000, .burst = 50000, .warmup = 100000 };

struct worker {
	pthread_t th;
	int index;
	uint64_t calls, cpu_ns, wall_ns, errors, late;
	double seconds;
};

static void kernel_stub(void)
{
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* n calls with the arguments of a small launch; returns the failures. */
static uint64_t launch(uint64_t n)
{
	struct bench_dim3 grid = { 128, 1, 1 }, block = { 256, 1, 1 };
	void *args[1] = { NULL };
	uint64_t err = 0;
	if (O.getlast) {
		for (uint64_t i = 0; i < n; i++)
			err += cudaGetLastError() != 0;
		return err;
	}
	for (uint64_t i = 0; i < n; i++)
		err += cudaLaunchKernel((const void *)kernel_stub, grid, block, args, 0, NULL) != 0;
	return err;
}

static void run_bursts(struct worker *w)
{
	/* Warm-up in bursts too, so that it is not dropped: a drop here would
	 * count in the trace footer like a drop of a timed call. */
	for (uint64_t done = 0; done < O.warmup; done += O.burst) {
		w->errors += launch(O.warmup - done < O.burst ? O.warmup - done : O.burst);
		sleep_us(O.pause_us > 20000 ? O.pause_us : 20000);
	}
	if (O.step_after_warmup) {
		/* Every thread warmed up in the recorded step before it ends. */
		pthread_barrier_wait(&O.warm);
		if (w->index == 0)
			traceprof_step();
		pthread_barrier_wait(&O.warm);
	}
	for (uint64_t done = 0; done < O.calls;) {
		uint64_t n = O.calls - done < O.burst ? O.calls - done : O.burst;
		uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
		w->errors += launch(n);
		uint64_t w1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		w->cpu_ns += c1 - c0;
		w->wall_ns += w1 - w0;
		done += n;
		if (O.pause_us)
			sleep_us(O.pause_us);
	}
	w->calls = O.calls;
}

static void run_paced(struct worker *w)
{
	const uint64_t slice_ns = 200000;
	double per_slice = O.rate * (double)slice_ns * 1e-9;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), end = t0 + (uint64_t)(O.seconds * 1e9);
	uint64_t next_step = t0 + O.step_ms * 1000000ull;
	double owed = 0;
	uint64_t deadline = t0;
	while (deadline < end) {
		owed += per_slice;
		uint64_t n = (uint64_t)owed;
		owed -= (double)n;
		w->errors += launch(n);
		w->calls += n;
		deadline += slice_ns;
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (w->index == 0 && O.step_ms && now >= next_step) {
			traceprof_step();
			next_step += O.step_ms * 1000000ull;
		}
		if (now > deadline) {
			w->late++;
			continue;
		}
		struct timespec ts = { (time_t)(deadline / 1000000000ull),
				       (long)(deadline % 1000000000ull) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	w->seconds = (double)(now_ns(CLOCK_MONOTONIC) - t0) * 1e-9;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	if (O.memory) {
		w->errors += launch(O.warmup);
		pthread_barrier_wait(&O.ready); /* main reads /proc/self/status */
		pthread_barrier_wait(&O.done);
	} else if (O.rate > 0) {
		pthread_barrier_wait(&O.ready);
		run_paced(w);
	} else {
		pthread_barrier_wait(&O.ready);
		run_bursts(w);
	}
	return NULL;
}

static long status_kb(const char *key)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	long v = -1;
	if (!f)
		return -1;
	size_t klen = strlen(key);
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, key, klen) && buf[klen] == ':')
			v = strtol(buf + klen + 1, NULL, 10);
	fclose(f);
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: launch_loop [-t THREADS] [-n CALLS] [-b BURST] [-p PAUSE_US] "
			"[-w WARMUP] [-g] [-k] [-r RATE -s SECONDS [-S STEP_MS]] [-m]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "t:n:b:p:w:r:s:S:mgk")) != -1) {
		switch (c) {
		case 't': O.threads = atoi(optarg); break;
		case 'n': O.calls = strtoull(optarg, NULL, 0); break;
		case 'b': O.burst = strtoull(optarg, NULL, 0); break;
		case 'p': O.pause_us = strtoull(optarg, NULL, 0); break;
		case 'w': O.warmup = strtoull(optarg, NULL, 0); break;
		case 'r': O.rate = strtod(optarg, NULL); break;
		case 's': O.seconds = strtod(optarg, NULL); break;
		case 'S': O.step_ms = strtoull(optarg, NULL, 0); break;
		case 'm': O.memory = 1; break;
		case 'g': O.getlast = 1; break;
		case 'k': O.step_after_warmup = 1; break;
		default: usage();
		}
	}
	if (O.threads < 1 || O.threads > 1024 || !O.burst || (O.rate > 0 && O.seconds <= 0))
		usage();
	struct worker *w = calloc((size_t)O.threads, sizeof(*w));
	if (!w)
		return 1;
	pthread_barrier_init(&O.ready, NULL, (unsigned)O.threads + 1);
	pthread_barrier_init(&O.done, NULL, (unsigned)O.threads + 1);
	pthread_barrier_init(&O.warm, NULL, (unsigned)O.threads);
	for (int i = 0; i < O.threads; i++) {
		w[i].index = i;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i])) {
			fprintf(stderr, "launch_loop: pthread_create failed\n");
			return 1;
		}
	}
	pthread_barrier_wait(&O.ready);
	if (O.memory) {
		printf("vm_rss_kb=%ld vm_hwm_kb=%ld\n", status_kb("VmRSS"), status_kb("VmHWM"));
		fflush(stdout);
		pthread_barrier_wait(&O.done);
	}
	uint64_t calls = 0, cpu = 0, wall = 0, errors = 0, late = 0;
	double rate_min = 0;
	for (int i = 0; i < O.threads; i++) {
		pthread_join(w[i].th, NULL);
		calls += w[i].calls;
		cpu += w[i].cpu_ns;
		wall += w[i].wall_ns;
		errors += w[i].errors;
		late += w[i].late;
		double r = w[i].seconds > 0 ? (double)w[i].calls / w[i].seconds : 0;
		if (i == 0 || r < rate_min)
			rate_min = r;
	}
	if (O.rate > 0)
		printf("calls=%llu seconds=%.3f rate_min=%.0f late_slices=%llu errors=%llu\n",
		       (unsigned long long)calls, w[0].seconds, rate_min, (unsigned long long)late,
		       (unsigned long long)errors);
	else if (!O.memory)
		printf("calls=%llu cpu_ns=%llu wall_ns=%llu errors=%llu\n", (unsigned long long)calls,
		       (unsigned long long)cpu, (unsigned long long)wall, (unsigned long long)errors);
	free(w);
	return errors ? 1 : 0;
}
