/* Step sources for unmodified programs (preload/steps.h).
 *
 * Set up by tp_steps_start() (a row of the sources table, preload/sources.c)
 * on the constructor's thread, before the flush thread starts.  time:MS runs
 * a thread of its own, never a program thread: the flush thread's pass is
 * TRACEPROF_FLUSH_MS apart and too coarse for a step of a few milliseconds. */
#include "preload/steps.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "collector/capture.h"
#include "collector/control.h"
#include "collector/hot_data.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/log.h"
#include "preload/cuda_pack.h"
#include "preload/state.h"

TP_HOT_DATA uint32_t tp_steps_call_id = UINT32_MAX;
int tp_steps_nvtx_on;

static uint64_t call_every = 1;
static _Atomic uint64_t call_count;

static char nvtx_name[TP_CONFIG_STR];
static size_t nvtx_len;
static int nvtx_prefix;

static int capture_on;

static uint64_t time_period_ns;
static pthread_t timer;
static int timer_running;

void tp_steps_call_hit(void)
{
	uint64_t n = atomic_fetch_add_explicit(&call_count, 1, memory_order_relaxed) + 1;
	if (n % call_every == 0 && tp_preload_active())
		tp_control_step();
}

void tp_steps_profiler_api(uint32_t id)
{
	if (!capture_on || !tp_preload_active())
		return;
	int start = id == TP_STEPS_ID_cudaProfilerStart || id == TP_STEPS_ID_cuProfilerStart;
	/* Before the real call (the generated wrapper calls us first): a start
	 * call is the range's first event, a stop call is outside it.  Nested
	 * starts and unpaired stops are ignored; a runtime's start or stop that
	 * reaches the driver's own (cudaProfilerStart -> cuProfilerStart) is
	 * such a nested or unpaired call. */
	if (tp_control_capture(start) == -ENOSPC) {
		static _Atomic int said;
		if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed))
			tp_warn("TRACEPROF_CAPTURE: more than %d capture ranges; later ones are "
				"not recorded", TP_CAPTURE_MAX_RANGES);
	}
}

int tp_steps_nvtx_match(const char *name, size_t len)
{
	if (!name)
		return 0;
	if (nvtx_prefix)
		return len >= nvtx_len && !memcmp(name, nvtx_name, nvtx_len);
	return len == nvtx_len && !memcmp(name, nvtx_name, nvtx_len);
}

static void *timer_main(void *arg)
{
	(void)arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		uint64_t ns = (uint64_t)next.tv_nsec + time_period_ns;
		next.tv_sec += (time_t)(ns / 1000000000ull);
		next.tv_nsec = (long)(ns % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		/* A late wake-up (a stopped process, an overloaded machine) makes
		 * one step, not a burst: the next deadline moves past now. */
		uint64_t now = tp_clock_monotonic_ns();
		uint64_t due = (uint64_t)next.tv_sec * 1000000000ull + (uint64_t)next.tv_nsec;
		if (now > due + time_period_ns) {
			next.tv_sec = (time_t)(now / 1000000000ull);
			next.tv_nsec = (long)(now % 1000000000ull);
		}
		if (tp_preload_active())
			tp_control_step();
	}
	return NULL;
}

static int start_timer(void)
{
	sigset_t all, old;
	sigfillset(&all);
	/* Signals stay with the program's threads (as for the flush thread). */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&timer, &attr, timer_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_setname_np(timer, "traceprof-steps");
	timer_running = 1;
	return 0;
}

static void atfork_child(void)
{
	/* The timer thread does not exist in the child: start a new one when the
	 * child records (TRACEPROF_FOLLOW_FORK). */
	if (timer_running && tp_preload_config()->follow_fork && start_timer() < 0)
		tp_error("TRACEPROF_STEP=time: cannot start the step timer in the forked child");
}

int tp_steps_start(const struct tp_config *cfg)
{
	if (cfg->capture) {
		tp_control_set_capture();
		capture_on = 1;
	}
	switch (cfg->step_source) {
	case TP_STEP_NVTX: {
		size_t len = strlen(cfg->step_arg);
		nvtx_prefix = len > 0 && cfg->step_arg[len - 1] == '*';
		nvtx_len = nvtx_prefix ? len - 1 : len;
		memcpy(nvtx_name, cfg->step_arg, nvtx_len);
		tp_steps_nvtx_on = 1;
		break;
	}
	case TP_STEP_CALL: {
		int id = tp_cuda_find(cfg->step_arg);
		if (id < 0) {
			tp_error("TRACEPROF_STEP: 'call:%s': not a CUDA function traceprof "
				 "intercepts; no steps will be counted (use an exact name such as "
				 "call:cudaGraphLaunch; `scripts/gen-cuda-wrappers --list` lists them)",
				 cfg->step_arg);
			break;
		}
		call_every = cfg->step_every ? cfg->step_every : 1;
		tp_steps_call_id = (uint32_t)id;
		break;
	}
	case TP_STEP_TIME: {
		time_period_ns = cfg->step_every * 1000000ull;
		int rc = start_timer();
		if (rc < 0) {
			tp_error("TRACEPROF_STEP: 'time:%llu': cannot start the step timer: %s",
				 (unsigned long long)cfg->step_every, strerror(-rc));
			break;
		}
		pthread_atfork(NULL, NULL, atfork_child);
		break;
	}
	default:
		break;
	}
	return 0;
}
