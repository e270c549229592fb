/* The temporary files this process has open, so that a forked child's
 * _exit() can remove them (preload/exit.c; issue 41 item 8).  A process
 * that ends with _exit() runs no saving code, and its hidden temporary file
 * stays behind.  For the program itself that is what `traceprof run` and
 * `traceprof recover` finish as a cut window (docs/guarantees.md).  But a
 * DataLoader worker is a forked child that multiprocessing ends with
 * os._exit() every time: with --pytorch ops each one left a
 * ".pid<N>.rank0.step0.trace.json.tmp.<N>.1" per run, and README promises
 * workers write nothing.  So only a forked child that never exec'd
 * (sl_forked, set by tp_sink_live_forget()) removes its files at _exit().
 *
 * Slots, not a list: the exiting thread may be any thread, running while
 * the flush thread opens or closes sinks, and must neither lock nor
 * allocate.  Each slot's state moves FREE -> FILLING (the flush thread owns
 * the path) -> LIVE (published) -> FREE again, or LIVE -> DROPPING (the
 * exiting thread owns it, for good).  So the path is only ever read by the
 * one thread that won the slot: no torn read of a name being rewritten.
 *
 * The process dying while the flush thread creates a file: the dropper sets
 * sl_dying, then scans; the flush thread publishes the slot, then reads
 * sl_dying (all sequentially consistent).  Either the scan sees the slot
 * or the flush thread sees sl_dying and removes its file itself.
 *
 * A vfork() child's _exit() runs in its parent's memory while the parent's
 * other threads go on: it must change nothing of the parent's.  So
 * sl_dying holds the dying process's pid, not a flag, and the dropper only
 * takes slots whose pid is its own (both read atomically: a slot's pid is
 * written before its LIVE state is published). */
#include "format/sink_int.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define SL_SLOTS 16 /* files open at once: windows waiting x parts; more go unlisted */

enum { SL_FREE, SL_FILLING, SL_LIVE, SL_DROPPING };

struct sl_slot {
	atomic_int state;
	atomic_int pid; /* whose file: a forked or vfork()ed child's are not its parent's */
	char path[PATH_MAX];
};

static struct sl_slot sl_slots[SL_SLOTS];
static atomic_int sl_dying; /* the pid of the process in _exit(), or 0 */
/* 1 in a forked child (exec starts a new image at 0).  Relaxed: written
 * while the child has one thread, before any thread it starts. */
static atomic_int sl_forked;

int tp_sink_live_add(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	if (dl + 1 + nl + 1 > PATH_MAX)
		return -1;
	for (int i = 0; i < SL_SLOTS; i++) {
		int want = SL_FREE;
		/* Acquire: a slot freed by tp_sink_live_del() is reused after its
		 * release. */
		if (!atomic_compare_exchange_strong_explicit(&sl_slots[i].state, &want,
							     SL_FILLING, memory_order_acquire,
							     memory_order_relaxed))
			continue;
		struct sl_slot *s = &sl_slots[i];
		int me = (int)getpid();
		/* Relaxed: published by the LIVE store below. */
		atomic_store_explicit(&s->pid, me, memory_order_relaxed);
		memcpy(s->path, dir, dl);
		s->path[dl] = '/';
		memcpy(s->path + dl + 1, name, nl + 1);
		/* Publishes the path (partner: the dropper's exchange); seq_cst
		 * with the load of sl_dying below (see the top). */
		atomic_store_explicit(&s->state, SL_LIVE, memory_order_seq_cst);
		if (atomic_load_explicit(&sl_dying, memory_order_seq_cst) == me)
			unlink(s->path);
		return i;
	}
	return -1;
}

int tp_sink_live_dying(void)
{
	/* seq_cst: partner of the dropper's store (see the top). */
	return atomic_load_explicit(&sl_dying, memory_order_seq_cst) == (int)getpid();
}

void tp_sink_live_del(int i)
{
	if (i < 0 || i >= SL_SLOTS)
		return;
	int want = SL_LIVE;
	/* Release: the next filler's acquire sees this use finished.  Fails
	 * only when the exiting thread took the slot: it stays taken. */
	atomic_compare_exchange_strong_explicit(&sl_slots[i].state, &want, SL_FREE,
						memory_order_release, memory_order_relaxed);
}

void tp_sink_live_drop(void)
{
	if (!atomic_load_explicit(&sl_forked, memory_order_relaxed))
		return; /* the program itself: its cut window is for recover */
	int me = (int)getpid();
	atomic_store_explicit(&sl_dying, me, memory_order_seq_cst);
	for (int i = 0; i < SL_SLOTS; i++) {
		struct sl_slot *s = &sl_slots[i];
		/* seq_cst: after the store of sl_dying (see the top).  The pid
		 * read after the state's acquire is the published one, or that
		 * of a later filler of the slot, whose pid the CAS then checks
		 * again through its state (LIVE means its path is complete). */
		if (atomic_load_explicit(&s->state, memory_order_seq_cst) != SL_LIVE ||
		    atomic_load_explicit(&s->pid, memory_order_relaxed) != me)
			continue;
		int want = SL_LIVE;
		/* Acquire for the path (partner: tp_sink_live_add()'s store). */
		if (atomic_compare_exchange_strong_explicit(&s->state, &want, SL_DROPPING,
							    memory_order_seq_cst,
							    memory_order_seq_cst))
			unlink(s->path);
	}
}

void tp_sink_live_forget(void)
{
	/* A forked child, one thread: the parent's files are not its own. */
	int me = (int)getpid();
	for (int i = 0; i < SL_SLOTS; i++)
		if (atomic_load_explicit(&sl_slots[i].pid, memory_order_relaxed) != me)
			atomic_store_explicit(&sl_slots[i].state, SL_FREE, memory_order_relaxed);
	atomic_store_explicit(&sl_dying, 0, memory_order_relaxed);
	atomic_store_explicit(&sl_forked, 1, memory_order_relaxed);
}
