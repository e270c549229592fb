/* Turning drained records into trace events (flush thread only). */
#ifndef TP_COLLECTOR_CONVERT_H
#define TP_COLLECTOR_CONVERT_H

#include "collector/record.h"
#include "collector/thread.h"
#include "format/writer.h"

/* What the CUDA module (preload/) plugs in to write API events: this file
 * and convert.c know nothing about CUDA (the GPU timeline's CUPTI decoder,
 * collector/cupti_decode.c, is the one collector file that reads CUPTI's
 * types).  Set once before recording. */
struct tp_api_decoder {
	/* Writes the complete event of an API record, args included; corr,
	 * when not 0, is its "correlation" arg (collector/gpu.h), written
	 * right after "result". */
	void (*write_event)(struct tp_writer *out, const struct tp_record *r, int64_t pid,
			    int64_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t corr);
	/* Optional: whether the call may have caused GPU activity that CUPTI
	 * links to it (only those API events are numbered for correlation).
	 * NULL: every API event is. */
	int (*correlates)(const struct tp_record *r);
	/* Optional: called when a window file is about to be closed (e.g. to
	 * write counters or flows it kept back).  May be NULL. */
	void (*window_end)(struct tp_writer *out, int64_t pid);
};
void tp_convert_set_api_decoder(const struct tp_api_decoder *d);

/* Per-thread flush-side state for pairing marker start/finish. */
struct tp_marker_stack;
void tp_marker_stack_free(struct tp_marker_stack *s);

/* Writes the event(s) of one record group to out: API calls through the
 * decoder above, markers, and NVTX records (collector/nvtx_decode.h).  A
 * marker start writes nothing yet: its finish writes the pair. */
void tp_convert_record(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		       int64_t pid);

/* Writes complete events for markers still open at the end of a window, as
 * ending at end_ns with args {"unfinished":true}. */
void tp_convert_close_markers(struct tp_writer *out, struct tp_thread *t, int64_t pid,
			      uint64_t end_ns);

#endif
