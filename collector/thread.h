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

#include "collector/live_pub.h"
#include "collector/ring.h"

/* 1: the x86-64 assembly wrappers test "tp_self <= 1" for NULL or gone
 * (scripts/gen-cuda-wrappers), as tp_emit_self() does in C. */
#define TP_THREAD_GONE ((struct tp_thread *)1)

struct tp_fthread;

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
	/* Written by the thread once, before tp_thread_create_self()'s push
	 * publishes the state (the OS name now, while the thread is alive: a short-lived thread may be
	 * gone before the flush thread could read /proc); flush thread only from
	 * then on (its refresh from /proc, nvtxNameOsThread's name). */
	uint64_t serial;	/* registration order, for sort indices */
	char name[64];		/* OS thread name */
	int named_by_user;	/* name came from nvtxNameOsThread: keep it */
	/* Flush thread only (or the exiting thread once the flush thread has
	 * stopped): its own state of this thread (collector/fthread.h), made on
	 * the thread's first drain.  The program's thread never reads it, so the
	 * hooks see only the fields above. */
	struct tp_fthread *fl;
	/* Where the thread is right now (collector/live_pub.h): written by
	 * the owner with atomics, read by the flush thread for the live file. */
	struct tp_live_pub live;
};

/* The calling thread's state: NULL before its first event, TP_THREAD_GONE
 * after it exited.  Initial-exec TLS of one pointer keeps the hot-path load a
 * single %fs-relative instruction. */
extern __thread struct tp_thread *tp_self __attribute__((tls_model("initial-exec")));

/* tp_self's offset from the thread pointer, on the hot globals' line
 * (tp_hot_tpoff(), collector/hot_data.h), and tp_self read through it: for
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

/* PyTorch operators not recorded because they nested deeper on their
 * thread than the op stack holds (preload/torch_ops.c;
 * events_lost_op_depth).  Written into every trace. */
extern _Atomic uint64_t tp_ops_lost_deep;

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
 * (their small state stays while the flush side needs it), makes more of
 * the live rings resident ahead of their producers (tp_ring_prefault()),
 * and unlinks and frees dead, drained states the flush side no longer needs
 * (never the head).  `in_use(t, ctx)` says whether the flush side still
 * needs t (records of it not yet converted, a window it wrote into);
 * `forget(t, ctx)` runs just before t is freed, for the flush side to free
 * its own state of t. */
void tp_threads_reap(int (*in_use)(struct tp_thread *t, void *ctx),
		     void (*forget)(struct tp_thread *t, void *ctx), void *ctx);

/* After fork, in the child: forget every inherited state (the parent's
 * threads do not exist here) except the calling thread's, which gets a fresh,
 * empty ring. */
void tp_threads_after_fork_child(void);

#endif
