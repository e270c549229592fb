/* Start-up and shut-down of the preloaded library. */
#ifndef TP_PRELOAD_INIT_H
#define TP_PRELOAD_INIT_H

/* After each cuInit (generated wrapper): on the first successful one,
 * registers an exit handler that has the flush thread convert what was
 * recorded so far before the CUDA runtime tears down (its handlers were
 * registered before, so they run after); then CUPTI's loading. */
void tp_preload_on_cuinit(int result);

/* Turns recording off for good after an internal failure, with one
 * "traceprof:" line.  The program goes on unaffected. */
void tp_preload_fail(const char *why);

#endif
