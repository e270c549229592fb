/* The live file's step times: a lock-free ring of the last TP_LIVE_STEPS
 * steps that ended (collector/live_steps.c). */
#ifndef TP_COLLECTOR_LIVE_STEPS_H
#define TP_COLLECTOR_LIVE_STEPS_H

#include <stdint.h>

/* The steps' durations kept for the file. */
#define TP_LIVE_STEPS 64

/* Step `step` ran from start to end (tp_clock_now() ticks): called by
 * tp_control_step()'s winner on the stepping thread.  Lock-free, a few
 * stores. */
void tp_live_step_ended(uint64_t step, uint64_t start, uint64_t end);

/* Flush thread: the durations (ns) of the last steps that ended, oldest
 * first, into durs; returns how many.  *last: the number of the last step
 * ended + 1 (0: none yet).  Slots being rewritten are skipped. */
int tp_live_steps_read(uint64_t durs[TP_LIVE_STEPS], uint64_t *last);

/* A forked child that follows: no steps yet. */
void tp_live_steps_reset(void);

#endif
