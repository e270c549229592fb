/* The library's state, read by its files and written by init.c (state.h). */
#include "preload/state.h"

#include <stdatomic.h>

/* 0: not started or disabled; 1: recording machinery up.  Written by the
 * constructor, the destructor, the fork and signal handlers and
 * tp_preload_fail() (init.c); read relaxed by the API and the sources (a
 * stale value only delays a no-op).  It orders nothing else: what the hooks
 * record through is published by the collector's own state. */
static _Atomic int active;

/* The configuration before the constructor names its own: all zero, so
 * ->enable reads 0. */
static const struct tp_config none;
/* Set once by the constructor, before it loads the configuration into the
 * object named (so readers see that object, as they did when it lived in
 * init.c), and before any thread of ours exists.  Relaxed: the pointer is
 * all a reader needs, and its fields are ordered for readers as before, by
 * `active` and the constructor running first. */
static _Atomic(const struct tp_config *) current = &none;

int tp_preload_active(void)
{
	return atomic_load_explicit(&active, memory_order_relaxed);
}

void tp_preload_set_active(int on)
{
	atomic_store_explicit(&active, on, memory_order_relaxed);
}

int tp_preload_clear_active(void)
{
	return atomic_exchange_explicit(&active, 0, memory_order_relaxed);
}

const struct tp_config *tp_preload_config(void)
{
	return atomic_load_explicit(&current, memory_order_relaxed);
}

void tp_preload_set_config(const struct tp_config *cfg)
{
	atomic_store_explicit(&current, cfg, memory_order_relaxed);
}
