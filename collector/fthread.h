/* The flush thread's own state of one program thread.  collector/thread.h
 * keeps what the program's thread writes (its ring, its hook-side flags);
 * this is what only the flush thread reads and writes about that thread:
 * records moved out of the ring, per-window counters, drop attribution,
 * open markers.  It hangs from the thread's `fl` slot, which only the flush
 * thread touches (or the exiting thread once the flush thread has stopped),
 * so no field here needs an atomic.  Made on the thread's first drain,
 * freed when the registry forgets the thread (tp_threads_reap()). */
#ifndef TP_COLLECTOR_FTHREAD_H
#define TP_COLLECTOR_FTHREAD_H

#include <stdint.h>

#include "collector/store.h"
#include "collector/window.h"

struct tp_thread;
struct tp_marker_stack;

/* One thread's bookkeeping in one window slot (TP_MAX_OPEN_WINDOWS,
 * collector/window.h). */
struct tp_fthread_wstat {
	uint64_t window_id; /* 0: unused */
	uint64_t written;
};

struct tp_fthread {
	struct tp_store_queue stored; /* records moved out of the ring, not yet converted */
	uint64_t drops_attributed;    /* drops already written into a trace */
	uint64_t drops_window;	      /* of those, the ones of the window being saved */
	uint64_t intr_attributed;     /* as drops_*, for ring.dropped_interrupted */
	uint64_t intr_window;
	uint64_t filtered;		 /* records outside any window (WARMUP, boundary) */
	uint64_t late;			 /* records for a window already saved */
	struct tp_marker_stack *markers; /* open traceprof_marker_start()s */
	/* The forward PyTorch op whose arrow to its autograd node is not drawn
	 * yet (collector/torch_ops_decode.c): its sequence number, start
	 * (ns), RecordFunction thread id; pend_on when there is one.
	 * op_seq_next: one more than the highest number drawn (0: none). */
	int64_t op_seq_next, pend_seq;
	uint64_t pend_ns;
	uint32_t pend_rf_tid;
	int pend_on;
	/* The last autograd node's sequence number, forward thread and start
	 * (ns): its evaluate_function range, which ends next, takes them. */
	int64_t node_seq;
	uint64_t node_ns;
	uint32_t node_rf_tid;
	struct tp_fthread_wstat ws[TP_MAX_OPEN_WINDOWS];
};

/* t's flush-side state, made (zeroed) on the first call.  NULL when it
 * cannot be allocated: the caller leaves t's records in its ring (a full
 * ring drops, counted) and tries again on a later pass. */
struct tp_fthread *tp_fthread_get(struct tp_thread *t);

/* Frees t's flush-side state (the registry is about to free t). */
void tp_fthread_forget(struct tp_thread *t);

/* Whether t wrote into the window of id `window_id` (its counter in the
 * window's slot is that window's). */
static inline int tp_fthread_in_window(const struct tp_fthread *f, uint64_t window_id)
{
	return f && f->ws[window_id % TP_MAX_OPEN_WINDOWS].window_id == window_id;
}

#endif
