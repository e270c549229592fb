/* The live file's step times (collector/live.c): the last TP_LIVE_STEPS
 * steps that ended, stored by the stepping thread (collector/control.c) and
 * read by the flush thread.  A leaf of its own, so that control.c, which
 * live.c reads, does not call back into live.c. */
#include "collector/live_steps.h"

#include <stdatomic.h>

#include "common/clock.h"

/* The last TP_LIVE_STEPS steps that ended, by step number modulo the size.
 * The stepping thread stores the slot's times, then its number (release);
 * lv_last is the number of the last step ended + 1 (release).  The reader
 * loads lv_last (acquire), then each slot's number (acquire), times, and
 * the number again: a slot being rewritten by a step 64 later is skipped. */
static struct {
	_Atomic uint64_t num; /* step + 1; 0: empty */
	_Atomic uint64_t start, end;
} lv_steps[TP_LIVE_STEPS];
static _Atomic uint64_t lv_last;

void tp_live_step_ended(uint64_t step, uint64_t start, uint64_t end)
{
	unsigned i = (unsigned)(step % TP_LIVE_STEPS);
	/* Mark the slot as being rewritten first, so that a reader that sees
	 * the old number both times did not read the new times in between. */
	atomic_store_explicit(&lv_steps[i].num, 0, memory_order_relaxed);
	/* Release fence: the 0 above is visible before the times below (pairs
	 * with the reader's acquire fence in lv_write_steps()). */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&lv_steps[i].start, start, memory_order_relaxed);
	atomic_store_explicit(&lv_steps[i].end, end, memory_order_relaxed);
	/* Release: the times above come with the number (pairs with the
	 * reader's acquire load of num). */
	atomic_store_explicit(&lv_steps[i].num, step + 1, memory_order_release);
	/* Release: the slot is complete before lv_last names it (pairs with
	 * the reader's acquire load of lv_last).  Only forward: two threads
	 * ending consecutive steps at once may get here in either order.
	 * Ends: lv_last only grows, and a spurious failure is retried once more. */
	uint64_t last = atomic_load_explicit(&lv_last, memory_order_relaxed);
	while (last < step + 1 &&
	       !atomic_compare_exchange_weak_explicit(&lv_last, &last, step + 1, memory_order_release,
						      memory_order_relaxed))
		;
}

int tp_live_steps_read(uint64_t durs[TP_LIVE_STEPS], uint64_t *last_out)
{
	/* Acquire: pairs with the release CAS of lv_last in tp_live_step_ended(). */
	uint64_t last = atomic_load_explicit(&lv_last, memory_order_acquire);
	uint64_t first = last > TP_LIVE_STEPS ? last - TP_LIVE_STEPS : 0;
	int n = 0;
	for (uint64_t s = first; s < last; s++) {
		unsigned i = (unsigned)(s % TP_LIVE_STEPS);
		/* Acquire: pairs with the release store of num. */
		uint64_t num = atomic_load_explicit(&lv_steps[i].num, memory_order_acquire);
		uint64_t b = atomic_load_explicit(&lv_steps[i].start, memory_order_relaxed);
		uint64_t e = atomic_load_explicit(&lv_steps[i].end, memory_order_relaxed);
		/* Acquire fence: the times are read before num again (pairs with
		 * the release fence after the writer's store of 0). */
		atomic_thread_fence(memory_order_acquire);
		if (num != s + 1 || atomic_load_explicit(&lv_steps[i].num, memory_order_relaxed) != num)
			continue; /* being rewritten, or a step that raced */
		uint64_t bn = tp_clock_to_ns(b), en = tp_clock_to_ns(e);
		durs[n++] = en > bn ? en - bn : 0;
	}
	*last_out = last;
	return n;
}

void tp_live_steps_reset(void)
{
	atomic_store_explicit(&lv_last, 0, memory_order_relaxed);
	for (unsigned i = 0; i < TP_LIVE_STEPS; i++)
		atomic_store_explicit(&lv_steps[i].num, 0, memory_order_relaxed);
}
