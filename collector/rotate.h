/* Rotation: TRACEPROF_NUM_TRACES_TO_KEEP.  The collector remembers, in
 * order, the files this process wrote and the window each belongs to;
 * after each save it deletes its own oldest windows until `keep` windows
 * remain.  All parts of a window (TRACEPROF_MAX_FILE_MB) go together, or
 * stay together.  It never deletes a file it did not write, nor a window
 * with a file held by a TRACEPROF_ON_SAVE command still running on it: that
 * window goes when the command ends, if it is still over the limit.
 *
 * Deletions are relative to the folder's descriptor taken when the file was
 * written (unlinkat), never to its path: a chdir() of the program or a
 * symlink swapped in the path cannot redirect them.  The path is the key
 * the on-save plugin knows the file by.
 *
 * Flush thread only (and the exiting thread once the flush thread stopped,
 * collector/flush.h). */
#ifndef TP_COLLECTOR_ROTATE_H
#define TP_COLLECTOR_ROTATE_H

#include <stdint.h>

#include "common/fd.h"

/* Records a new file, part of window `window`, and applies the limit (keep
 * < 0: keep all).  dir (taken over; may be NULL or hold -1: the path is used
 * then) is the folder's descriptor and name the file's name in it. */
void tp_rotate_saved(const char *path, struct tp_fd *dir, const char *name, uint64_t window,
		     int64_t keep);

/* held = 1: a command is still running on path (collector/onsave.c), so
 * rotation passes its window over; held = 0: it ended, and rotation applies
 * the limit again.  Returns 1 when that deleted path itself. */
int tp_rotate_hold(const char *path, int held);

/* Deletes path now and forgets it (e.g. after a successful upload with
 * keep == 0).  Returns 0 or -errno. */
int tp_rotate_remove(const char *path);

/* In a forked child: the parent's files are the parent's.  Resets to empty
 * without freeing or closing anything: the parent's flush thread may have
 * been in the middle of changing this state when the program forked, so
 * nothing of it can be trusted here (the old memory and descriptors leak in
 * the child, a few hundred bytes per file). */
void tp_rotate_forget(void);

#endif
