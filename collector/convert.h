/* Turning drained records into trace events (flush thread only): the one
 * dispatcher from record kind to its source's decoder,
 * collector/<source>_decode.c. */
#ifndef TP_COLLECTOR_CONVERT_H
#define TP_COLLECTOR_CONVERT_H

#include "collector/record.h"
#include "collector/thread.h"
#include "format/writer.h"

/* Writes the event(s) of one record group to out, through the decoder of
 * its kind: CUDA API calls (collector/cuda_decode.h), markers, instants,
 * counters and steps (collector/markers_decode.h), NVTX
 * (collector/nvtx_decode.h), PyTorch's operators
 * (collector/torch_ops_decode.h).  A start writes nothing yet: its end
 * writes the pair. */
void tp_convert_record(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		       int64_t pid);

/* Writes complete events for t's markers, NVTX ranges and ops still open at
 * the end of a window, as ending at end_ns with args {"unfinished":true}:
 * each decoder's close. */
void tp_convert_close_markers(struct tp_writer *out, struct tp_thread *t, int64_t pid,
			      uint64_t end_ns);

#endif
