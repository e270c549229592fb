/* Whether the process did something worth a trace file: a step from any
 * source (tp_control_step(), collector/control.c), or a record other than
 * ProfilerStep and thread names (collector/drain.c).  A process that did
 * nothing of the kind (a shell, a launcher, a pyenv shim) writes no trace
 * file: its implicit ProfilerStep#0 does not count.  The flush thread reads
 * it when a window is finalized (collector/parts.c).
 *
 * A core flag below the flush thread's files, so that the program's side
 * (control.c) notes activity without calling into them. */
#ifndef TP_COLLECTOR_ACTIVITY_H
#define TP_COLLECTOR_ACTIVITY_H

#include <stdatomic.h>

/* 1 once there was activity.  Relaxed on both sides: a flag with nothing
 * published through it; its reader, the window's finalize on the flush
 * thread (tp_activity_seen()), runs after draining every ring, and the
 * final save after the program's threads are done. */
extern _Atomic int tp_activity;

/* fn runs on every note from a program's thread (tp_activity_note()): the
 * flush thread's lazy start (tp_flush_need(), collector/flush.h), so that a
 * step that records nothing still moves the windows.  NULL: nothing. */
void tp_activity_set_start(void (*fn)(void));

/* A program's thread did something worth a file (a step): sets the flag and
 * runs the start hook.  Slow path (one step per call). */
void tp_activity_note(void);

static inline void tp_activity_set(void)
{
	atomic_store_explicit(&tp_activity, 1, memory_order_relaxed);
}

static inline int tp_activity_seen(void)
{
	return atomic_load_explicit(&tp_activity, memory_order_relaxed);
}

#endif
