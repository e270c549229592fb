/* Start-up and shut-down of the preloaded library. */
#ifndef TP_PRELOAD_INIT_H
#define TP_PRELOAD_INIT_H

#include "common/config.h"

/* Non-zero once the constructor has set everything up and until exit.  Hooks
 * work without it (they forward the call and record nothing). */
int tp_preload_active(void);

/* The configuration in force (valid when tp_preload_active()). */
const struct tp_config *tp_preload_config(void);

/* After each cuInit (generated wrapper): on the first successful one,
 * registers an exit handler that has the flush thread convert what was
 * recorded so far before the CUDA runtime tears down (its handlers were
 * registered before, so they run after); then CUPTI's loading. */
void tp_preload_on_cuinit(int result);

/* Turns recording off for good after an internal failure, with one
 * "traceprof:" line.  The program goes on unaffected. */
void tp_preload_fail(const char *why);

#endif
