/* Rotation: TRACEPROF_NUM_TRACES_TO_KEEP.  The collector remembers, in
 * order, the files this process wrote; after each save it deletes its own
 * oldest files until `keep` remain.  It never deletes a file it did not
 * write, nor one held by a TRACEPROF_ON_SAVE command still running on it:
 * that one goes when the command ends, if it is still over the limit.
 * Flush thread only (and the exiting thread once the flush thread stopped,
 * collector/flush.h). */
#ifndef TP_COLLECTOR_ROTATE_H
#define TP_COLLECTOR_ROTATE_H

#include <stdint.h>

/* Records a new file and applies the limit (keep < 0: keep all). */
void tp_rotate_saved(const char *path, int64_t keep);

/* held = 1: a command is still running on path (collector/onsave.c), so
 * rotation passes it over; held = 0: it ended, and rotation applies the
 * limit again.  Returns 1 when that deleted path itself. */
int tp_rotate_hold(const char *path, int held);

/* Deletes path now and forgets it (e.g. after a successful upload with
 * keep == 0).  Returns 0 or -errno. */
int tp_rotate_remove(const char *path);

/* In a forked child: the parent's files are the parent's. */
void tp_rotate_forget(void);

#endif
