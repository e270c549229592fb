/* The window state machine: which steps form a trace window, when a window
 * opens, closes, is saved or discarded, and which window a record joins.
 *
 * Pure: steps, the action of each step (the schedule, a trigger's capture or
 * a capture range: collector/control.c decides those) and flush passes go
 * in; decisions come out, through the two callbacks of struct tp_wsm_ops.
 * No threads, no I/O, no globals: the flush thread owns one machine
 * (collector/flush.c), a unit test owns as many as it likes
 * (test/unit/test_window.c).
 *
 * A window is the consecutive steps [first_step, last_step] between a
 * start_trace and a stop_trace of torch.profiler.profile's action table
 * (collector/schedule.h).  It is finalized (written or discarded by the
 * caller) two passes after it closed, so that records of its last step
 * still in flight on a preempted thread have a whole flush interval to
 * arrive; at exit, at once. */
#ifndef TP_COLLECTOR_WINDOW_H
#define TP_COLLECTOR_WINDOW_H

#include <stdint.h>

#include "collector/schedule.h"

/* Windows open at once (closed ones waiting for their stragglers included).
 * The per-thread statistics are indexed by window id modulo this. */
#define TP_MAX_OPEN_WINDOWS 16

struct tp_win {
	uint64_t id; /* 1, 2, ... in opening order */
	uint64_t first_step, last_step;
	int closed;	      /* last_step is known: no more steps join */
	int save;	      /* to be written when finalized (else discarded) */
	uint64_t closed_pass; /* pass at which it closed */
	void *data;	      /* the caller's (its files); never read here */
};

struct tp_wsm_ops {
	/* The action of a step (tp_control_action() in the library). */
	enum tp_action (*action)(void *ctx, uint64_t step);
	/* A window opens with its first step: the caller may set w->data.
	 * Returns 0, or -1 to drop the window (its records are then late). */
	int (*opened)(void *ctx, struct tp_win *w);
	/* A window is done: write it when w->save, else discard it; then w is
	 * gone.  Also for the oldest window when a new one needs its slot
	 * (TP_MAX_OPEN_WINDOWS): short steps, many windows waiting for their
	 * stragglers; a record of it still in flight is then counted late. */
	void (*finalize)(void *ctx, struct tp_win *w);
};

struct tp_wsm {
	const struct tp_wsm_ops *ops;
	void *ctx;
	uint64_t seen_step; /* transitions are applied up to this step */
	uint64_t pass;	    /* tp_wsm_pass() calls */
	uint64_t next_id;
	struct tp_win win[TP_MAX_OPEN_WINDOWS]; /* oldest first */
	int nwin;
};

/* Where a record goes (tp_wsm_record()). */
enum tp_wsm_fate {
	TP_WSM_IN = 0,	     /* into the window returned */
	TP_WSM_LATE = 1,     /* its step recorded, but its window is gone */
	TP_WSM_FILTERED = 2, /* its step does not record (the schedule) */
};

/* Starts the machine at `step` (the current step): a window opens with it
 * when that step records. */
void tp_wsm_init(struct tp_wsm *m, const struct tp_wsm_ops *ops, void *ctx, uint64_t step);

/* Forgets every window without a callback (a forked child: the parent's
 * windows are not its own). */
void tp_wsm_forget(struct tp_wsm *m);

/* Applies torch's transitions of every step after seen_step up to `step`:
 * windows open and close. */
void tp_wsm_advance(struct tp_wsm *m, uint64_t step);

/* A record of `step` arrives: advances to it, and returns the window it
 * joins (fate TP_WSM_IN), or NULL with the reason in *fate. */
struct tp_win *tp_wsm_record(struct tp_wsm *m, uint64_t step, enum tp_wsm_fate *fate);

/* A flush pass begins (counts the passes that finalize waits for). */
void tp_wsm_pass(struct tp_wsm *m);

/* Finalizes the windows closed at least two passes ago; all closed ones
 * when `all`. */
void tp_wsm_finalize(struct tp_wsm *m, int all);

/* Process exit (torch's stop()): advances to `step`, applies the exit
 * transition (a recording window closes and is saved; one that opened from
 * WARMUP is discarded), and finalizes every window. */
void tp_wsm_exit(struct tp_wsm *m, uint64_t step);

/* Whether window `id` is still held (not finalized). */
int tp_wsm_holds(const struct tp_wsm *m, uint64_t id);

/* Whether a window saves: a window to be saved in a process that recorded
 * nothing worth a file (no CUDA call, marker, NVTX range or step of its
 * own: a shell, a launcher) is not. */
static inline int tp_wsm_saves(const struct tp_win *w, int activity)
{
	return w->save && activity;
}

/* The byte cap of one part file: TRACEPROF_MAX_FILE_MB less room for the
 * metadata and footer written at the end (1/16 of it, at most 256 KiB). */
static inline uint64_t tp_wsm_part_cap(uint64_t max_file_mb)
{
	uint64_t cap = max_file_mb * 1024 * 1024;
	return cap - (cap / 16 < 262144 ? cap / 16 : 262144);
}

/* Whether the next record starts a new part: the current part passed the
 * cap.  Not after a write error (disk full): more parts would only fail
 * again, each with its own message. */
static inline int tp_wsm_new_part(uint64_t part_bytes, uint64_t cap, int write_error)
{
	return part_bytes > cap && !write_error;
}

#endif
