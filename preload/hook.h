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
 * 64-byte ring write, filled in place.  errno is never touched (the stack
 * capture of TRACEPROF_WITH_STACK saves and restores it itself).
 *
 * The cheapest wrapper shape when nothing has to run after the real call
 * while not recording (measured in bench/RESULTS.md: 1.0 ns instead of 3.6
 * added per idle call): test with tp_span_idle() first and tail-call the real
 * function, so that the not-recording path saves no register and no errno.
 * Checks that must run on every call (step counting by API call) join the
 * test:
 *
 *   if (__builtin_expect(real && tp_span_idle() && id != tp_steps_call_id, 1))
 *           return real_fn(args...);          // a jmp
 *   return recording_fn(args...);             // noinline, the form above
 *
 * Everything here is always_inline: the wrappers live in one very large
 * generated file, where GCC's unit-growth limits otherwise leave these small
 * functions out of line. */
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

/* Non-zero when the current step does not record: one relaxed load of
 * tp_state (see collector/control.h for why no ordering is needed). */
static inline __attribute__((always_inline)) int tp_span_idle(void)
{
	return !(atomic_load_explicit(&tp_state, memory_order_relaxed) & TP_STATE_RECORDING);
}

static inline __attribute__((always_inline)) int tp_span_begin(struct tp_span *sp)
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

/* The end of a span with TRACEPROF_WITH_STACK: the record goes through the
 * stack capture.  Out of line and cold, so that it stays out of the
 * wrappers' hot path. */
static __attribute__((noinline, cold, unused)) void tp_span_end_api_stack(struct tp_span *sp, uint64_t end,
								 uint32_t id, int32_t result,
								 uint64_t a0, uint64_t a1,
								 uint64_t a2, uint64_t a3)
{
	struct tp_record r;
	r.start = sp->start;
	r.end = end;
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
	tp_hook_emit_with_stack(sp->t, &r, NULL, 0);
}

static inline __attribute__((always_inline)) void
tp_span_end_api(struct tp_span *sp, uint32_t id, int32_t result, uint64_t a0, uint64_t a1,
		uint64_t a2, uint64_t a3)
{
	uint64_t end = tp_clock_now();
	if (__builtin_expect(tp_hook_stack_depth != 0, 0)) {
		tp_span_end_api_stack(sp, end, id, result, a0, a1, a2, a3);
		return;
	}
	/* Written field by field into the slot: no copy through the stack. */
	struct tp_thread *t = sp->t;
	uint64_t h;
	struct tp_record *r = tp_emit_reserve1(t, &h);
	if (__builtin_expect(!r, 0))
		return;
	r->start = sp->start;
	r->end = end;
	r->step = sp->step;
	r->kind = TP_REC_API;
	r->nextra = 0;
	r->flags = 0;
	r->id = id;
	r->result = result;
	r->arg[0] = a0;
	r->arg[1] = a1;
	r->arg[2] = a2;
	r->arg[3] = a3;
	tp_emit_commit1(t, h);
}

#endif
