/* The hot path: everything a recorded call runs on the program's thread,
 * in one header, in three parts, each used by the next:
 *
 *   1. the switch (tp_state): one relaxed load says whether the current
 *      step records (collector/control.c writes it at step changes);
 *   2. the ring write (tp_emit_reserve1/commit1, tp_emit): one record into
 *      the calling thread's SPSC ring (collector/ring.h, collector/thread.h),
 *      no lock, no allocation (but the thread's first ring), no syscall, no
 *      formatting;
 *   3. the span (tp_span_begin ... tp_span_end_api) that a wrapper puts
 *      around the real call: two clock reads, then the ring write.  Its
 *      full path's begin is out of line (collector/span.c), and so is its
 *      call-stack end (preload/stack.c: the one piece that lives a floor
 *      up, with libunwind and CPython; declared here, called only from
 *      preload/, which scripts/check-layers would catch otherwise).
 * The globals they read sit on one cache line (collector/hot_data.h).
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
#ifndef TP_COLLECTOR_HOT_H
#define TP_COLLECTOR_HOT_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "collector/hot_data.h"
#include "collector/record.h"
#include "collector/thread.h"
#include "common/clock.h"

/* ---- the switch: one word every wrapper reads -------------------------
 *
 * tp_state packs the current step and whether that step records:
 *   bits 63..8  step number (starts at 0 when the process starts)
 *   bit 1       TP_STATE_FULL: a recorded call must take the full path
 *               (clock_gettime clock, call stacks, CUPTI correlation: see
 *               tp_control_set_full()); clear, it may take the short one
 *               (rdtsc, one ring write), which tests nothing else
 *   bit 0       TP_STATE_RECORDING: the current step's action is RECORD or
 *               RECORD_AND_SAVE
 * The hot path does one relaxed load of it: a record carries the step it was
 * started in, and the flush thread assigns records to windows by that step
 * alone, so no ordering between threads is needed for correctness. */
#define TP_STATE_RECORDING 1ull
#define TP_STATE_FULL 2ull
#define TP_STATE_STEP_SHIFT 8

extern _Atomic uint64_t tp_state;

/* ---- the ring write ----------------------------------------------------- */

/* The calling thread's state, created on first use; NULL when it cannot
 * record (thread exiting, out of memory). */
static inline __attribute__((always_inline)) struct tp_thread *tp_emit_self(void)
{
	struct tp_thread *t = tp_self;
	if (__builtin_expect((uintptr_t)t <= (uintptr_t)TP_THREAD_GONE, 0))
		t = tp_thread_create_self();
	return t;
}

/* Writes rec followed by `extra_len` bytes of extras (at most
 * TP_REC_MAX_EXTRA * 64) into t's ring.  rec->nextra is set here.  A full
 * ring, or a write interrupted by a signal handler that records too, drops
 * the record and counts it. */
static inline void tp_emit(struct tp_thread *t, const struct tp_record *rec, const void *extra,
			   size_t extra_len)
{
	unsigned nextra = (unsigned)((extra_len + TP_REC_EXTRA_BYTES - 1) / TP_REC_EXTRA_BYTES);
	if (__builtin_expect(t->ring.writing, 0)) {
		tp_ring_drop_interrupted(&t->ring);
		return;
	}
	t->ring.writing = 1;
	/* A compiler barrier is enough: only a signal handler on this same
	 * thread can observe t->ring.writing. */
	atomic_signal_fence(memory_order_seq_cst);
	int64_t h = tp_ring_reserve(&t->ring, 1 + nextra);
	if (__builtin_expect(h < 0, 0)) {
		tp_ring_drop(&t->ring);
	} else {
		struct tp_record *slot = tp_ring_slot(&t->ring, (uint64_t)h);
		*slot = *rec;
		slot->nextra = (uint8_t)nextra;
		const char *src = extra;
		for (unsigned i = 0; i < nextra; i++) {
			struct tp_record *x = tp_ring_slot(&t->ring, (uint64_t)h + 1 + i);
			size_t n = extra_len - (size_t)i * TP_REC_EXTRA_BYTES;
			memcpy(x, src + (size_t)i * TP_REC_EXTRA_BYTES,
			       n < TP_REC_EXTRA_BYTES ? n : TP_REC_EXTRA_BYTES);
		}
		tp_ring_commit(&t->ring, (uint64_t)h, 1 + nextra);
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->ring.writing = 0;
}

/* The hot path's split form of tp_emit() for one record without extras, so
 * that the caller writes the record's fields straight into its slot instead
 * of building it on the stack and copying it:
 *
 *   uint64_t h;
 *   struct tp_record *r;
 *   if (tp_emit_reserve1(t, &h, &r)) { ...fill every field of *r...; tp_emit_commit1(t, h); }
 *
 * tp_emit_reserve1() returns 0 when the record is dropped and counted (ring
 * full, or a write interrupted by a signal handler that records too, as in
 * tp_emit()); nothing else may be emitted on this thread between the two
 * calls.  r->nextra must be written as 0. */
static inline __attribute__((always_inline)) int tp_emit_reserve1(struct tp_thread *t, uint64_t *h,
								  struct tp_record **slot)
{
	if (__builtin_expect(t->ring.writing, 0)) {
		tp_ring_drop_interrupted(&t->ring);
		return 0;
	}
	t->ring.writing = 1;
	/* A compiler barrier is enough: only a signal handler on this same
	 * thread can observe t->ring.writing. */
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t c = atomic_load_explicit(&t->ring.head, memory_order_relaxed);
	if (__builtin_expect(!tp_ring_room(&t->ring, c, 1), 0)) {
		tp_ring_drop(&t->ring);
		/* Pairs with the fence above: the drop is counted before a signal
		 * handler may write again. */
		atomic_signal_fence(memory_order_seq_cst);
		t->ring.writing = 0;
		return 0;
	}
	*h = c;
	*slot = tp_ring_slot(&t->ring, c);
	tp_ring_prefetch(*slot);
	return 1;
}

static inline __attribute__((always_inline)) void tp_emit_commit1(struct tp_thread *t, uint64_t h)
{
	tp_ring_commit(&t->ring, h, 1);
	/* Compiler barrier, as in tp_emit(): the slot and head are written
	 * before t->ring.writing clears for a signal handler on this thread. */
	atomic_signal_fence(memory_order_seq_cst);
	t->ring.writing = 0;
}

/* Emits a record whose extras are a NUL-terminated copy of `s` (cut to fit,
 * with TP_RF_TRUNC), for markers, ranges and counters. */
void tp_emit_named(struct tp_thread *t, struct tp_record *rec, const char *s, size_t len);

/* ---- the span ------------------------------------------------------------ */

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

/* Captures the caller's stack into extras and emits (preload/stack.c). */
void tp_hook_emit_with_stack(struct tp_thread *t, struct tp_record *rec, const char *str,
			     size_t len);

/* The full path's begin (collector/span.c): creates the thread's state on its
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
 * tp_state (see the switch above for why no ordering is needed). */
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
