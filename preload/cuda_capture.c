/* Stream capture: traceprof makes no CUDA call of its own while one is open.
 *
 * In global capture mode (cudaStreamCaptureModeGlobal, PyTorch's default) a
 * potentially unsafe call from any thread of the process invalidates every
 * open capture, and which calls count as unsafe is the driver's business.
 * traceprof's only calls of its own are the kernel-name look-ups of the flush
 * thread (cuFuncGetName, cuKernelGetName), so those are made only while no
 * capture is open.  A launch whose name has to be asked while a capture is
 * open keeps its address and no name (the same kernel launched again later
 * gets its name then).
 *
 * The wrappers of the capture calls count open captures; the flush thread
 * announces a look-up before making it.  Both sides store, then load the
 * other's variable (sequentially consistent), so either the look-up sees the
 * capture and is skipped, or the capture's begin sees the look-up and waits
 * for that one driver call to return before the capture starts. */
#include <stdatomic.h>
#include <unistd.h>

#include "preload/cuda_pack.h"

/* Captures begun and not ended (seq_cst: pairs with `naming` below). */
static _Atomic int open_captures;
/* traceprof's own driver calls in progress (seq_cst: pairs with
 * open_captures), and the process that makes them: a child forked during a
 * look-up inherits the count but not the thread, and must not wait for it. */
static _Atomic int naming;
static _Atomic pid_t naming_pid;

/* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and cudaErrorStreamCaptureInvalidated:
 * the capture has ended all the same. */
#define CAPTURE_INVALIDATED 901

void tp_cuda_capture_begin(void)
{
	atomic_fetch_add_explicit(&open_captures, 1, memory_order_seq_cst);
	/* At most one cuFuncGetName in flight: a short wait, capture begins only
	 * (getpid() is a system call, not on any hot path). */
	pid_t me = getpid();
	while (atomic_load_explicit(&naming, memory_order_seq_cst) &&
	       atomic_load_explicit(&naming_pid, memory_order_relaxed) == me)
		__asm__ __volatile__("" ::: "memory");
}

static void capture_close(void)
{
	int n = atomic_load_explicit(&open_captures, memory_order_relaxed);
	while (n > 0 && !atomic_compare_exchange_weak_explicit(&open_captures, &n, n - 1,
							       memory_order_seq_cst,
							       memory_order_relaxed))
		;
}

void tp_cuda_capture_began(int result)
{
	if (result != 0)
		capture_close();
}

void tp_cuda_capture_ended(int result)
{
	if (result == 0 || result == CAPTURE_INVALIDATED)
		capture_close();
}

int tp_cuda_naming_enter(void)
{
	/* Relaxed: published by the seq_cst (release) increment below, which
	 * the capture's begin reads before it reads the pid. */
	atomic_store_explicit(&naming_pid, getpid(), memory_order_relaxed);
	atomic_fetch_add_explicit(&naming, 1, memory_order_seq_cst);
	if (!atomic_load_explicit(&open_captures, memory_order_seq_cst))
		return 1;
	atomic_fetch_sub_explicit(&naming, 1, memory_order_release);
	return 0;
}

void tp_cuda_naming_leave(void)
{
	/* Release: the capture's begin, spinning above, starts after the
	 * driver call has returned. */
	atomic_fetch_sub_explicit(&naming, 1, memory_order_release);
}
