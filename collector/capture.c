/* Capture ranges (collector/capture.h). */
#include "collector/capture.h"

#include <errno.h>
#include <stdatomic.h>

/* Range i is [starts[i], ends[i]) in internal steps; ends[i] is UINT64_MAX
 * while it is open.  Ranges are appended in step order and never removed,
 * so a reader that sees count n sees n complete starts. */
static uint64_t starts[TP_CAPTURE_MAX_RANGES];
static _Atomic uint64_t ends[TP_CAPTURE_MAX_RANGES];
static _Atomic unsigned count;

int tp_capture_is_open(void)
{
	unsigned n = atomic_load_explicit(&count, memory_order_acquire);
	return n > 0 && atomic_load_explicit(&ends[n - 1], memory_order_acquire) == UINT64_MAX;
}

int tp_capture_begin(uint64_t step)
{
	unsigned n = atomic_load_explicit(&count, memory_order_relaxed);
	if (tp_capture_is_open())
		return -EALREADY;
	if (n >= TP_CAPTURE_MAX_RANGES)
		return -ENOSPC;
	starts[n] = step;
	atomic_store_explicit(&ends[n], UINT64_MAX, memory_order_relaxed);
	/* Release: the start and the open end above are visible to whoever
	 * acquires the new count (tp_capture_action, tp_capture_is_open). */
	atomic_store_explicit(&count, n + 1, memory_order_release);
	return 0;
}

int tp_capture_end(uint64_t step)
{
	unsigned n = atomic_load_explicit(&count, memory_order_relaxed);
	if (!tp_capture_is_open())
		return -ENOENT;
	/* Release pairs with the acquire loads of ends[] below: the end is
	 * written before the caller publishes the step it starts, so the flush
	 * thread, which looks at a step's action only once the program is past
	 * it, always sees the final end. */
	atomic_store_explicit(&ends[n - 1], step, memory_order_release);
	return 0;
}

enum tp_action tp_capture_action(uint64_t step)
{
	/* Pairs with the release store of count in tp_capture_begin(). */
	unsigned n = atomic_load_explicit(&count, memory_order_acquire);
	/* Newest first: records and steps are nearly always of the last range. */
	for (unsigned i = n; i-- > 0;) {
		if (step < starts[i])
			continue;
		uint64_t e = atomic_load_explicit(&ends[i], memory_order_acquire);
		if (step >= e)
			return TP_ACT_NONE;
		return step + 1 == e ? TP_ACT_RECORD_AND_SAVE : TP_ACT_RECORD;
	}
	return TP_ACT_NONE;
}

uint64_t tp_capture_display_step(uint64_t step)
{
	unsigned n = atomic_load_explicit(&count, memory_order_acquire);
	uint64_t added = 0;
	for (unsigned i = 0; i < n; i++) {
		if (starts[i] > step)
			break;
		added++;
		if (atomic_load_explicit(&ends[i], memory_order_acquire) <= step)
			added++;
	}
	return step - added;
}

void tp_capture_reset(void)
{
	atomic_store_explicit(&count, 0, memory_order_relaxed);
}
