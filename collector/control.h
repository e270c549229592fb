/* The step control: steps, the schedule's action for each, triggered
 * captures and capture ranges, and the reasons for the full path.  It
 * writes the switch the hot path reads (tp_state and its bits,
 * collector/hot.h) at each change; the program's threads only read it. */
#ifndef TP_COLLECTOR_CONTROL_H
#define TP_COLLECTOR_CONTROL_H

#include <stdatomic.h>
#include <stdint.h>

#include "collector/hot.h"
#include "collector/schedule.h"

/* Sets the schedule and the state of step 0.  Called once by the
 * constructor before any recording. */
void tp_control_init(const struct tp_schedule *s);

/* Switches to on-demand mode (TRACEPROF_TRIGGER): nothing records until
 * tp_control_trigger(); each trigger then runs one capture of `warmup`
 * WARMUP steps and `active` recording steps from the next step on. */
void tp_control_set_trigger(uint64_t warmup, uint64_t active);

/* Why recorded calls take the full path (any of them sets TP_STATE_FULL). */
enum tp_full_reason {
	TP_FULL_CLOCK = 1u << 0, /* the clock is not the TSC */
	TP_FULL_STACK = 1u << 1, /* TRACEPROF_WITH_STACK */
	TP_FULL_CUPTI = 1u << 2, /* CUPTI links GPU activity to launches */
};

/* Adds (on != 0) or removes a reason for the full path.  Safe from any
 * thread at any time: calls already past their test finish on the path they
 * took. */
void tp_control_set_full(unsigned reason, int on);

/* Stops all recording for good (exit, fatal internal error). */
void tp_control_disable(void);

/* fn runs after each change of whether the current step records, on the
 * thread that made the change (a step, a capture range's start or end, the
 * final disable), after any lock of the change is released: for a source
 * whose idle cost is not nil, so that it leaves the program alone between
 * windows (preload/torch_ops.c).  fn reads tp_state itself, so that of two
 * racing changes the later call sees the final state.  One fn; NULL:
 * none. */
void tp_control_on_recording(void (*fn)(void));

/* The action of a step, as the hot path and the flush thread both see it:
 * the schedule, or a triggered capture (tp_control_trigger). */
enum tp_action tp_control_action(uint64_t step);

/* The next step starts (traceprof_step() and every step source).  Writes the
 * ProfilerStep#N record of the step that ended when that step recorded.
 * Lock-free; safe from any thread. */
void tp_control_step(void);

/* Asks for one on-demand capture starting at the next step (async-signal-safe:
 * sets a flag only). */
void tp_control_trigger(void);

/* Switches to capture-range mode (TRACEPROF_CAPTURE=cudaProfilerApi):
 * nothing records until tp_control_capture(1).  Called once at start-up. */
void tp_control_set_capture(void);

/* A profiler start (start != 0) or stop call: opens or closes a capture
 * range at a new step boundary.  Returns 0, or the ignored call's reason
 * (-EALREADY: a start inside a range; -ENOENT: a stop outside one;
 * -ENOSPC: too many ranges).  A no-op returning 0 outside capture mode.
 * Safe from any thread; never from a signal handler (it may spin). */
int tp_control_capture(int start);

/* The program's step number of an internal step: the same outside capture
 * mode; in it, without the boundaries the ranges added
 * (collector/capture.h).  For ProfilerStep#N and file names. */
uint64_t tp_control_display_step(uint64_t step);

/* The current step (relaxed). */
static inline uint64_t tp_control_current_step(void)
{
	return atomic_load_explicit(&tp_state, memory_order_relaxed) >> TP_STATE_STEP_SHIFT;
}

/* Writes the ProfilerStep#N record of `step` (start..end, clock ticks) on
 * the calling thread.  at_exit: the step is ended by the exit, not by a
 * step call (its phase is teardown; step 0 outside capture mode is the
 * start-up: TP_STEP_PHASE_* in scripts/layout.spec). */
void tp_control_emit_step(uint64_t step, uint64_t start, uint64_t end, int at_exit);

/* Clock ticks at which the current step started. */
uint64_t tp_control_step_start(void);

/* Set when a step transition asked for a "Incorrect schedule" warning; the
 * flush thread logs it (no write(2) on the stepping thread). */
extern _Atomic unsigned tp_control_warnings;

/* Logs the warnings asked for since the last call (the flush thread, each
 * pass and at the final save). */
void tp_control_log_warnings(void);

#endif
