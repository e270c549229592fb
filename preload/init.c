/* The library's constructor and destructor, and what ties the process's life
 * cycle to the collector: exit, SIGINT/SIGTERM, fork.
 *
 * This file is the top of preload/: it calls the sources, the resolution
 * (preload/resolve/: copies, the dlopen hook's warm-up, NVTX's start-up) and
 * CUPTI's start, and nothing calls back into it but the generated cuInit
 * wrapper (tp_preload_on_cuinit()).  The state the other files read (whether
 * the library records, the configuration) is in the leaf preload/state.c,
 * which this file writes; scripts/check-layers fails on any loop of calls
 * between files but the few it allows. */
#include "preload/init.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector/control.h"
#include "collector/flush.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/dl.h"
#include "common/log.h"
#include "common/preload_env.h"
#include "format/template.h"
#include "preload/cuda_pack.h"
#include "preload/resolve/copies.h"
#include "preload/cupti.h"
#include "preload/resolve/dl_hooks.h"
#include "preload/export.h"
#include "preload/pystack_api.h"
#include "collector/hot.h"
#include "preload/resolve/nvtx_loader.h"
#include "preload/sources.h"
#include "preload/state.h"

static struct tp_config cfg;
static int initialised;
/* For the exit's "no trace file" line (say_why_no_file()): the first
 * successful cuInit (relaxed: read at exit, after the program's threads
 * are done with it), and whether this process is the one of its node that
 * speaks (local rank 0), so that eight ranks do not print eight lines. */
static _Atomic int cuda_up;
static int speaks;

void tp_preload_fail(const char *why)
{
	if (tp_preload_clear_active())
		tp_error("%s; recording is disabled for the rest of this process", why);
	tp_control_disable();
}

/* ---- CUDA's start and end ---------------------------------------------- */

static void sync_at_exit(void)
{
	/* Bounded: one pass converts what the rings hold, a few ms. */
	if (tp_preload_active())
		tp_flush_sync(2000);
}

void tp_preload_on_cuinit(int result)
{
	static _Atomic int registered;
	if (result == 0)
		atomic_store_explicit(&cuda_up, 1, memory_order_relaxed);
	if (result == 0 && tp_preload_active() &&
	    !atomic_exchange_explicit(&registered, 1, memory_order_relaxed))
		atexit(sync_at_exit);
	tp_cupti_on_cuinit(result);
}

/* ---- SIGINT / SIGTERM -------------------------------------------------- */

static struct sigaction old_int, old_term;
/* The first of SIGINT/SIGTERM to arrive (0: none yet).  Its fate stands: a
 * second one during the save must not change how the process ends. */
static _Atomic int first_fatal;

static int ends_process(const struct sigaction *old)
{
	return (old->sa_flags & SA_SIGINFO) ? !old->sa_sigaction : old->sa_handler == SIG_DFL;
}

static void on_fatal_signal(int sig, siginfo_t *info, void *uctx)
{
	int saved = errno;
	struct sigaction *old = sig == SIGINT ? &old_int : &old_term;
	int first = 0;
	if (!atomic_compare_exchange_strong_explicit(&first_fatal, &first, sig,
						     memory_order_relaxed, memory_order_relaxed) &&
	    first != sig && ends_process(first == SIGINT ? &old_int : &old_term)) {
		/* The other signal came first (on another thread: both are
		 * blocked while this handler runs) and will end the process
		 * once its save is done: this one must not end it first, with
		 * its own status. */
		for (;;)
			pause();
	}
	if (tp_preload_active())
		tp_flush_finish_from_signal(10000);
	tp_preload_set_active(0);
	/* Hand the signal to whoever had it before us. */
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction) {
			old->sa_sigaction(sig, info, uctx);
			errno = saved;
			return;
		}
	} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		errno = saved;
		return;
	}
	/* The default action: restore it, re-raise, and unblock this signal
	 * alone, so that it is delivered here and now.  Returning instead
	 * would let a pending SIGINT (a lower number, delivered first) end the
	 * process after a SIGTERM. */
	sigaction(sig, old, NULL);
	raise(sig);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	errno = saved;
}

static void install_signal(int sig, struct sigaction *old)
{
	struct sigaction cur;
	if (sigaction(sig, NULL, &cur) < 0)
		return;
	/* An ignored signal stays ignored: we must not make it fatal. */
	if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* Both blocked while either is handled: a second signal waits until
	 * the first has decided the process's fate. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	*old = cur;
	sigaction(sig, &sa, NULL);
}

/* ---- a process that signals itself -------------------------------------- */

/* Whether the default action of SIG ends the process (as opposed to
 * ignoring it or stopping the process). */
static int default_ends(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return 0;
	}
	return sig > 0 && sig < NSIG;
}

/* Whether kill(PID, SIG) from this thread ends this process at once: a
 * signal to ourselves (or our group) whose disposition is the default, a
 * fatal one, and that this thread does not block (SIGKILL always).  Not
 * certain in every case (another thread could change the disposition
 * between this test and the signal), and so it errs one way only: where it
 * answers 1 the process was about to die by the program's own choice. */
static int kill_ends_self(pid_t pid, int sig)
{
	if (pid != 0 && pid != getpid())
		return 0;
	if (sig == SIGKILL)
		return 1;
	if (!default_ends(sig))
		return 0;
	struct sigaction cur;
	if (sigaction(sig, NULL, &cur) < 0 || (cur.sa_flags & SA_SIGINFO) ||
	    cur.sa_handler != SIG_DFL)
		return 0;
	sigset_t mask;
	return pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0 && !sigismember(&mask, sig);
}

/* CPython ends a script whose KeyboardInterrupt nobody caught (Ctrl-C) by
 * finalizing, restoring SIGINT's default action and sending SIGINT to
 * itself with kill(getpid(), SIGINT) (Modules/main.c, exit_sigint), so
 * that its exit status says so.  The exit handlers, ours included, never
 * run.  Here, and only when the signal is about to end the process, the
 * open window is saved whole first (the same save as
 * TRACEPROF_SAVE_ON_SIGNAL's handler: the flush thread writes it, this
 * thread waits; async-signal-safe, as kill() is, for a program that
 * re-sends a signal to itself from its own handler).  Nothing about the
 * program's signals changes: the signal is sent as the program asked, by
 * the same system call as glibc's kill(). */
TP_EXPORT int kill(pid_t pid, int sig);
TP_EXPORT int kill(pid_t pid, int sig)
{
	int saved = errno;
	if (tp_preload_active() && kill_ends_self(pid, sig)) {
		tp_flush_finish_from_signal(10000);
		tp_preload_set_active(0);
	}
	errno = saved;
	return (int)syscall(SYS_kill, pid, sig);
}

/* ---- trigger ----------------------------------------------------------- */

static void on_trigger(int sig)
{
	(void)sig;
	tp_control_trigger(); /* sets a flag only: async-signal-safe */
}

/* ---- fork -------------------------------------------------------------- */

static void atfork_child(void)
{
	/* A forked child (a DataLoader worker, a pool process) shares the
	 * parent's steps and CUDA state but is not the job's process that
	 * explains a missing file: the parent says it, once. */
	speaks = 0;
	if (!tp_preload_active())
		return;
	tp_flush_after_fork_child(cfg.follow_fork);
	if (!cfg.follow_fork)
		tp_preload_set_active(0);
}

/* ---- exec -------------------------------------------------------------- */

/* TRACEPROF_FOLLOW_EXEC=0: children started with exec must not load the
 * library.  Removing it (and any other copy of it: common/preload_env.h's
 * rule) from LD_PRELOAD at start-up does that for every exec of this
 * process, and changes nothing else (the library is already loaded here). */
static void strip_from_ld_preload(void)
{
	const char *pre = getenv("LD_PRELOAD");
	if (!pre)
		return;
	const char *base = tp_dl_self_base();
	/* The result is never longer than the list (common/preload_env.h). */
	size_t size = strlen(pre) + 1;
	char *out = malloc(size);
	ssize_t n = out ? tp_preload_env_filter(pre, base, 0, out, size) : -1;
	if (n < 0)
		tp_log(TP_LOG_WARN, "TRACEPROF_FOLLOW_EXEC=0: out of memory editing LD_PRELOAD; "
				    "programs this one starts may be traced");
	else if (n > 0)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
	free(out);
}

__attribute__((constructor)) static void tp_preload_init(void)
{
	if (initialised++)
		return;
	int saved = errno;
	/* Found now, while one thread runs: later reads (NVTX's loader
	 * window, a spawn's LD_PRELOAD) only read it. */
	tp_dl_self_path();
	tp_preload_set_config(&cfg);
	if (tp_config_load(&cfg) < 0 || !cfg.enable)
		goto out;
	/* One recording copy per process (issue 30, item 7): the first in
	 * load order; this one forwards each call to the next definition. */
	char first[4096];
	if (!tp_copies_first(first, sizeof(first))) {
		tp_warn("another copy of traceprof (%s) is loaded before this one (%s) and records; "
			"this copy passes calls through", first, tp_dl_self_path());
		/* The recording copy takes its own name out; this one's may
		 * differ, and a child would then record. */
		if (!cfg.follow_exec)
			strip_from_ld_preload();
		goto out;
	}
	/* Before any NVTX call can read it: NVTX users report to us. */
	if (tp_nvtx_setenv())
		tp_dl_open_warm();
	tp_hook_native_stack = cfg.with_stack;
	/* TRACEPROF_PYTHON_STACK takes the same (cold) stack path; without
	 * native frames the depth only has to be non-zero. */
	if (cfg.python_stack && tp_pystack_init() == 0 && !cfg.with_stack)
		tp_hook_stack_depth = 1;
	if (cfg.with_stack)
		tp_hook_stack_depth = (int)cfg.stack_depth;
	tp_cuda_calls_configure(cfg.cuda_calls == TP_CUDA_CALLS_ALL);
	if (!cfg.follow_exec)
		strip_from_ld_preload();
	char err[400];
	struct tp_template_vars vars;
	if (tp_launcher_vars(&vars, cfg.run_name, err, sizeof(err)) < 0) {
		tp_error("%s; profiling is disabled for this process", err);
		goto out;
	}
	tp_launcher_run_id(&vars, cfg.run_id);
	/* torchrun's agent (composer, accelerate launch) starts the workers,
	 * which load the library and record the job; its own few CUDA calls
	 * are none of the job's, and a file of them would be named rank 0
	 * beside the real rank 0 (issue 42 item 1). */
	if (vars.is_agent) {
		tp_info("this process is the launcher (%s); it records nothing, its workers do",
			vars.run_name);
		goto out;
	}
	if (tp_template_check(cfg.folder, err, sizeof(err)) < 0) {
		tp_error("TRACEPROF_FOLDER: '%s': %s; profiling is disabled for this process",
			 cfg.folder, err);
		goto out;
	}
	if (tp_template_check(cfg.filename, err, sizeof(err)) < 0) {
		tp_error("TRACEPROF_FILENAME: '%s': %s; profiling is disabled for this process",
			 cfg.filename, err);
		goto out;
	}
	if (cfg.live && tp_template_check(cfg.live_dir, err, sizeof(err)) < 0) {
		tp_error("TRACEPROF_LIVE_DIR: '%s': %s; profiling is disabled for this process",
			 cfg.live_dir, err);
		goto out;
	}
	/* Before tp_control_init(), which starts the state with these reasons. */
	if (tp_clock_init(cfg.clock) != TP_CLOCK_TSC)
		tp_control_set_full(TP_FULL_CLOCK, 1);
	if (tp_hook_stack_depth)
		tp_control_set_full(TP_FULL_STACK, 1);
	tp_threads_configure(cfg.buffer_events);
	tp_control_init(&cfg.schedule);
	if (cfg.trigger_signal) {
		uint64_t warmup = 0, act = 1;
		if (cfg.trigger_steps) {
			act = cfg.trigger_steps;
		} else if (cfg.schedule.enabled) {
			warmup = cfg.schedule.warmup;
			act = cfg.schedule.active;
		}
		tp_control_set_trigger(warmup, act);
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_trigger;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(cfg.trigger_signal, &sa, NULL);
	}
	speaks = vars.local_rank == 0;
	tp_sources_start(&cfg, &vars);
	/* Opt-in only: a handler installed at load is the program's business.
	 * CPython installs its KeyboardInterrupt handler only over a default
	 * SIGINT and reports a foreign handler as None, which multiprocessing's
	 * forkserver cannot copy into its workers (issue 30 items 1-2).  By
	 * default a process killed by a signal it does not handle loses its open
	 * window; one that handles it and exits saves at exit. */
	if (cfg.save_on_signal) {
		install_signal(SIGINT, &old_int);
		install_signal(SIGTERM, &old_term);
	}
	pthread_atfork(NULL, NULL, atfork_child);
	tp_preload_set_active(1);
	tp_debug("recording to %s/%s", cfg.folder, cfg.filename);
out:
	errno = saved;
}

/* A schedule that saved nothing: one line saying why, with the fix (issue 42
 * item 2), in a process that did the job's work (it stepped or started
 * CUDA: not a shell, shim or DataLoader worker) and is its node's first.
 * steps: the step count before the exit's save. */
static void say_why_no_file(uint64_t steps)
{
	const struct tp_schedule *sc = &cfg.schedule;
	if (!sc->enabled || cfg.trigger_signal || cfg.capture || !speaks ||
	    tp_flush_files_saved() || (!steps && !atomic_load_explicit(&cuda_up, memory_order_relaxed)))
		return;
	uint64_t opens = sc->skip_first + sc->wait + sc->warmup;
	int source = cfg.step_source != TP_STEP_API || cfg.step_arg[0];
	if (!steps && !source)
		tp_warn("no trace file: no step was seen, and the schedule (TRACEPROF_SCHEDULE=%s) "
			"counts steps; for PyTorch, add `--step torch` (TRACEPROF_STEP=torch); "
			"otherwise call traceprof_step() each iteration, or use --step "
			"nvtx:NAME, call:FUNCTION or time:MS",
			cfg.schedule_text);
	else if (!steps)
		tp_warn("no trace file: the program exited before its first step (TRACEPROF_STEP "
			"saw none); the schedule (TRACEPROF_SCHEDULE=%s) records from step %llu",
			cfg.schedule_text, (unsigned long long)opens);
	else if (steps < opens)
		tp_warn("no trace file: the program exited after %llu step%s, before the "
			"schedule's window opened at step %llu (TRACEPROF_SCHEDULE=%s); lower "
			"skip_first, wait or warmup, or run more steps",
			(unsigned long long)steps, steps == 1 ? "" : "s", (unsigned long long)opens,
			cfg.schedule_text);
}

__attribute__((destructor)) static void tp_preload_fini(void)
{
	int saved = errno;
	if (tp_preload_clear_active()) {
		uint64_t steps = tp_control_current_step();
		tp_flush_finish();
		say_why_no_file(steps);
	}
	errno = saved;
}
