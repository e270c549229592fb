/* Per-thread recording state and the registry the flush thread walks.
 *
 * A thread gets its state lazily, on its first recorded event (the only
 * allocation on the producer side: one mmap for the ring, 64 KiB of it
 * resident at first).  The state is
 * pushed onto a lock-free list; only the flush thread unlinks entries, and
 * only entries that are not the list head, so a push never races an unlink.
 * When the thread exits, a pthread key destructor marks the state dead and
 * points the thread's TLS at TP_THREAD_GONE, so an event from a later TLS
 * destructor is counted, never written into freed memory. */
#ifndef TP_COLLECTOR_THREAD_H
#define TP_COLLECTOR_THREAD_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/ring.h"
#include "collector/store.h"
#include "collector/window.h"

/* 1: the x86-64 assembly wrappers test "tp_self <= 1" for NULL or gone
 * (scripts/gen-cuda-wrappers), as tp_emit_self() does in C. */
#define TP_THREAD_GONE ((struct tp_thread *)1)
/* Each thread keeps one small counter per window slot
 * (TP_MAX_OPEN_WINDOWS, collector/window.h). */

/* Flush-thread-only bookkeeping of one thread in one window. */
struct tp_thread_wstat {
	uint64_t window_id; /* 0: unused */
	uint64_t written;
};

struct tp_thread {
	struct tp_ring ring; /* its producer line holds the `writing` flag */
	/* Owner thread only: set while preload/stack.c unwinds this thread's
	 * stack.  A signal handler that records while it is set skips its own
	 * capture (counted in tp_stacks_skipped): an unwind from a handler that
	 * interrupted libunwind starts in frames libunwind cannot cache and
	 * takes its slow path, tens of microseconds of system calls. */
	uint32_t capturing;
	/* Owner thread only: no stack capture before this tp_clock_now() time,
	 * set after a capture made in a signal handler (preload/stack.c). */
	uint64_t capture_pause_until;
	pid_t tid;
	/* The low 32 bits of pthread_self(): the thread id CUPTI's API records
	 * carry (collector/gpu_corr.c maps them back to tid).  Set at creation. */
	uint32_t cupti_thread;
	/* Set (release) by the key destructor when the thread exits; read
	 * (acquire) by the flush thread, which then drains and frees the state. */
	_Atomic int dead;
	struct tp_thread *next; /* registry link, see tp_threads_push() */
	/* Flush thread only. */
	struct tp_store_queue stored; /* records moved out of the ring, not yet converted */
	uint64_t serial;	   /* registration order, for sort indices */
	uint64_t drops_attributed; /* drops already written into a trace */
	uint64_t drops_window;	   /* of those, the ones of the window being saved */
	uint64_t intr_attributed;  /* as drops_*, for ring.dropped_interrupted */
	uint64_t intr_window;
	uint64_t filtered;	   /* records outside any window (WARMUP, boundary) */
	uint64_t late;		   /* records for a window already saved */
	char name[64];		   /* OS thread name, read by the flush thread */
	int named_by_user;	   /* name came from nvtxNameOsThread: keep it */
	struct tp_marker_stack *markers; /* open traceprof_marker_start()s */
	struct tp_thread_wstat ws[TP_MAX_OPEN_WINDOWS];
};

/* The calling thread's state: NULL before its first event, TP_THREAD_GONE
 * after it exited.  Initial-exec TLS of one pointer keeps the hot-path load a
 * single %fs-relative instruction. */
extern __thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));

/* tp_self's offset from the thread pointer, on the hot globals' line
 * (tp_hot_tpoff(), collector/control.h), and tp_self read through it: for
 * the x86-64 short path only (the assembly wrappers and tp_short_
 * functions), which runs after the constructor has set it. */
extern intptr_t tp_self_tpoff;
static inline __attribute__((always_inline)) struct tp_thread *tp_self_hot(void)
{
#if defined(__x86_64__)
	struct tp_thread *t;
	__asm__ volatile("movq %%fs:(%1), %0" : "=r"(t) : "r"(tp_self_tpoff));
	return t;
#else
	return tp_self;
#endif
}

/* Records lost because the thread had already exited (TLS destructors) or its
 * ring could not be allocated.  Written into every trace. */
extern _Atomic uint64_t tp_threads_lost;
/* Events of threads that found no room for a ring under the program's own
 * RLIMIT_AS (events_lost_no_memory).  Written into every trace. */
extern _Atomic uint64_t tp_threads_lost_as;

/* Ring size for threads created from now on (TRACEPROF_BUFFER_EVENTS). */
void tp_threads_configure(uint64_t ring_slots);

/* fn runs on each thread's first record, once its ring exists (after the
 * record's state is set up, before the record is written): the flush
 * thread's lazy start (tp_flush_need()).  NULL: nothing. */
void tp_threads_set_first_use(void (*fn)(void));

/* Slow path of the hook: creates the calling thread's state.  Returns NULL
 * (and counts the event as lost) when the thread is gone or out of memory.
 * Preserves errno. */
struct tp_thread *tp_thread_create_self(void);

/* The registry head; walk with ->next (acquire on the head, see thread.c). */
struct tp_thread *tp_threads_first(void);

/* Flush thread: the OS thread id of the thread whose CUPTI thread id (the low
 * 32 bits of its pthread_self()) is cupti_thread, or -1 when no registered
 * thread has it. */
int64_t tp_threads_tid_of_cupti(uint32_t cupti_thread);

/* Flush thread, after each drain: unmaps the rings of dead, drained states
 * (their small state stays while a window needs it), makes more of the live
 * rings resident ahead of their producers (tp_ring_prefault()), and unlinks
 * and frees dead, drained states no open window uses (never the head).
 * `in_use(t, ctx)` says whether a window still needs t. */
void tp_threads_reap(int (*in_use)(struct tp_thread *t, void *ctx), void *ctx);

/* After fork, in the child: forget every inherited state (the parent's
 * threads do not exist here) except the calling thread's, which gets a fresh,
 * empty ring. */
void tp_threads_after_fork_child(void);

#endif
