/* CUDA API records (TP_REC_API) into trace events, on the flush thread
 * (collector/cuda_decode.c): collector/convert.c's decoder of that kind. */
#ifndef TP_COLLECTOR_CUDA_DECODE_H
#define TP_COLLECTOR_CUDA_DECODE_H

#include <stdint.h>

#include "collector/record.h"
#include "format/writer.h"

/* Writes the complete event of an API record, args included; corr, when not
 * 0, is its "correlation" arg (collector/gpu.h), written right after
 * "result". */
void tp_cuda_decode_event(struct tp_writer *out, const struct tp_record *r, int64_t pid,
			  int64_t tid, uint64_t start_ns, uint64_t end_ns, uint64_t corr);

/* Whether the call may have caused GPU activity that CUPTI links to it
 * (only those API events are numbered for correlation). */
int tp_cuda_decode_correlates(const struct tp_record *r);

#endif
