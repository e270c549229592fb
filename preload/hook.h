/* The hot path of an intercepted call: a span opened before the real call and
 * closed after it.
 *
 *   struct tp_span sp;
 *   int on = tp_span_begin(&sp);
 *   ret = real_fn(args...);
 *   if (on) tp_span_end_api(&sp, id, (int32_t)ret, a0, a1, a2, a3);
 *
 * While the schedule is not recording, tp_span_begin() is one relaxed load
 * and one compare.  While recording, a call costs two clock reads and one
 * 64-byte ring write.  errno is never touched. */
#ifndef TP_PRELOAD_HOOK_H
#define TP_PRELOAD_HOOK_H

#include "collector/emit.h"

struct tp_span {
	uint64_t start;
	uint32_t step;
	struct tp_thread *t;
};

/* Non-zero when TRACEPROF_WITH_STACK asks for call stacks (set once at start). */
extern int tp_hook_stack_depth;

/* Captures the caller's stack into extras and emits (preload/stack.c). */
void tp_hook_emit_with_stack(struct tp_thread *t, struct tp_record *rec, const char *str,
			     size_t len);

static inline int tp_span_begin(struct tp_span *sp)
{
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (__builtin_expect(!(s & TP_STATE_RECORDING), 1))
		return 0;
	struct tp_thread *t = tp_emit_self();
	if (!t)
		return 0;
	sp->t = t;
	sp->step = (uint32_t)(s >> TP_STATE_STEP_SHIFT);
	sp->start = tp_clock_now();
	return 1;
}

static inline void tp_span_end_api(struct tp_span *sp, uint32_t id, int32_t result, uint64_t a0,
				   uint64_t a1, uint64_t a2, uint64_t a3)
{
	struct tp_record r;
	r.end = tp_clock_now();
	r.start = sp->start;
	r.step = sp->step;
	r.kind = TP_REC_API;
	r.nextra = 0;
	r.flags = 0;
	r.id = id;
	r.result = result;
	r.arg[0] = a0;
	r.arg[1] = a1;
	r.arg[2] = a2;
	r.arg[3] = a3;
	if (__builtin_expect(tp_hook_stack_depth != 0, 0))
		tp_hook_emit_with_stack(sp->t, &r, NULL, 0);
	else
		tp_emit(sp->t, &r, NULL, 0);
}

#endif
