#include "collector/schedule.h"

enum tp_action tp_schedule_action(const struct tp_schedule *s, uint64_t step)
{
	if (!s->enabled)
		return TP_ACT_RECORD;
	if (step < s->skip_first)
		return TP_ACT_NONE;
	step -= s->skip_first;
	uint64_t num_steps = s->wait + s->warmup + s->active;
	/* torch: `repeat > 0 and step / num_steps >= repeat` with true division,
	 * which for non-negative integers is the same as the floor division. */
	if (s->repeat > 0 && step / num_steps >= s->repeat)
		return TP_ACT_NONE;
	uint64_t mod_step = step % num_steps;
	if (mod_step < s->wait)
		return TP_ACT_NONE;
	if (mod_step < s->wait + s->warmup)
		return TP_ACT_WARMUP;
	return mod_step < num_steps - 1 ? TP_ACT_RECORD : TP_ACT_RECORD_AND_SAVE;
}

unsigned tp_schedule_transition(enum tp_action prev, enum tp_action cur)
{
	/* Rows of torch.profiler.profile.action_map.  prepare_trace has no
	 * separate effect here: WARMUP events are never written. */
	switch (prev) {
	case TP_ACT_NONE:
		if (cur == TP_ACT_RECORD || cur == TP_ACT_RECORD_AND_SAVE)
			return TP_TR_START;
		return 0;
	case TP_ACT_WARMUP:
		if (cur == TP_ACT_NONE)
			return TP_TR_WARN; /* start_trace + stop_trace: an empty, unsaved window */
		if (cur == TP_ACT_RECORD || cur == TP_ACT_RECORD_AND_SAVE)
			return TP_TR_START;
		return 0; /* WARMUP -> WARMUP; WARMUP -> exit starts and stops, saves nothing */
	case TP_ACT_RECORD:
		if (cur == TP_ACT_NONE || cur == TP_ACT_WARMUP)
			return TP_TR_WARN | TP_TR_STOP; /* stopped, not saved */
		if (cur == TP_ACT_EXIT)
			return TP_TR_STOP | TP_TR_SAVE;
		return 0;
	case TP_ACT_RECORD_AND_SAVE:
		if (cur == TP_ACT_RECORD || cur == TP_ACT_RECORD_AND_SAVE)
			return TP_TR_STOP | TP_TR_SAVE | TP_TR_START;
		return TP_TR_STOP | TP_TR_SAVE;
	default:
		return 0;
	}
}
