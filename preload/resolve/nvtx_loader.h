/* traceprof as an NVTX injection library: the callbacks (preload/nvtx.c) and
 * NVTX's start-up (preload/resolve/nvtx_loader.c). */
#ifndef TP_PRELOAD_RESOLVE_NVTX_LOADER_H
#define TP_PRELOAD_RESOLVE_NVTX_LOADER_H

/* Points NVTX_INJECTION64_PATH at this library unless the user set it, so
 * that every NVTX v3 user in the process reports to us.  Called by the
 * constructor once the configuration is loaded and profiling is on.
 * Non-zero when NVTX's start-up will load this library: the constructor
 * then warms the dlopen hook too (tp_dl_open_warm()). */
int tp_nvtx_setenv(void);

/* The dlopen hook, first: whether dlopen(file, mode) opens this library
 * again without changing its scope (nothing new to look at: the hook then
 * just calls the real dlopen).  When it is NVTX's start-up doing so, holds
 * the thread's asynchronous signals back until InitializeInjectionNvtx2
 * has filled NVTX's table (preload/resolve/nvtx_loader.c says why).  Keeps errno. */
int tp_nvtx_loader_open(const char *file, int mode);

/* The dlsym hook, for a lookup in a handle: ends a hold begun by
 * tp_nvtx_loader_open() unless the name is InitializeInjectionNvtx2. */
void tp_nvtx_loader_sym(const char *name);

/* Ends the hold: InitializeInjectionNvtx2 has filled the table. */
void tp_nvtx_loader_release(void);

#endif
