/* CUPTI activity tracing: the GPU timeline's capture side (preload/cupti.c
 * and the files preload/cupti_internal.h lists), as the CUDA wrappers see it.
 *
 * CUPTI is loaded with dlopen only after the program's first successful
 * cuInit, so that a process without a GPU or without CUPTI never pays for
 * it.  Its buffers are handed to the collector's queue and decoded on the
 * flush thread (collector/cupti_queue.c, cupti_decode.c).  Any error
 * leaves traceprof in host-only mode with one warning.  TRACEPROF_CUPTI:
 * auto (default), on (load at the first cuInit whatever it returned, and
 * report a failure as an error), off (never load). */
#ifndef TP_PRELOAD_CUPTI_H
#define TP_PRELOAD_CUPTI_H

#include <stdatomic.h>
#include <stdint.h>

#include "collector/gpu.h"
#include "collector/hot.h"

/* The CUDA module calls this after the real cuInit returned `result` (every
 * call; only the first successful one does anything).  It sets CUPTI up on
 * the calling thread, since activity kinds must be enabled before the
 * program's first kernels; it calls no CUDA function itself. */
void tp_cupti_on_cuinit(int result);

/* Non-zero while CUPTI records: launches push their external correlation
 * id.  Relaxed: a wrapper that misses the switch only misses one flow. */
extern _Atomic int tp_cupti_corr_on;

int tp_cupti_push_slow(uint64_t ext);
void tp_cupti_pop_slow(void);

/* Around the real call of a launch or copy whose span is open (after
 * tp_span_begin() returned TP_SPAN_FULL, the only form CUPTI uses):
 *
 *   int pushed = tp_cupti_push_span(&sp);
 *   ret = real(...);
 *   tp_cupti_pop(pushed);
 *
 * Costs one relaxed load when CUPTI is off. */
static inline int tp_cupti_push(uint64_t ext)
{
	if (__builtin_expect(atomic_load_explicit(&tp_cupti_corr_on, memory_order_relaxed), 0))
		return tp_cupti_push_slow(ext);
	return 0;
}

static inline int tp_cupti_push_span(const struct tp_span *sp)
{
	if (__builtin_expect(atomic_load_explicit(&tp_cupti_corr_on, memory_order_relaxed), 0))
		return tp_cupti_push_slow(tp_gpu_ext_id(sp->t->tid, sp->start));
	return 0;
}

static inline void tp_cupti_pop(int pushed)
{
	if (__builtin_expect(pushed, 0))
		tp_cupti_pop_slow();
}

#endif
