/* The activity flag (collector/activity.h). */
#include "collector/activity.h"

_Atomic int tp_activity;

/* Relaxed: a function pointer set once by tp_flush_start(), to a function
 * that lives as long as the library; a step before it was set has nothing
 * to start (tp_flush_need() also waits for tp_flush_start()). */
static void (*_Atomic activity_start)(void);

void tp_activity_set_start(void (*fn)(void))
{
	atomic_store_explicit(&activity_start, fn, memory_order_relaxed);
}

void tp_activity_note(void)
{
	tp_activity_set();
	void (*fn)(void) = atomic_load_explicit(&activity_start, memory_order_relaxed);
	if (fn)
		fn();
}
