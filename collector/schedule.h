/* The step schedule: exactly torch.profiler.schedule and the action table of
 * torch.profiler.profile (see ../shared/seeds/torch-profiler-source.txt).
 *
 * The schedule is a pure function of the step number.  A transition between
 * the actions of two consecutive steps (or of the last step and process exit)
 * yields what the collector must do: start a window, stop it, save it. */
#ifndef TP_COLLECTOR_SCHEDULE_H
#define TP_COLLECTOR_SCHEDULE_H

#include <stdint.h>

#include "common/schedule_spec.h" /* struct tp_schedule */

enum tp_action {
	TP_ACT_NONE = 0,
	TP_ACT_WARMUP = 1,
	TP_ACT_RECORD = 2,
	TP_ACT_RECORD_AND_SAVE = 3,
	TP_ACT_EXIT = 4, /* "None" in torch's table: the profiler stops */
};

/* What a transition does, as torch's action_map lists it. */
enum tp_transition {
	TP_TR_START = 1u << 0, /* start_trace: a window opens with the new step */
	TP_TR_STOP = 1u << 1,  /* stop_trace: the window closes before the new step */
	TP_TR_SAVE = 1u << 2,  /* _trace_ready: the closed window is written */
	TP_TR_WARN = 1u << 3,  /* "Incorrect schedule" warning */
};

enum tp_action tp_schedule_action(const struct tp_schedule *s, uint64_t step);
unsigned tp_schedule_transition(enum tp_action prev, enum tp_action cur);

static inline int tp_action_records(enum tp_action a)
{
	return a == TP_ACT_RECORD || a == TP_ACT_RECORD_AND_SAVE;
}

#endif
