/* NVTX's start-up with traceprof as its injection library: the
 * NVTX_INJECTION64_PATH it reads (tp_nvtx_setenv), and the few us in which
 * NVTX dlopens this library and calls InitializeInjectionNvtx2 (preload/
 * nvtx.c), during which the thread's asynchronous signals are held back
 * (below says why).  The dlopen and dlsym hooks call in here first. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "preload/resolve/dl_hooks.h"
#include "preload/resolve/nvtx_loader.h"

/* NVTX's one-time start-up (nvtxInitOnce in nvtx3/nvtxDetail/nvtxInit.h)
 * moves the image's state from FRESH to STARTED, reads
 * NVTX_INJECTION64_PATH, dlopens it, dlsyms InitializeInjectionNvtx2, calls
 * it, sets the pointers we did not fill to no-ops and only then marks the
 * state COMPLETE.  Any NVTX call that finds the state STARTED spins until it
 * is COMPLETE: a signal handler that calls NVTX on the thread inside the
 * start-up spins for ever, since the start-up cannot go on below it.
 * Nothing a tool does removes that (the spin is in the program's own copy
 * of the header, and the same window exists with no tool at all); what it
 * can do is make the window as short as NVTX's own:
 *   - the dlopen of this library, already loaded, skips traceprof's dlopen
 *     work (tp_dl_open_plan: nothing new can appear), so the start-up costs
 *     a few us instead of the ~60 us of the first scan of the loaded
 *     objects;
 *   - from that dlopen to the moment InitializeInjectionNvtx2 has filled
 *     the image's table, the thread's asynchronous signals are held back
 *     (blocked, and delivered when the mask is restored, a few us later);
 *     once the table is filled, a handler's NVTX call goes straight to the
 *     callbacks and never reaches the spin.
 * The window left is NVTX's own: from its state change to its getenv and
 * the dlopen, and after our return until COMPLETE for a function we do not
 * fill (test/integration/nvtx_signal.sh measures both, with and without
 * traceprof).
 *
 * NVTX passes getenv()'s own pointer to dlopen, with RTLD_LAZY: that is how
 * its dlopen is told from a program's dlopen of this library, which holds
 * nothing back (the pointer is read once, after tp_nvtx_setenv() sets the
 * variable, so that the few instructions before the hold do no search).
 * The mask is restored when InitializeInjectionNvtx2 returns, or at the
 * thread's next dlsym of another name or dlopen (a loader that gives up
 * between the two).  Synchronous signals (a fault) are never held: blocked,
 * the kernel would kill the process instead.  The saved mask (128 bytes) is
 * in ordinary TLS, not initial-exec: it is touched only here, and a copy of
 * traceprof that a program dlopens draws initial-exec TLS from a small
 * shared reserve. */
static __thread struct {
	int held;
	sigset_t old;
} nvtx_loader;

void tp_nvtx_loader_release(void)
{
	if (!nvtx_loader.held)
		return;
	nvtx_loader.held = 0;
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &nvtx_loader.old, NULL);
	errno = saved;
}

/* Set once by the constructor (loader_warm()), before any NVTX call can
 * read them: the value getenv gives for NVTX_INJECTION64_PATH, which NVTX
 * passes to dlopen as it is (a program that sets the variable again makes
 * another pointer, and then nothing is held), and the signals to hold. */
static const char *loader_env;
static sigset_t loader_mask;

int tp_nvtx_loader_open(const char *file, int mode)
{
	int saved = errno;
	int nvtx = file && file == loader_env && mode == RTLD_LAZY;
	sigset_t old;
	/* NVTX's dlopen: hold first, check after, since every instruction
	 * before the hold is in the window. */
	int blocked = nvtx && !nvtx_loader.held &&
		      pthread_sigmask(SIG_BLOCK, &loader_mask, &old) == 0;
	const char *me = tp_dl_self_path();
	int self = file && me[0] && !(mode & RTLD_GLOBAL) && !strcmp(file, me);
	if (blocked && self) {
		nvtx_loader.old = old;
		nvtx_loader.held = 1;
	} else if (blocked) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	} else if (!(nvtx && self)) {
		tp_nvtx_loader_release(); /* a loader that gave up after its dlopen */
	}
	errno = saved;
	return self;
}

/* What NVTX's start-up runs before the signals are held is made ready now,
 * so that none of it waits inside the start-up: the real dlopen's address,
 * this library's lazily bound calls to libc, and the code pages on the way
 * (a page's first touch is a fault, and a fault's return is where a pending
 * signal is delivered). */
/* A first read of a code page, left out of TSan's instrumentation: under a
 * small RLIMIT_FSIZE TSan's shadow of another library's code faults (SIGBUS
 * in __tsan_read1, seen in cli_run_signals and rel_matrix under check-tsan). */
__attribute__((no_sanitize("thread")))
static void loader_touch(const void *code)
{
	(void)*(const volatile char *)code;
}

static void loader_warm(void)
{
	sigfillset(&loader_mask);
	static const int sync_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };
	for (size_t i = 0; i < sizeof(sync_signals) / sizeof(sync_signals[0]); i++)
		sigdelset(&loader_mask, sync_signals[i]);
	/* dl_open.c's part (the real dlopen, the dlopen hook's code) is warmed
	 * by its tp_dl_open_warm(), which init.c calls right after: this file
	 * is below dl_open.c and calls nothing of it. */
	(void)tp_nvtx_loader_open(NULL, 0);
	sigset_t now;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	const void *code[] = { (const void *)(uintptr_t)tp_nvtx_loader_open,
			       (const void *)(uintptr_t)tp_dl_self_path };
	for (size_t i = 0; i < sizeof(code) / sizeof(code[0]); i++)
		loader_touch(code[i]);
	loader_env = getenv("NVTX_INJECTION64_PATH");
}

void tp_nvtx_loader_sym(const char *name)
{
	if (nvtx_loader.held && (!name || strcmp(name, "InitializeInjectionNvtx2")))
		tp_nvtx_loader_release();
}


int tp_nvtx_setenv(void)
{
	const char *self = tp_dl_self_path();
	if (!self || !self[0])
		return 0;
	const char *cur = getenv("NVTX_INJECTION64_PATH");
	/* The user's own injection library (nsys, a custom tool) wins; this
	 * library named already (inherited from a traced parent) is ours. */
	if (cur && strcmp(cur, self))
		return 0;
	if (!cur)
		setenv("NVTX_INJECTION64_PATH", self, 0);
	loader_warm();
	return 1;
}
