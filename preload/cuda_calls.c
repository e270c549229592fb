/* Which recorded CUDA calls a trace holds: TRACEPROF_CUDA_CALLS (issue 22).
 *
 * A <<<>>> launch with the shared runtime makes four intercepted calls:
 * nvcc's __cudaPushCallConfiguration and __cudaPopCallConfiguration, the
 * runtime's __cudaLaunchKernel, and the cuLaunchKernel that the runtime makes
 * inside it.  Kineto and Nsight Systems show the runtime call alone, and each
 * recorded call costs tens of nanoseconds on the launch path.  "outer" (the
 * default) records what the program itself called: not the plumbing, and not
 * a driver call made while a runtime call of the same thread is being
 * recorded (the runtime's own; a driver call the program makes itself, as
 * Triton does, is recorded).  Those cost what a call costs while not
 * recording: one more test in the wrapper, then a jump to the real function.
 * "all" records every call.  The GPU work of a runtime call links to the
 * runtime call: its wrapper pushes the correlation id, and the hidden driver
 * call pushes none. */
#include <stdint.h>

#include "collector/control.h"
#include "collector/hot_data.h"
#include "preload/cuda_pack.h"

TP_HOT_DATA uint32_t tp_cuda_nest_max;
TP_HOT_DATA_TAIL uint8_t tp_cuda_quiet[TP_CUDA_NFUNCS + 1];
__thread uint32_t tp_cuda_in_runtime __attribute__((tls_model("initial-exec")));
TP_HOT_DATA intptr_t tp_cuda_in_runtime_tpoff;

/* Called once by the constructor, before any thread records (the schedule
 * starts recording after it): plain stores, read without ordering. */
void tp_cuda_calls_configure(int all)
{
	tp_cuda_in_runtime_tpoff = tp_hot_tpoff(&tp_cuda_in_runtime);
	for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
		tp_cuda_quiet[id] = !all && (tp_cuda_fns[id].flags & TP_CUDA_F_PLUMBING);
	tp_cuda_nest_max = all ? UINT32_MAX : 0;
}
