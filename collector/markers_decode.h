/* traceprof's markers, instants, counters and steps into trace events, on
 * the flush thread (collector/markers_decode.c): collector/convert.c's
 * decoder of those record kinds.  The capture side is preload/api.c (and
 * collector/control.c for the steps). */
#ifndef TP_COLLECTOR_MARKERS_DECODE_H
#define TP_COLLECTOR_MARKERS_DECODE_H

#include <stdint.h>

#include "collector/record.h"
#include "collector/thread.h"
#include "format/writer.h"

/* Per-thread flush-side state for pairing marker start/finish (hangs from
 * collector/fthread.h's `markers`). */
struct tp_marker_stack;
void tp_markers_free(struct tp_marker_stack *s);

/* TP_REC_MARKER_BEGIN: keeps the start on t's stack; it writes nothing yet,
 * its finish writes the pair. */
void tp_markers_push(struct tp_thread *t, const struct tp_record *r);

/* TP_REC_MARKER_END: the complete event of the most recent open start of
 * the same name, or an instant when there is none. */
void tp_markers_finish(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		       int64_t pid);

/* TP_REC_INSTANT, TP_REC_COUNTER, TP_REC_STEP (the ProfilerStep#N slice). */
void tp_markers_instant(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
			int64_t pid);
void tp_markers_counter(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
			int64_t pid);
void tp_markers_step(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		     int64_t pid);

/* Writes complete events for t's markers still open at the end of a
 * window, as ending at end_ns with args {"unfinished":true}. */
void tp_markers_close(struct tp_writer *out, struct tp_thread *t, int64_t pid, uint64_t end_ns);

/* Events whose "cat" left out their categories since the process started
 * (the footer's categories_lost): the process keeps 256 distinct lists of
 * categories.  Flush thread. */
uint64_t tp_markers_categories_lost(void);

#endif
