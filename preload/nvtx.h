/* traceprof as an NVTX injection library (preload/nvtx.c). */
#ifndef TP_PRELOAD_NVTX_H
#define TP_PRELOAD_NVTX_H

/* Points NVTX_INJECTION64_PATH at this library unless the user set it, so
 * that every NVTX v3 user in the process reports to us.  Called by the
 * constructor once the configuration is loaded and profiling is on. */
void tp_nvtx_setenv(void);

#endif
