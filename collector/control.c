#include "collector/control.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

#include "collector/capture.h"
#include "collector/hot.h"
#include "collector/activity.h"
#include "collector/flush.h"
#include "collector/live_steps.h"
#include "common/log.h"

/* First in tp_hot (link order): its line holds the other hot globals. */
TP_HOT_DATA _Alignas(64) _Atomic uint64_t tp_state;
_Atomic unsigned tp_control_warnings;

static struct tp_schedule sched;
/* tp_control_on_recording()'s function.  Release/acquire: whoever calls it
 * sees what was set up before it was published. */
static void (*_Atomic on_recording)(void);
/* The reasons for TP_STATE_FULL (enum tp_full_reason); tp_state's bit is
 * their OR, kept up to date by tp_control_set_full(). */
static _Atomic unsigned full_reasons;
/* Steps after this one never record (tp_control_disable); UINT64_MAX while
 * enabled.  Relaxed: it only ever moves from UINT64_MAX to a step once. */
static _Atomic uint64_t disabled_after = UINT64_MAX;
static _Atomic uint64_t step_start_ticks;

/* On-demand captures (TRACEPROF_TRIGGER).  The signal handler only sets
 * trigger_pending; the next tp_control_step() turns it into a capture that
 * starts at the new step.  Captures are appended, never changed, so the
 * flush thread computes the same action for an old step as the stepping
 * thread did: capture_count is published with release after the base is
 * written, and read with acquire in tp_control_action(). */
#define TP_MAX_CAPTURES 64
static int trigger_mode;
static uint64_t capture_warmup, capture_active;
static uint64_t capture_base[TP_MAX_CAPTURES];
static _Atomic unsigned capture_count;
static _Atomic int trigger_pending;

/* Capture ranges (TRACEPROF_CAPTURE=cudaProfilerApi, collector/capture.h).
 * A range's start and end must be in the table before the step they begin
 * is published, or the flush thread could pass that step with the wrong
 * action; so in this mode every step change (tp_control_step and
 * tp_control_capture) runs under capture_busy, a spin lock held for a few
 * hundred nanoseconds.  Steps and profiler start/stop calls are a few per
 * iteration, and never on a recording hook's path. */
static int capture_mode;
static _Atomic int capture_busy;

static void capture_lock(void)
{
	/* Acquire pairs with the release in capture_unlock(). */
	while (atomic_exchange_explicit(&capture_busy, 1, memory_order_acquire))
		sched_yield();
}

static void capture_unlock(void)
{
	atomic_store_explicit(&capture_busy, 0, memory_order_release);
}

static uint64_t state_full(void)
{
	return atomic_load_explicit(&full_reasons, memory_order_relaxed) ? TP_STATE_FULL : 0;
}

void tp_control_set_full(unsigned reason, int on)
{
	if (on)
		atomic_fetch_or_explicit(&full_reasons, reason, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&full_reasons, ~reason, memory_order_relaxed);
	/* The bit is recomputed from full_reasons inside the loop, so that of two
	 * racing callers the last CAS writes the OR of both; tp_control_step()'s
	 * CAS carries the bit over, so neither loses the other's update.
	 * Relaxed: the flags guard nothing but the hot path's choice of path,
	 * and both paths write correct records. */
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&tp_state, &s,
						      (s & ~TP_STATE_FULL) | state_full(),
						      memory_order_relaxed, memory_order_relaxed))
		;
}

void tp_control_init(const struct tp_schedule *s)
{
	sched = *s;
	atomic_store_explicit(&step_start_ticks, tp_clock_now(), memory_order_relaxed);
	uint64_t st = tp_control_action(0) >= TP_ACT_RECORD ? TP_STATE_RECORDING : 0;
	atomic_store_explicit(&tp_state, st | state_full(), memory_order_release);
}

void tp_control_set_trigger(uint64_t warmup, uint64_t active)
{
	trigger_mode = 1;
	capture_warmup = warmup;
	capture_active = active;
	/* Nothing records until the first signal. */
	atomic_store_explicit(&tp_state, state_full(), memory_order_release);
}

void tp_control_on_recording(void (*fn)(void))
{
	atomic_store_explicit(&on_recording, fn, memory_order_release);
}

/* After a change of tp_state from old to now: tells on_recording when the
 * recording bit moved. */
static void recording_changed(uint64_t old, uint64_t now)
{
	if (!((old ^ now) & TP_STATE_RECORDING))
		return;
	void (*fn)(void) = atomic_load_explicit(&on_recording, memory_order_acquire);
	if (fn)
		fn();
}

void tp_control_disable(void)
{
	/* Clear the recording bit for good; steps up to the current one keep
	 * their actions (the final save still needs them), later ones are NONE. */
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	uint64_t cur = s >> TP_STATE_STEP_SHIFT;
	uint64_t expect = UINT64_MAX;
	atomic_compare_exchange_strong_explicit(&disabled_after, &expect, cur,
						memory_order_relaxed, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&tp_state, &s, s & ~TP_STATE_RECORDING,
						      memory_order_relaxed, memory_order_relaxed))
		;
	recording_changed(s, s & ~TP_STATE_RECORDING);
}

enum tp_action tp_control_action(uint64_t step)
{
	if (step > atomic_load_explicit(&disabled_after, memory_order_relaxed))
		return TP_ACT_NONE;
	if (capture_mode)
		return tp_capture_action(step);
	if (!trigger_mode)
		return tp_schedule_action(&sched, step);
	/* Pairs with the release increment in tp_control_step(). */
	unsigned n = atomic_load_explicit(&capture_count, memory_order_acquire);
	for (unsigned i = 0; i < n; i++) {
		uint64_t b = capture_base[i];
		if (step < b || step >= b + capture_warmup + capture_active)
			continue;
		uint64_t k = step - b;
		if (k < capture_warmup)
			return TP_ACT_WARMUP;
		return k + 1 < capture_warmup + capture_active ? TP_ACT_RECORD
							       : TP_ACT_RECORD_AND_SAVE;
	}
	return TP_ACT_NONE;
}

void tp_control_trigger(void)
{
	atomic_store_explicit(&trigger_pending, 1, memory_order_relaxed);
}

uint64_t tp_control_step_start(void)
{
	return atomic_load_explicit(&step_start_ticks, memory_order_relaxed);
}

static void maybe_start_capture(uint64_t new_step)
{
	if (!trigger_mode || !atomic_exchange_explicit(&trigger_pending, 0, memory_order_relaxed))
		return;
	unsigned n = atomic_load_explicit(&capture_count, memory_order_relaxed);
	if (n > 0 && new_step < capture_base[n - 1] + capture_warmup + capture_active) {
		atomic_fetch_or_explicit(&tp_control_warnings, 2u, memory_order_relaxed);
		return; /* a capture is already running */
	}
	if (n >= TP_MAX_CAPTURES) {
		atomic_fetch_or_explicit(&tp_control_warnings, 4u, memory_order_relaxed);
		return;
	}
	capture_base[n] = new_step;
	/* Release pairs with the acquire load in tp_control_action(). */
	atomic_store_explicit(&capture_count, n + 1, memory_order_release);
}

/* Moves to the next step: the ProfilerStep#N record of the step that ended
 * when it recorded.  `user`: a step of the program (not a capture range's
 * boundary), which may start a triggered capture.  Returns the state it
 * replaced and, in *now, the one it wrote. */
static uint64_t advance(int user, uint64_t *now_state)
{
	/* A step from any source (traceprof_step(), NVTX, a CUDA call, the
	 * timer) is the program's or the user's: the process writes its file. */
	tp_activity_note();
	uint64_t now = tp_clock_now();
	uint64_t old = atomic_load_explicit(&tp_state, memory_order_relaxed);
	uint64_t step, next;
	/* Concurrent callers each advance by exactly one step: the CAS retries
	 * until this caller owns the transition old -> next. */
	for (;;) {
		step = old >> TP_STATE_STEP_SHIFT;
		/* Only the winner of the CAS may start a capture, but the base must
		 * be known before the new state is computed: a capture starting at
		 * step+1 is registered first; a losing racer then simply sees it. */
		if (user)
			maybe_start_capture(step + 1);
		enum tp_action a = tp_control_action(step + 1);
		next = ((step + 1) << TP_STATE_STEP_SHIFT) | (old & TP_STATE_FULL) |
		       (a >= TP_ACT_RECORD && a <= TP_ACT_RECORD_AND_SAVE ? TP_STATE_RECORDING : 0);
		if (atomic_compare_exchange_weak_explicit(&tp_state, &old, next,
							  memory_order_relaxed,
							  memory_order_relaxed))
			break;
	}
	uint64_t start = atomic_exchange_explicit(&step_start_ticks, now, memory_order_relaxed);
	/* The live file's step times (collector/live.h): a few stores. */
	tp_live_step_ended(step, start, now);
	enum tp_action prev_action = tp_control_action(step);
	enum tp_action cur_action = tp_control_action(step + 1);
	if (tp_schedule_transition(prev_action, cur_action) & TP_TR_WARN)
		atomic_fetch_or_explicit(&tp_control_warnings, 1u, memory_order_relaxed);
	if (old & TP_STATE_RECORDING)
		tp_control_emit_step(step, start, now, 0);
	*now_state = next;
	return old;
}

void tp_control_step(void)
{
	uint64_t old, now;
	if (!capture_mode) {
		old = advance(1, &now);
	} else {
		capture_lock();
		old = advance(1, &now);
		capture_unlock();
	}
	recording_changed(old, now);
}

void tp_control_set_capture(void)
{
	capture_mode = 1;
	/* Nothing records until the first start. */
	atomic_store_explicit(&tp_state, state_full(), memory_order_release);
}

int tp_control_capture(int start)
{
	if (!capture_mode)
		return 0;
	capture_lock();
	uint64_t next = tp_control_current_step() + 1;
	int rc = start ? tp_capture_begin(next) : tp_capture_end(next);
	uint64_t old = 0, now = 0;
	if (!rc)
		old = advance(0, &now);
	capture_unlock();
	recording_changed(old, now);
	return rc;
}

uint64_t tp_control_display_step(uint64_t step)
{
	return capture_mode ? tp_capture_display_step(step) : step;
}

void tp_control_emit_step(uint64_t step, uint64_t start, uint64_t end, int at_exit)
{
	struct tp_thread *t = tp_emit_self();
	if (!t)
		return;
	struct tp_record r = { 0 };
	r.kind = TP_REC_STEP;
	r.start = start;
	r.end = end;
	r.step = (uint32_t)step;
	r.arg[0] = tp_control_display_step(step);
	/* Bit 0: begun at the library's start (step 0; in capture mode step 0
	 * is the time before the first range, never written); bit 1: ended by
	 * the exit.  collector/markers_decode.c names the phase. */
	r.arg[1] = (step == 0 && !capture_mode ? 1u : 0u) | (at_exit ? 2u : 0u);
	tp_emit(t, &r, NULL, 0);
}

void tp_control_log_warnings(void)
{
	unsigned wbits = atomic_exchange_explicit(&tp_control_warnings, 0, memory_order_relaxed);
	if (wbits & 1u)
		tp_warn("Incorrect schedule: a RECORD or WARMUP step was followed by NONE or WARMUP "
			"(as torch.profiler warns); that window is not saved");
	if (wbits & 2u)
		tp_warn("trigger ignored: a capture is already running");
	if (wbits & 4u)
		tp_warn("trigger ignored: at most 64 captures per process");
}
