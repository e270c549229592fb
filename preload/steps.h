/* Step sources for programs that never call traceprof_step()
 * (TRACEPROF_STEP): nvtx:NAME, call:FUNCTION[:N] and time:MS.  The schedule
 * applies to the steps they make exactly as to traceprof_step() calls. */
#ifndef TP_PRELOAD_STEPS_H
#define TP_PRELOAD_STEPS_H

#include <stddef.h>
#include <stdint.h>

/* call:FUNCTION: the API id of FUNCTION (UINT32_MAX when the source is not
 * call:, so that the check below never matches).  Written once at start-up
 * before any wrapper can record. */
extern uint32_t tp_steps_call_id;

/* A call of FUNCTION: every N-th one starts a new step. */
void tp_steps_call_hit(void);

/* Called by every generated CUDA wrapper with its API id: one compare. */
static inline void tp_steps_on_api(uint32_t id)
{
	if (__builtin_expect(id == tp_steps_call_id, 0))
		tp_steps_call_hit();
}

/* nvtx:NAME: non-zero when NVTX range starts are a step source. */
extern int tp_steps_nvtx_on;

/* Whether an NVTX range name is a step: equal to NAME, or starting with
 * NAME without its '*' when NAME ends in '*'. */
int tp_steps_nvtx_match(const char *name, size_t len);

#endif
