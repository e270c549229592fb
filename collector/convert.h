/* Turning drained records into trace events (flush thread only). */
#ifndef TP_COLLECTOR_CONVERT_H
#define TP_COLLECTOR_CONVERT_H

#include "collector/record.h"
#include "collector/thread.h"
#include "format/writer.h"

/* Per-thread flush-side state for pairing marker start/finish. */
struct tp_marker_stack;
void tp_marker_stack_free(struct tp_marker_stack *s);

/* Writes the event(s) of one record group to out: API calls through the
 * decoder (collector/cuda_decode.h), markers, and NVTX records
 * (collector/nvtx_decode.h).  A
 * marker start writes nothing yet: its finish writes the pair. */
void tp_convert_record(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		       int64_t pid);

/* Events whose "cat" left out their categories since the process started
 * (the footer's categories_lost): the process keeps 256 distinct lists of
 * categories.  Flush thread. */
uint64_t tp_convert_categories_lost(void);

/* Writes complete events for markers still open at the end of a window, as
 * ending at end_ns with args {"unfinished":true}. */
void tp_convert_close_markers(struct tp_writer *out, struct tp_thread *t, int64_t pid,
			      uint64_t end_ns);

#endif
