/* The hot path of an intercepted call: a span opened before the real call and
 * closed after it.
 *
 *   struct tp_span sp;
 *   int on = tp_span_begin(&sp);
 *   ret = real_fn(args...);
 *   uint64_t end = tp_span_end_time(on);
 *   if (on) tp_span_end_api(&sp, on, end, id, (int32_t)ret, a0, a1, a2, a3);
 *
 * tp_span_begin() returns 0 while the schedule is not recording (one relaxed
 * load and one compare), else the path the span takes:
 *   TP_SPAN_SHORT  the common case: two rdtsc reads and one 64-byte ring
 *                  write filled in place, testing nothing else;
 *   TP_SPAN_FULL   when tp_state's TP_STATE_FULL bit asks for more (another
 *                  clock, call stacks, CUPTI correlation: their flags are
 *                  read only on this path), or on the thread's first event.
 * errno is never touched (the stack capture saves and restores it itself).
 *
 * The cheapest wrapper shape when nothing has to run after the real call
 * while not recording (bench/RESULTS.md): test with tp_span_idle() first and
 * jump to the real function, so that the not-recording path saves no
 * register and no errno; otherwise jump to an out-of-line recording function
 * of the same signature, the form above:
 *
 *   if (__builtin_expect(real && tp_span_idle() && id != tp_steps_call_id, 1))
 *           return real_fn(args...);          // a jmp
 *   return recording_fn(args...);             // a jmp too
 *
 * On x86-64 the generator writes that wrapper in assembly instead
 * (asm_wrapper() in scripts/cudagen/emit.py), which GCC's version of it
 * could not match with by-value struct arguments.  It also makes the short
 * path's tests itself and then jumps to a third function, tp_short_<name>,
 * which opens its span with tp_span_begin_short() and tests nothing.
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

enum { TP_SPAN_OFF = 0, TP_SPAN_SHORT = 1, TP_SPAN_FULL = 2 };

/* Non-zero when TRACEPROF_WITH_STACK or TRACEPROF_PYTHON_STACK asks for
 * call stacks (set once at start): the native depth, or 1 for Python stacks
 * alone. */
extern int tp_hook_stack_depth;

/* Non-zero when TRACEPROF_WITH_STACK asks for native frames (the hook's
 * stack path also runs for TRACEPROF_PYTHON_STACK alone). */
extern int tp_hook_native_stack;
/* TRACEPROF_PYTHON_STACK (preload/pystack.c): set once at start when the
 * option is on and this process runs CPython 3.9+. */
extern int tp_pystack_on;
int tp_pystack_init(void);
/* The calling thread's Python frames, innermost first: from its shadow
 * stack (preload/pystack_profile.c) when it keeps one, else through the
 * frame API when it holds the GIL.  Fills at most max entries
 * (collector/pystack_decode.h) and returns their number; 0 without Python. */
size_t tp_pystack_capture(uint64_t *out, size_t max);

/* Captures the caller's stack into extras and emits (preload/stack.c). */
void tp_hook_emit_with_stack(struct tp_thread *t, struct tp_record *rec, const char *str,
			     size_t len);

/* The full path's begin (preload/span.c): creates the thread's state on its
 * first event and reads the configured clock.  Returns TP_SPAN_FULL, or
 * TP_SPAN_OFF when the thread cannot record. */
int tp_span_begin_full(struct tp_span *sp, uint64_t state);

/* The calling thread's state when it has one (it recorded before), else
 * NULL, never creating it: for the live file's publication of a
 * synchronization made while no window records (LIVE_ALWAYS in
 * scripts/cudagen/specs.py), which allocates nothing and counts nothing. */
static inline __attribute__((always_inline)) struct tp_thread *tp_live_self(void)
{
	struct tp_thread *t = tp_self;
	return (uintptr_t)t > (uintptr_t)TP_THREAD_GONE ? t : NULL;
}

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
		return TP_SPAN_OFF;
	struct tp_thread *t = tp_self;
	if (__builtin_expect((s & TP_STATE_FULL) || (uintptr_t)t <= (uintptr_t)TP_THREAD_GONE, 0))
		return tp_span_begin_full(sp, s);
	sp->t = t;
	sp->step = (uint32_t)(s >> TP_STATE_STEP_SHIFT);
	sp->start = tp_clock_tsc();
	return TP_SPAN_SHORT;
}

/* The short path's begin, for the x86-64 assembly wrappers: they jump to
 * the function calling this only after seeing tp_state's low byte equal to
 * TP_STATE_RECORDING (no TP_STATE_FULL) and this thread's tp_self set up
 * (see asm_wrapper() in scripts/cudagen/emit.py), so it tests nothing.
 * tp_state is read again (relaxed, as in tp_span_begin) for the step: if the
 * schedule moved on in between, the record carries the new step and the
 * flush thread files it by that step (counted as filtered when that step
 * does not record), as for any call that races a step change. */
static inline __attribute__((always_inline)) void tp_span_begin_short(struct tp_span *sp)
{
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	sp->t = tp_self_hot();
	sp->step = (uint32_t)(s >> TP_STATE_STEP_SHIFT);
	sp->start = tp_clock_tsc();
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

/* The span's end time, read right after the real call; 0 when `on` is
 * TP_SPAN_OFF (no clock read). */
static inline __attribute__((always_inline)) uint64_t tp_span_end_time(int on)
{
	if (__builtin_expect(on == TP_SPAN_SHORT, 1))
		return tp_clock_tsc();
	return on ? tp_clock_now() : 0;
}

/* `on` is what tp_span_begin() returned (not TP_SPAN_OFF), `end` what
 * tp_span_end_time() returned. */
static inline __attribute__((always_inline)) void
tp_span_end_api(struct tp_span *sp, int on, uint64_t end, uint32_t id, int32_t result, uint64_t a0,
		uint64_t a1, uint64_t a2, uint64_t a3)
{
	if (__builtin_expect(on != TP_SPAN_SHORT && tp_hook_stack_depth != 0, 0)) {
		tp_span_end_api_stack(sp, end, id, result, a0, a1, a2, a3);
		return;
	}
	/* Written field by field into the slot: no copy through the stack. */
	struct tp_thread *t = sp->t;
	uint64_t h;
	struct tp_record *r;
	if (__builtin_expect(!tp_emit_reserve1(t, &h, &r), 0))
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
