/* The out-of-line begin of the hot path's full form (collector/hot.h). */
#include "collector/hot.h"

int tp_span_begin_full(struct tp_span *sp, uint64_t state)
{
	/* Creates the thread's state on its first event (errno preserved). */
	struct tp_thread *t = tp_emit_self();
	if (!t)
		return TP_SPAN_OFF;
	sp->t = t;
	sp->step = (uint32_t)(state >> TP_STATE_STEP_SHIFT);
	sp->start = tp_clock_now();
	return TP_SPAN_FULL;
}
