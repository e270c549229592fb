/* Step sources for programs that never call traceprof_step()
 * (TRACEPROF_STEP): nvtx:NAME, call:FUNCTION[:N] and time:MS.  The schedule
 * applies to the steps they make exactly as to traceprof_step() calls.
 * Also the capture range's calls (TRACEPROF_CAPTURE=cudaProfilerApi). */
#ifndef TP_PRELOAD_STEPS_H
#define TP_PRELOAD_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_table.h" /* generated: TP_CUDA_FUNCS */

struct tp_config;

/* Sets up TRACEPROF_STEP's source and TRACEPROF_CAPTURE's mode, before the
 * flush thread starts (its first window depends on the capture mode).
 * Returns 0; a source that cannot start says why and counts no steps. */
int tp_steps_start(const struct tp_config *cfg);

/* call:FUNCTION: the API id of FUNCTION (UINT32_MAX when the source is not
 * call:, so that the check below never matches).  Written once at start-up
 * before any wrapper can record. */
extern uint32_t tp_steps_call_id;

/* A call of FUNCTION: every N-th one starts a new step. */
void tp_steps_call_hit(void);

/* The API ids as constants (TP_STEPS_ID_cudaProfilerStart, ...), so that
 * the test below folds away in every wrapper but the four it names. */
#define TP_STEPS_ID(id, name, lib, dec, flags) TP_STEPS_ID_##name = id,
enum tp_steps_cuda_id { TP_CUDA_FUNCS(TP_STEPS_ID) TP_STEPS_ID_END_ };
#undef TP_STEPS_ID

/* cudaProfilerStart/Stop, cuProfilerStart/Stop: a capture range starts or
 * ends (TRACEPROF_CAPTURE=cudaProfilerApi; a no-op otherwise). */
void tp_steps_profiler_api(uint32_t id);

/* Called by every generated CUDA wrapper with its API id (a constant): one
 * compare, and for the profiler functions alone a second call. */
static inline void tp_steps_on_api(uint32_t id)
{
	if (__builtin_expect(id == tp_steps_call_id, 0))
		tp_steps_call_hit();
	if (id == TP_STEPS_ID_cudaProfilerStart || id == TP_STEPS_ID_cudaProfilerStop ||
	    id == TP_STEPS_ID_cuProfilerStart || id == TP_STEPS_ID_cuProfilerStop)
		tp_steps_profiler_api(id);
}

/* nvtx:NAME: non-zero when NVTX range starts are a step source. */
extern int tp_steps_nvtx_on;

/* Whether an NVTX range name is a step: equal to NAME, or starting with
 * NAME without its '*' when NAME ends in '*'. */
int tp_steps_nvtx_match(const char *name, size_t len);

#endif
