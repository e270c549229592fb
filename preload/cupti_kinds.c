/* Which activity kinds CUPTI records for traceprof, and when: on in the
 * steps around the recording ones, off otherwise (TRACEPROF_STEPS), so that
 * steps that record nothing pay nothing for CUPTI.  Callers hold
 * preload/cupti.c's client lock, which orders these switches with loading,
 * exit and another client's registration.
 *
 * A loop of two files with cupti.c, on purpose (scripts/check-layers allows
 * it): the switches are steps of cupti.c's state machine, which calls them,
 * and a kind CUPTI refuses gives CUPTI up through that machine
 * (tp_cupti_give_up) as any other failure does.  Handing these files each
 * other as function pointers would keep the same loop out of sight. */
#include "collector/control.h"
#include "common/log.h"
#include "preload/cupti.h"
#include "preload/cupti_internal.h"

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	/* CUPTI writes EXTERNAL_CORRELATION records only next to API records,
	 * so the runtime and driver kinds are on, as in Kineto; their records
	 * are skipped (the interposed calls are the host events). */
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	/* Last, and optional (a CUPTI without it still records the rest):
	 * which stream recorded each CUDA event, for the syncs' wait fields
	 * (collector/gpu_sync.c). */
	CUPTI_ACTIVITY_KIND_CUDA_EVENT,
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
static size_t nenabled; /* under client_mu: kinds[0..nenabled) are on */

/* Whether our activity kinds are on (written under client_mu; the flush
 * thread's unlocked relaxed read is only a hint, checked again locked). */
static _Atomic int kinds_on;

int tp_cupti_kinds_on(void)
{
	return atomic_load_explicit(&kinds_on, memory_order_relaxed);
}

/* Our activity kinds off (client_mu held, or while loading under it). */
void tp_cupti_kinds_off_locked(void)
{
	while (nenabled > 0)
		tp_cupti_fn.Disable(kinds[--nenabled]);
	atomic_store_explicit(&kinds_on, 0, memory_order_relaxed);
}

/* Turns our activity kinds on or off (client_mu held).  Off, CUPTI adds
 * nothing measurable to the program's CUDA calls (bench/gpu: about 2.6 us a
 * launch while on, even in steps that record nothing), and the wrappers push
 * no ids.  Returns 0, or -1 after tp_cupti_give_up(). */
int tp_cupti_kinds_set_locked(int on)
{
	if (on) {
		for (; nenabled < NKINDS; nenabled++) {
			CUptiResult r = tp_cupti_fn.Enable(kinds[nenabled]);
			if (r != CUPTI_SUCCESS && kinds[nenabled] == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
				tp_debug("cuptiActivityEnable(CUDA_EVENT): %s; syncs on CUDA "
					 "events without their wait fields", tp_cupti_result_str(r));
				break;
			}
			if (r != CUPTI_SUCCESS) {
				char err[300];
				tp_format(err, sizeof(err), "cuptiActivityEnable(%d): %s",
					  (int)kinds[nenabled], tp_cupti_result_str(r));
				tp_cupti_give_up(err);
				return -1;
			}
		}
		atomic_store_explicit(&tp_cupti_corr_on, 1, memory_order_relaxed);
		/* Launches and copies then take the path that pushes their ids. */
		tp_control_set_full(TP_FULL_CUPTI, 1);
		atomic_store_explicit(&kinds_on, 1, memory_order_relaxed);
	} else {
		tp_cupti_stop_pushing();
		tp_cupti_kinds_off_locked();
		/* Hands over what was recorded, for the windows still to come. */
		tp_cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	return 0;
}

static int wants_gpu(enum tp_action a)
{
	return a == TP_ACT_WARMUP || tp_action_records(a);
}

/* Whether CUPTI should record now: in WARMUP and recording steps, as
 * torch.profiler does, and also in the step before one (the flush thread
 * switches the kinds on within TRACEPROF_FLUSH_MS, so that a window without
 * warm-up still gets its first kernels) and the step after one (kernels
 * still running when a window's last step ends keep their records). */
int tp_cupti_kinds_wanted(void)
{
	uint64_t s = tp_control_current_step();
	return wants_gpu(tp_control_action(s)) || wants_gpu(tp_control_action(s + 1)) ||
	       (s > 0 && wants_gpu(tp_control_action(s - 1)));
}
