/* The interposed cuptiActivityRegisterCallbacks (preload/resolve/cupti_hook.c), and
 * how preload/cupti.c hears of another CUPTI client registering. */
#ifndef TP_PRELOAD_RESOLVE_CUPTI_HOOK_H
#define TP_PRELOAD_RESOLVE_CUPTI_HOOK_H

#include <cupti.h>

typedef CUptiResult(CUPTIAPI *tp_cupti_register_fn)(CUpti_BuffersCallbackRequestFunc,
						      CUpti_BuffersCallbackCompleteFunc);

/* What preload/cupti.c does when another client registers its buffer
 * callbacks through `real`: traceprof first gives CUPTI up (its buffers
 * flushed back to it, its activity kinds disabled, no more correlation ids
 * pushed) if it was recording, and never loads CUPTI later if it was not.
 * Returns what `real` returned. */
typedef CUptiResult (*tp_cupti_client_fn)(tp_cupti_register_fn real,
					  CUpti_BuffersCallbackRequestFunc req,
					  CUpti_BuffersCallbackCompleteFunc complete);

/* Set by preload/cupti.c when it starts (the constructor), so that this
 * file, which the dlsym hook calls, never calls back into capture
 * (scripts/check-layers).  Until then a registration goes straight to
 * CUPTI and is only remembered: tp_cupti_hook_early() says so. */
void tp_cupti_hook_set_client(tp_cupti_client_fn fn);

/* Non-zero when a client registered before preload/cupti.c set its
 * handler (nothing of traceprof's can have loaded CUPTI then). */
int tp_cupti_hook_early(void);

/* For the dlsym hook: a lookup of `name` on a handle found `found`; returns
 * the interposed function instead when that is libcupti's
 * cuptiActivityRegisterCallbacks, else `found`. */
void *tp_cupti_hook_for(const char *name, void *found);

/* For the dlsym hook: non-zero when an RTLD_DEFAULT lookup of `name` must
 * answer NULL (it is our interposed function and no libcupti is loaded). */
int tp_cupti_hook_hidden(const char *name);

#endif
