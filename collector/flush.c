/* The flush thread (collector/flush.h): its start, its pass loop, the final
 * save at exit or on a signal, and a forked child's fresh start.  The jobs
 * of a pass live in their own files (collector/flush_int.h lists them). */
#include "collector/flush.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/activity.h"
#include "collector/control.h"
#include "collector/cut.h"
#include "collector/flush_int.h"
#include "collector/live.h"
#include "collector/fthread.h"
#include "collector/rotate.h"
#include "collector/store.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/log.h"
#include "format/sink.h"
#include "format/trace.h" /* tp_trace_base_time() */

/* The thread and how the program's threads talk to it. */
static struct {
	pthread_t thread;
	/* The thread's life (FL_*): it starts when there is first something to
	 * flush (tp_flush_need()), never at load, so that a process that records
	 * nothing stays single-threaded (unshare(CLONE_NEWUSER) refuses a
	 * multi-threaded process).  The CAS from FL_NONE to FL_STARTING elects
	 * the one starter; its release store of FL_RUNNING (F.thread written
	 * before) pairs with the acquire loads in fl_thread_state(). */
	_Atomic int tstate;
	/* tp_flush_start() ran: the collector is set up and a thread may start.
	 * Set with release at the end of tp_flush_start(); read with acquire in
	 * tp_flush_need(), which a source started before it (the step timer
	 * thread of TRACEPROF_STEP=time) may call at any moment. */
	_Atomic int configured;
	/* A futex word, not a descriptor: the program may close any descriptor
	 * (common/fd.h), and waking needs no file.  Incremented (release) to
	 * wake the thread early; the thread's acquire load pairs with it. */
	_Atomic uint32_t wake;
	/* Set by tp_flush_finish*(); read by the flush loop (acquire pairs with
	 * the release store before the wake). */
	_Atomic int stop;
	_Atomic int finish_req; /* exit or a signal asks for the final save */
	_Atomic int finished;	/* the final save has started */
	_Atomic int stopped;	/* fl_stop_recording() ran */
	/* A futex word: 1 when the final save is done and its files are in
	 * place.  Release store in fl_final_save(), acquire loads in
	 * fl_wait_saved(). */
	_Atomic uint32_t saved;
	/* Whole passes the thread has run: release store at the end of each,
	 * acquire load in tp_flush_sync(). */
	_Atomic uint64_t passes_done;
	uint64_t last_recal_ns;
	uint64_t last_disk_ns; /* the last tp_fl_windows_flush() */
} F;

enum { FL_NONE, FL_STARTING, FL_RUNNING, FL_FAILED };

static long fl_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

/* Wakes the flush thread early.  Async-signal-safe: an atomic add and one
 * futex(FUTEX_WAKE) call. */
static void fl_wake(void)
{
	/* Release: the flags stored before the wake are seen by the thread's
	 * acquire load of the word in fl_main(). */
	atomic_fetch_add_explicit(&F.wake, 1, memory_order_release);
	fl_futex(&F.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The rings' high-water hook (tp_ring_set_wake()): a producer whose ring is
 * half full wakes the thread, which then moves the records into the store.
 * Runs on any recording thread, signal handlers included: fl_wake(), which
 * is async-signal-safe, with errno kept. */
static void fl_wake_hint(void)
{
	int saved = errno;
	fl_wake();
	errno = saved;
}

/* Waits until the final save is done, at most timeout_ms.  Returns 0 when
 * saved, -1 on timeout.  Async-signal-safe.  On the caller's thread it makes
 * futex(FUTEX_WAIT) calls only (the clock is read through the vDSO). */
static int fl_wait_saved(uint64_t timeout_ms)
{
	uint64_t end = tp_clock_monotonic_ns() + timeout_ms * 1000000ULL;
	/* Acquire pairs with the release store at the end of fl_final_save():
	 * the files it wrote are complete once this reads 1. */
	while (!atomic_load_explicit(&F.saved, memory_order_acquire)) {
		uint64_t now = tp_clock_monotonic_ns();
		if (now >= end)
			return -1;
		uint64_t left = end - now;
		struct timespec ts = { (time_t)(left / 1000000000ULL),
				       (long)(left % 1000000000ULL) };
		fl_futex(&F.saved, FUTEX_WAIT_PRIVATE, 0, &ts);
	}
	return 0;
}

/* The window machine's input: the action of a step, as the hot path saw it
 * (the schedule, a trigger's capture, a capture range). */
static enum tp_action fl_action(void *ctx, uint64_t step)
{
	(void)ctx;
	return tp_control_action(step);
}

static const struct tp_fl_parts_ctx fl_parts_ctx = {
	.display_step = tp_control_display_step,
};

static const struct tp_wsm_ops fl_wsm_ops = {
	.action = fl_action,
	.opened = tp_fl_window_opened,
	.finalize = tp_fl_window_finalize,
};

/* A thread's state is kept while records of it wait in the store, and
 * while a window it wrote into is held. */
static int fl_thread_in_use(struct tp_thread *t, void *ctx)
{
	(void)ctx;
	const struct tp_fthread *f = t->fl;
	if (f && f->stored.records)
		return 1;
	for (int i = 0; i < tp_fl.wsm.nwin; i++)
		if (tp_fthread_in_window(f, tp_fl.wsm.win[i].id))
			return 1;
	return 0;
}

static void fl_thread_forget(struct tp_thread *t, void *ctx)
{
	(void)ctx;
	tp_live_forget_thread(t);
	tp_fthread_forget(t);
}

/* One pass; returns 1 when a backlog is left in the store. */
static int fl_run_pass(void)
{
	uint64_t now = tp_clock_monotonic_ns();
	tp_wsm_pass(&tp_fl.wsm);
	if (now - F.last_recal_ns > 1000000000ULL) {
		tp_clock_recalibrate();
		F.last_recal_ns = now;
	}
	tp_fl_plugins_pass(now);
	/* Drain first: records advance the windows as they come, so the
	 * windows of short steps are still open when their records arrive. */
	int backlog = tp_fl_drain_pass();
	if (now - F.last_disk_ns >= TP_FL_DISK_NS) {
		tp_fl_windows_flush(&tp_fl.wsm);
		F.last_disk_ns = now;
	}
	tp_wsm_advance(&tp_fl.wsm, tp_control_current_step());
	/* With a backlog, records of a closed window may still be in the store:
	 * windows wait for the pass that converts everything. */
	if (!backlog) {
		tp_live_top_note(0); /* a closed window's top, before it goes */
		tp_wsm_finalize(&tp_fl.wsm, 0);
	}
	tp_threads_reap(fl_thread_in_use, fl_thread_forget, NULL);
	tp_control_log_warnings();
	tp_live_pass(now);
	/* Pairs with the acquire load in tp_flush_sync(): a whole pass means
	 * every record moved before it is converted. */
	if (!backlog)
		atomic_fetch_add_explicit(&F.passes_done, 1, memory_order_release);
	return backlog;
}

/* torch's stop(): the current step's ProfilerStep record ends now, written
 * by the calling thread (at exit: the exiting thread, whose tid the step
 * had), and recording stops.  Once. */
static void fl_stop_recording(void)
{
	if (atomic_exchange_explicit(&F.stopped, 1, memory_order_acq_rel))
		return;
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (s & TP_STATE_RECORDING)
		tp_control_emit_step(s >> TP_STATE_STEP_SHIFT, tp_control_step_start(),
				     tp_clock_now(), 1);
	tp_control_disable();
}

/* The final save: the exit transition of torch's table. */
static void fl_final_save(void)
{
	if (atomic_exchange_explicit(&F.finished, 1, memory_order_acq_rel))
		return;
	fl_stop_recording();
	uint64_t step = tp_control_current_step();
	tp_fl_plugins_pass(tp_clock_monotonic_ns());
	tp_fl_drain_final();
	tp_live_top_note(1); /* the last window's top, before it is saved */
	tp_wsm_exit(&tp_fl.wsm, step);
	tp_control_log_warnings();
	tp_live_final();
	/* Release pairs with the acquire load in fl_wait_saved(). */
	atomic_store_explicit(&F.saved, 1, memory_order_release);
	fl_futex(&F.saved, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

static void *fl_main(void *arg)
{
	(void)arg;
	tp_cut_flush_thread(); /* earlier runs' cut windows: scanned here only */
	tp_clock_recalibrate();
	F.last_recal_ns = tp_clock_monotonic_ns();
	uint64_t last_alone_check = F.last_recal_ns;
	/* Acquire pairs with the release add in fl_wake(). */
	uint32_t seen = atomic_load_explicit(&F.wake, memory_order_acquire);
	int backlog = 0;
	/* Pairs with the release stores in tp_flush_finish*(). */
	while (!atomic_load_explicit(&F.stop, memory_order_acquire)) {
		uint64_t now = tp_clock_monotonic_ns();
		if (now - last_alone_check > 100000000ULL) {
			last_alone_check = now;
			/* exit() runs the destructor on this thread, which saves
			 * the trace. */
			if (tp_fl_alone())
				exit(0);
		}
		/* Returns at once when a wake came since `seen` was read.  With
		 * a backlog in the store, the next pass goes on without a wait. */
		struct timespec ts = { (time_t)(tp_fl.cfg.flush_ms / 1000),
				       (long)(tp_fl.cfg.flush_ms % 1000) * 1000000L };
		if (!backlog)
			fl_futex(&F.wake, FUTEX_WAIT_PRIVATE, seen, &ts);
		seen = atomic_load_explicit(&F.wake, memory_order_acquire);
		if (atomic_load_explicit(&F.finish_req, memory_order_acquire)) {
			/* The final save, for exit() or a signal, runs here and
			 * never on the program's thread: that thread may be under
			 * a seccomp filter of the program's (installed after this
			 * thread was created, so not on it) that forbids the
			 * file calls of a save, and it keeps its own signal mask
			 * (SIGXFSZ past RLIMIT_FSIZE is blocked here: a write
			 * fails with EFBIG instead).  Nobody joins this thread. */
			fl_final_save();
			pthread_detach(pthread_self());
			break;
		}
		backlog = fl_run_pass();
	}
	return NULL;
}

static int fl_start_thread(void)
{
	/* Block every signal while creating the thread, so that it inherits a
	 * full mask and never runs the program's handlers. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	int rc = pthread_create(&F.thread, &attr, fl_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_setname_np(F.thread, "traceprof-flush");
	return 0;
}

/* Whether this process is the one the collector was set up in (or last
 * forked into, with the fork handlers run).  A child made by clone()
 * without CLONE_VM, or by a raw SYS_clone, runs no fork handler: it holds a
 * copy of its parent's state, taken wherever the parent's flush thread was,
 * and no flush thread.  It records nothing (it is disabled here, once) and
 * never waits for a thread it does not have.  getpid() is a system call:
 * only on slow paths (the thread's start, exit, a signal). */
static int fl_own_process(void)
{
	if ((int64_t)getpid() == tp_fl.pid)
		return 1;
	static _Atomic int said;
	tp_control_disable();
	if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed))
		tp_info("process %lld was started without fork handlers (clone() without "
			"CLONE_VM?) from process %lld: it is not recorded",
			(long long)getpid(), (long long)tp_fl.pid);
	return 0;
}

/* FL_RUNNING, FL_FAILED or FL_NONE.  A start under way on another thread
 * (FL_STARTING: pthread_create() takes microseconds) is waited for, so that
 * the caller never saves beside a thread that is about to run a pass.
 * Async-signal-safe: atomic loads and nanosleep(). */
static int fl_thread_state(void)
{
	struct timespec us = { 0, 100000 };
	/* Acquire pairs with the release store of FL_RUNNING in tp_flush_need():
	 * F.thread is set once this reads FL_RUNNING.  Bounded: 1 s. */
	int st = atomic_load_explicit(&F.tstate, memory_order_acquire);
	for (int i = 0; st == FL_STARTING && i < 10000; i++) {
		nanosleep(&us, NULL);
		st = atomic_load_explicit(&F.tstate, memory_order_acquire);
	}
	return st == FL_STARTING ? FL_FAILED : st;
}

void tp_flush_need(void)
{
	/* Relaxed: the common case, a thread already started or tried, leaves
	 * at once; the CAS below decides. */
	if (atomic_load_explicit(&F.tstate, memory_order_relaxed) != FL_NONE ||
	    !atomic_load_explicit(&F.configured, memory_order_acquire))
		return;
	int expect = FL_NONE;
	if (!atomic_compare_exchange_strong_explicit(&F.tstate, &expect, FL_STARTING,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	int saved = errno;
	if (!fl_own_process() || atomic_load_explicit(&F.finished, memory_order_acquire)) {
		atomic_store_explicit(&F.tstate, FL_FAILED, memory_order_release);
		errno = saved;
		return;
	}
	/* On this thread, before the flush thread exists: a program that exits
	 * right after has its status kept all the same. */
	tp_live_thread_started();
	int rc = fl_start_thread();
	/* Release: F.thread, written by pthread_create(), is seen by whoever
	 * reads FL_RUNNING with acquire (fl_thread_state()). */
	atomic_store_explicit(&F.tstate, rc < 0 ? FL_FAILED : FL_RUNNING, memory_order_release);
	if (rc < 0)
		tp_warn("cannot start the flush thread: %s; what is recorded is saved at exit "
			"only, and a full buffer drops (counted)",
			strerror(-rc));
	errno = saved;
}

void tp_flush_start(const struct tp_config *cfg, const struct tp_template_vars *vars,
		    const struct tp_flush_plugin *const *plugins, int nplugins)
{
	tp_fl.cfg = *cfg;
	tp_fl.vars = *vars;
	tp_fl.pid = (int64_t)getpid();
	tp_fl.start_wall = tp_clock_wall_offset_ns() + (int64_t)tp_clock_monotonic_ns();
	/* The cap is on the writer's bytes (before compression). */
	tp_fl.max_part_bytes = tp_wsm_part_cap(cfg->max_file_mb);
	tp_fl.base_wall = tp_trace_base_time(tp_clock_wall_offset_ns() +
					     (int64_t)tp_clock_monotonic_ns());
	tp_fl_read_identity();
	const char *fmt = cfg->format == TP_FORMAT_PERFETTO ? "perfetto" : "json";
	tp_fl.ops = tp_writer_find(fmt);
	if (!tp_fl.ops) {
		/* The Perfetto writer is not in this build yet. */
		tp_warn("TRACEPROF_FORMAT=%s: this build has no %s writer; writing JSON", fmt, fmt);
		tp_fl.ops = &tp_json_writer;
	}
	if (!tp_fl.footer.nodes)
		tp_doc_init(&tp_fl.footer);
	if (tp_fl_plugins_set(plugins, nplugins) < 0)
		tp_warn("too many flush plugins; the last ones are left out");
	tp_fl_plugins_init(cfg);
	tp_wsm_init(&tp_fl.wsm, &fl_wsm_ops, (void *)&fl_parts_ctx, tp_control_current_step());
	tp_store_configure(cfg->max_buffer_mb * 1024 * 1024);
	tp_ring_set_wake(fl_wake_hint);
	tp_threads_set_first_use(tp_flush_need);
	tp_activity_set_start(tp_flush_need);
	/* Folders stay where they are now, whatever chdir() or chroot() the
	 * program makes (format/sink.h).  Without the anchor (no getcwd, no
	 * "/"), they follow the working and root directories, as before. */
	int arc = tp_sink_anchor();
	if (arc < 0)
		tp_warn("cannot hold the working or root directory (%s); TRACEPROF_FOLDER "
			"will follow the program's chdir() and chroot()",
			strerror(-arc));
	/* After the anchor: the live folder is made absolute from the
	 * working directory of the start (a relative TRACEPROF_FOLDER). */
	tp_live_init(cfg, vars);
	/* Release: the set-up above is seen by tp_flush_need()'s acquire. */
	atomic_store_explicit(&F.configured, 1, memory_order_release);
}

void tp_flush_sync(int timeout_ms)
{
	if (!fl_own_process() || fl_thread_state() != FL_RUNNING ||
	    pthread_equal(pthread_self(), F.thread) ||
	    atomic_load_explicit(&F.finished, memory_order_acquire))
		return;
	/* The pass under way may have drained before the caller's last
	 * records: wait for the end of the one after it. */
	uint64_t want = atomic_load_explicit(&F.passes_done, memory_order_acquire) + 2;
	fl_wake();
	int rewoken = 0;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < timeout_ms; i++) {
		uint64_t done = atomic_load_explicit(&F.passes_done, memory_order_acquire);
		if (done >= want)
			return;
		/* Wake it for the second pass too, rather than wait for its poll
		 * timeout. */
		if (!rewoken && done + 1 >= want) {
			fl_wake();
			rewoken = 1;
		}
		nanosleep(&ms, NULL);
	}
}

void tp_flush_finish(void)
{
	if (atomic_load_explicit(&F.finished, memory_order_acquire) || !fl_own_process())
		return;
	if (fl_thread_state() != FL_RUNNING || pthread_equal(pthread_self(), F.thread)) {
		/* exit() from the flush thread itself (tp_fl_alone()),
		 * whose signals are all blocked, or no flush thread (nothing
		 * was recorded, or it could not start): save here. */
		atomic_store_explicit(&F.stop, 1, memory_order_release);
		fl_final_save();
		return;
	}
	/* The flush thread saves; this (the program's exiting) thread ends the
	 * step (a record in its own ring), wakes the flush thread and waits:
	 * futex calls, and nothing else. */
	fl_stop_recording();
	atomic_store_explicit(&tp_fl.cut_ns,
			      tp_clock_monotonic_ns() + tp_fl.cfg.exit_timeout_s * 500000000ULL,
			      memory_order_relaxed);
	/* Release: the step record above is in the ring before the flush
	 * thread's acquire load of finish_req in fl_main(). */
	atomic_store_explicit(&F.finish_req, 1, memory_order_release);
	fl_wake();
	if (fl_wait_saved(tp_fl.cfg.exit_timeout_s * 1000ULL) == 0)
		return;
	tp_error("the final save did not finish within %llu s (TRACEPROF_EXIT_TIMEOUT_S); "
		 "the process exits without it: the last window's trace is lost and a hidden "
		 "temporary file may remain; raise TRACEPROF_EXIT_TIMEOUT_S to wait longer",
		 (unsigned long long)tp_fl.cfg.exit_timeout_s);
}

uint64_t tp_flush_files_saved(void)
{
	/* Plain read: the acquire load of F.saved in fl_wait_saved() (or the
	 * save on this very thread) came after the flush thread's count. */
	return tp_fl.files_saved;
}

int tp_flush_finish_from_signal(int timeout_ms)
{
	if (!fl_own_process())
		return -1;
	if (fl_thread_state() != FL_RUNNING)
		return atomic_load_explicit(&F.finished, memory_order_acquire) ? 0 : -1;
	atomic_store_explicit(&tp_fl.cut_ns,
			      tp_clock_monotonic_ns() + (uint64_t)timeout_ms * 500000ULL,
			      memory_order_relaxed);
	/* Release pairs with the acquire load in fl_main(). */
	atomic_store_explicit(&F.finish_req, 1, memory_order_release);
	fl_wake();
	return fl_wait_saved((uint64_t)timeout_ms);
}

void tp_flush_after_fork_child(int follow)
{
	/* The parent's flush thread does not exist here and its files belong to
	 * the parent.  That thread may have been anywhere when the program
	 * forked, e.g. between finalizing a window and removing it from the
	 * machine: nothing it owns can be trusted here, so reset to empty and
	 * free nothing (the windows, sinks, buffers and descriptors leak in the
	 * child: their pages are the parent's, shared copy-on-write). */
	tp_wsm_forget(&tp_fl.wsm);
	/* The child starts its own thread when it first records
	 * (tp_flush_need()), as a new process would. */
	atomic_store_explicit(&F.tstate, FL_NONE, memory_order_relaxed);
	tp_threads_after_fork_child();
	tp_store_after_fork_child();
	tp_rotate_forget();
	tp_sink_live_forget();
	atomic_store_explicit(&F.finish_req, 0, memory_order_relaxed);
	atomic_store_explicit(&F.saved, 0, memory_order_relaxed);
	atomic_store_explicit(&F.stopped, 0, memory_order_relaxed);
	atomic_store_explicit(&tp_fl.cut_ns, 0, memory_order_relaxed);
	tp_fl.cut_total = 0;
	tp_fl.files_saved = 0;
	if (!follow || atomic_load_explicit(&F.finished, memory_order_relaxed)) {
		tp_control_disable();
		return;
	}
	atomic_store_explicit(&F.stop, 0, memory_order_relaxed);
	tp_fl.pid = (int64_t)getpid();
	tp_fl.vars.pid = tp_fl.pid;
	tp_live_after_fork_child();
	/* Another process of the same run (the run id is the parent's). */
	tp_fl.start_wall = tp_clock_wall_offset_ns() + (int64_t)tp_clock_monotonic_ns();
	/* A child writes its own files: without {pid} in the name, parent and
	 * child would collide, so the child's name gets its pid in front. */
	if (!strstr(tp_fl.cfg.filename, "{pid}")) {
		char name[TP_CONFIG_STR];
		tp_format(name, sizeof(name), "pid{pid}.%s", tp_fl.cfg.filename);
		memcpy(tp_fl.cfg.filename, name, sizeof(name));
	}
	tp_wsm_init(&tp_fl.wsm, &fl_wsm_ops, (void *)&fl_parts_ctx, tp_control_current_step());
}
