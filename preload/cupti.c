/* CUPTI activity tracing (preload/cupti.h): its state, loading and
 * subscribing (Kineto's settings), activity kinds on and off as the schedule
 * wants, giving CUPTI up to another client, the correlation ids, and process
 * exit and fork.  The other files of the capture side are listed in
 * preload/cupti_internal.h.
 *
 * Threads:
 *   - tp_cupti_on_cuinit() runs once on the thread of the first successful
 *     cuInit: load, register callbacks, enable kinds.
 *   - CUPTI's buffer callbacks run on CUPTI's or the program's threads
 *     (preload/cupti_buffers.c) and hand the buffers to the collector's
 *     queue (collector/cupti_queue.c).
 *   - The flush thread (collector/cupti_plugin.c) walks and decodes the
 *     queued buffers; it calls into this file only through `source`
 *     (sync(): switches the kinds, flushes CUPTI), registered when CUPTI
 *     starts recording.
 *   - An atexit handler, registered after libcupti was loaded and so run
 *     before libcupti's own exit handlers, keeps the flush thread from
 *     calling CUPTI, flushes CUPTI one last time and has the records copied
 *     out of its buffers; after it nothing calls CUPTI.
 *   - Another CUPTI client (torch.profiler, ...) registering its buffer
 *     callbacks, on its own thread (client_register(), which
 *     preload/resolve/cupti_hook.c calls through the pointer set at
 *     start): traceprof gives CUPTI up to it, or never loads it if that
 *     client came first. */
#include "preload/cupti.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "collector/control.h"
#include "collector/cupti_queue.h"
#include "common/clock.h"
#include "common/log.h"
#include "preload/resolve/cupti_hook.h"
#include "preload/cupti_internal.h"
#include "preload/state.h"
#include "preload/sources.h"

_Atomic int tp_cupti_corr_on;

_Atomic int tp_cupti_state;
static int mode = TP_CUPTI_OFF;
static uint32_t version;
/* The footer's text when CUPTI is unavailable: written once (a give-up
 * happens at most once, under client_mu) before it is reported
 * (tp_cupti_report_status(): a release store). */
static char failed_status[200];

/* Serializes our registration (load()) with another client's, so that
 * exactly one of "it came first" and "it came after us" holds. */
static pthread_mutex_t client_mu = PTHREAD_MUTEX_INITIALIZER;
static int other_client; /* under client_mu: another client registered */
/* The footer's text after a yield: written once, before it is reported.
 * `yielded` tells the timestamp callback. */
static char yield_status[200];
static _Atomic int yielded;

/* ---- callbacks ---------------------------------------------------------- */

static uint64_t CUPTIAPI timestamp(void)
{
	/* After a yield the records are another client's: CUPTI's own clock,
	 * CLOCK_REALTIME, which that client expects unless it registered a
	 * callback of its own (that replaces this one).  Relaxed: the flag is
	 * set before the client's registration goes through. */
	if (atomic_load_explicit(&yielded, memory_order_relaxed)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	/* The clock host events are converted to (common/clock.h). */
	return tp_clock_monotonic_ns();
}

/* ---- loading ------------------------------------------------------------ */

/* The wrappers stop pushing ids: calls already past their test finish on
 * the path they took. */
void tp_cupti_stop_pushing(void)
{
	atomic_store_explicit(&tp_cupti_corr_on, 0, memory_order_relaxed);
	tp_control_set_full(TP_FULL_CUPTI, 0);
}

/* Host-only mode from now on, with the one message of the process. */
void tp_cupti_give_up(const char *why)
{
	tp_cupti_stop_pushing();
	tp_cupti_kinds_off_locked();
	if (!failed_status[0]) {
		tp_format(failed_status, sizeof(failed_status), "unavailable: %s", why);
		tp_cupti_report_status(failed_status);
	}
	if (mode == TP_CUPTI_ON)
		tp_error("TRACEPROF_CUPTI=on: no GPU timeline: %s; recording host-side CUDA calls "
			 "only",
			 why);
	else
		tp_warn("no GPU timeline (%s); recording host-side CUDA calls only "
			"(TRACEPROF_CUPTI=off silences this)",
			why);
	atomic_store_explicit(&tp_cupti_state, TP_CUPTI_ST_FAILED, memory_order_release);
}

static void at_exit(void);
static void after_fork_child(void);
static void sync_now(int how);

/* What the collector's queue is given when CUPTI starts recording for us
 * (tp_cupti_queue_open()).  `sync` is the CUPTI path's one call from
 * collector/ up into preload/: cuptiActivityFlushAll and the kinds'
 * switches must be made in the process, by the code that owns CUPTI's state
 * and client lock (this file), at the times the flush thread knows (each
 * pass, each window's end).  Everything else goes down: the callbacks push
 * buffers into the queue, and the state reports itself to the footer. */
static struct tp_cupti_source source = { .sync = sync_now };

static void load_locked(void)
{
	char err[300];
	CUptiResult r;
	if (tp_cupti_open(err, sizeof(err)) < 0) {
		tp_cupti_give_up(err);
		return;
	}
	if ((r = tp_cupti_fn.GetVersion(&version)) != CUPTI_SUCCESS) {
		tp_format(err, sizeof(err), "cuptiGetVersion: %s", tp_cupti_result_str(r));
		tp_cupti_give_up(err);
		return;
	}
	tp_cupti_report_version(version);
	/* Record layouts change between CUDA major versions. */
	if (version / 10000 != CUPTI_API_VERSION / 10000) {
		tp_format(err, sizeof(err), "libcupti API version %u, traceprof was built for %u",
			  version, (unsigned)CUPTI_API_VERSION);
		tp_cupti_give_up(err);
		return;
	}
	/* Before any kind is enabled, so that every record uses it; without it
	 * CUPTI's clock is CLOCK_REALTIME, shifted back to ours when parsed. */
	if (!tp_cupti_fn.RegisterTimestampCallback ||
	    tp_cupti_fn.RegisterTimestampCallback(timestamp) != CUPTI_SUCCESS)
		tp_gpu_set_clock_offset(tp_clock_wall_offset_ns());
	r = tp_cupti_fn.RegisterCallbacks(tp_cupti_buffer_requested, tp_cupti_buffer_completed);
	if (r != CUPTI_SUCCESS) {
		tp_format(err, sizeof(err), "cuptiActivityRegisterCallbacks: %s",
			  tp_cupti_result_str(r));
		tp_cupti_give_up(err);
		return;
	}
	/* Before any wrapper can push an id (the kinds set tp_cupti_corr_on):
	 * see collector/gpu.h. */
	tp_gpu_flows_start();
	/* Every kind once, so that a CUPTI that refuses one says so now. */
	if (tp_cupti_kinds_set_locked(1) < 0) {
		tp_gpu_flows_off();
		return;
	}
	atexit(at_exit);
	pthread_atfork(NULL, NULL, after_fork_child);
	tp_cupti_query_devices();
	tp_cupti_report_status("active");
	/* Release pairs with the acquire load in sync_now(). */
	atomic_store_explicit(&tp_cupti_state, TP_CUPTI_ST_ACTIVE, memory_order_release);
	/* After the atexit handler is set: the flush thread calls CUPTI only
	 * while it has not run. */
	source.next_record = tp_cupti_fn.GetNextRecord;
	tp_cupti_queue_open(&source);
	if (!tp_cupti_kinds_wanted())
		tp_cupti_kinds_set_locked(0);
	tp_debug("CUPTI %u: loaded; GPU activity recorded in WARMUP and recording steps",
		 version);
}

static void load(void)
{
	pthread_mutex_lock(&client_mu);
	if (other_client || tp_cupti_hook_early())
		tp_cupti_give_up("another CUPTI client, such as torch.profiler, registered its "
				 "activity callbacks first and keeps CUPTI");
	else
		load_locked();
	pthread_mutex_unlock(&client_mu);
}

/* Gives CUPTI up to another client that is about to register (client_mu
 * held, state TP_CUPTI_ST_YIELDING): our partly filled buffers come back to our own
 * callbacks while they are still the registered ones, our kinds go off (the
 * client enables what it wants), and no call pushes our ids any more.  A
 * call that read tp_cupti_corr_on just before may still push one id into the
 * client's records. */
static void yield(void)
{
	tp_cupti_stop_pushing();
	tp_cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	tp_cupti_kinds_off_locked();
	unsigned long long step = (unsigned long long)tp_control_current_step();
	tp_format(yield_status, sizeof(yield_status),
		  "yielded at step %llu: another CUPTI client registered its activity callbacks",
		  step);
	tp_cupti_report_status(yield_status);
	/* Before this thread's next record: see collector/gpu.h. */
	tp_gpu_flows_stop(tp_clock_now());
	/* Relaxed: the timestamp callback's (its comment). */
	atomic_store_explicit(&yielded, 1, memory_order_relaxed);
	/* Release pairs with the acquire load in sync_now(): the flush thread
	 * still decodes what the flush above handed over, but calls CUPTI no
	 * more than to walk our buffers. */
	atomic_store_explicit(&tp_cupti_state, TP_CUPTI_ST_YIELDED, memory_order_release);
	tp_warn("another CUPTI client (torch.profiler?) took the GPU activity records at step "
		"%llu; traceprof leaves CUPTI to it and records host-side CUDA calls only from "
		"here on",
		step);
}

/* The handler of another client's registration (preload/resolve/cupti_hook.h),
 * handed to cupti_hook.c by tp_cupti_start(). */
static CUptiResult client_register(tp_cupti_register_fn real, CUpti_BuffersCallbackRequestFunc req,
				   CUpti_BuffersCallbackCompleteFunc complete)
{
	/* NULL callbacks: CUPTI refuses them and changes nothing. */
	if (!req || !complete)
		return real(req, complete);
	int saved = errno;
	pthread_mutex_lock(&client_mu);
	other_client = 1;
	int expect = TP_CUPTI_ST_ACTIVE;
	if (atomic_compare_exchange_strong_explicit(&tp_cupti_state, &expect, TP_CUPTI_ST_YIELDING,
						    memory_order_acq_rel, memory_order_relaxed))
		yield();
	errno = saved;
	CUptiResult r = real(req, complete);
	pthread_mutex_unlock(&client_mu);
	return r;
}

void tp_cupti_on_cuinit(int result)
{
	if (mode == TP_CUPTI_OFF || !tp_preload_active())
		return;
	if (atomic_load_explicit(&tp_cupti_state, memory_order_relaxed) != TP_CUPTI_ST_IDLE)
		return;
	if (result != 0 && mode != TP_CUPTI_ON)
		return; /* no GPU here: a later successful cuInit may still come */
	int expect = TP_CUPTI_ST_IDLE;
	/* Exactly one caller loads; a cuInit re-entered from CUPTI's own set-up
	 * sees TP_CUPTI_ST_LOADING and returns. */
	if (!atomic_compare_exchange_strong_explicit(&tp_cupti_state, &expect, TP_CUPTI_ST_LOADING,
						     memory_order_acq_rel, memory_order_relaxed))
		return;
	if (result != 0) {
		/* TRACEPROF_CUPTI=on: try anyway, so the message names the cause. */
		tp_debug("cuInit returned %d; loading CUPTI anyway (TRACEPROF_CUPTI=on)", result);
	}
	tp_cupti_report_status("loading");
	load();
}

/* Both preserve errno: the generated wrappers do not save it around them
 * (the program must see the errno its CUDA call left). */
int tp_cupti_push_slow(uint64_t ext)
{
	int saved = errno;
	int ok = tp_cupti_fn.PushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
						       ext) == CUPTI_SUCCESS;
	errno = saved;
	return ok;
}

void tp_cupti_pop_slow(void)
{
	int saved = errno;
	uint64_t last;
	tp_cupti_fn.PopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
	errno = saved;
}

/* ---- exit and fork ------------------------------------------------------ */

static void at_exit(void)
{
	/* After a yield, CUPTI is another client's: only our buffers are
	 * copied out. */
	int expect = TP_CUPTI_ST_ACTIVE;
	if (!atomic_compare_exchange_strong_explicit(&tp_cupti_state, &expect, TP_CUPTI_ST_STOPPED,
						     memory_order_acq_rel, memory_order_relaxed) &&
	    (expect != TP_CUPTI_ST_YIELDED ||
	     !atomic_compare_exchange_strong_explicit(&tp_cupti_state, &expect, TP_CUPTI_ST_STOPPED,
						      memory_order_acq_rel, memory_order_relaxed)))
		return;
	int ours = expect == TP_CUPTI_ST_ACTIVE;
	/* Waits (bounded) until the flush thread is out of its calls to CUPTI
	 * (sync_now(), cuptiActivityGetNextRecord); it makes none after.  Not
	 * under client_mu, which sync_now() may be waiting for. */
	tp_cupti_queue_close();
	pthread_mutex_lock(&client_mu);
	tp_cupti_stop_pushing();
	/* The records out of the queued buffers (while libcupti still walks
	 * them), which frees them, then CUPTI's last flush; again while that
	 * flush was refused buffers (a queue that a late flush thread left
	 * full), bounded. */
	for (int round = 0; round < 16; round++) {
		tp_cupti_queue_copy_out();
		if (!ours)
			break;
		uint64_t refused = tp_cupti_queue_refused();
		tp_cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		if (tp_cupti_queue_refused() == refused)
			break;
	}
	if (ours)
		tp_cupti_kinds_off_locked();
	pthread_mutex_unlock(&client_mu);
	tp_cupti_queue_copy_out();
}

static void after_fork_child(void)
{
	/* CUDA does not survive fork: the child records host events only. */
	tp_cupti_stop_pushing();
	atomic_store_explicit(&tp_cupti_state, TP_CUPTI_ST_FAILED, memory_order_relaxed);
	tp_cupti_queue_forget();
	atomic_store_explicit(&yielded, 0, memory_order_relaxed);
	tp_gpu_reset();
	tp_gpu_flows_off();
	tp_cupti_report_status("off in forked child");
}

/* ---- for the flush thread (source.sync) --------------------------------- */

/* Our activity kinds on or off as the schedule wants (TRACEPROF_STEPS). */
static void follow_schedule(void)
{
	int want = tp_cupti_kinds_wanted();
	if (want != tp_cupti_kinds_on()) {
		pthread_mutex_lock(&client_mu);
		/* Not after exit or a yield took CUPTI (both under the lock). */
		if (atomic_load_explicit(&tp_cupti_state, memory_order_acquire) ==
			    TP_CUPTI_ST_ACTIVE &&
		    want != tp_cupti_kinds_on())
			tp_cupti_kinds_set_locked(want);
		pthread_mutex_unlock(&client_mu);
	}
}

/* The flush thread, through the collector's queue (tp_cupti_queue_drain()),
 * which calls it only before the exit handler closed the queue. */
static void sync_now(int how)
{
	/* Acquire pairs with the release stores of the state (load_locked(),
	 * yield()): CUPTI is ours, set up, and not yet another client's. */
	if (atomic_load_explicit(&tp_cupti_state, memory_order_acquire) != TP_CUPTI_ST_ACTIVE)
		return;
	follow_schedule();
	if (how & TP_CUPTI_SYNC_FLUSH)
		tp_cupti_fn.FlushAll(how & TP_CUPTI_SYNC_FORCED ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

/* The sources table's start (preload/sources.c): TRACEPROF_CUPTI. */
int tp_cupti_start(const struct tp_config *cfg)
{
	mode = cfg->cupti;
	tp_cupti_hook_set_client(client_register);
	tp_cupti_report_status(mode == TP_CUPTI_OFF ? "off" : "not loaded: no successful cuInit");
	return 0;
}
