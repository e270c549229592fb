/* CUDA API records (TP_REC_API) into trace events, on the flush thread
 * (collector/cuda_decode.c): collector/convert.c's decoder of that kind. */
#ifndef TP_COLLECTOR_CUDA_DECODE_H
#define TP_COLLECTOR_CUDA_DECODE_H

#include <stdint.h>

#include "collector/record.h"
#include "format/writer.h"

/* Writes the complete event of an API record of thread tid, args
 * included; a call that may have caused GPU work CUPTI links to it gets its
 * "correlation" number (collector/gpu.h), written right after "result". */
void tp_cuda_decode_record(struct tp_writer *out, const struct tp_record *r, int64_t pid,
			   int64_t tid);

#endif
