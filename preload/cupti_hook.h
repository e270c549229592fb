/* The interposed cuptiActivityRegisterCallbacks (preload/cupti_hook.c) and
 * what preload/cupti.c does when another CUPTI client registers. */
#ifndef TP_PRELOAD_CUPTI_HOOK_H
#define TP_PRELOAD_CUPTI_HOOK_H

#include <cupti.h>

typedef CUptiResult(CUPTIAPI *tp_cupti_register_fn)(CUpti_BuffersCallbackRequestFunc,
						      CUpti_BuffersCallbackCompleteFunc);

/* Another client registers its buffer callbacks through `real`: traceprof
 * first gives CUPTI up (its buffers flushed back to it, its activity kinds
 * disabled, no more correlation ids pushed) if it was recording, and never
 * loads CUPTI later if it was not.  Returns what `real` returned. */
CUptiResult tp_cupti_client_register(tp_cupti_register_fn real, CUpti_BuffersCallbackRequestFunc req,
				     CUpti_BuffersCallbackCompleteFunc complete);

/* For the dlsym hook: a lookup of `name` on a handle found `found`; returns
 * the interposed function instead when that is libcupti's
 * cuptiActivityRegisterCallbacks, else `found`. */
void *tp_cupti_hook_for(const char *name, void *found);

/* For the dlsym hook: non-zero when an RTLD_DEFAULT lookup of `name` must
 * answer NULL (it is our interposed function and no libcupti is loaded). */
int tp_cupti_hook_hidden(const char *name);

#endif
