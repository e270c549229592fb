/* PyTorch's operators (TP_REC_OP, preload/torch_ops.c) as torch.profiler
 * writes them: a "cpu_op" slice with its External id, Sequence number and
 * Fwd thread id, and the "fwdbwd" arrow from a forward op to its autograd
 * node.  Flush thread. */
#ifndef TP_COLLECTOR_TORCH_OPS_DECODE_H
#define TP_COLLECTOR_TORCH_OPS_DECODE_H

#include <stdint.h>

#include "collector/record.h"
#include "collector/thread.h"
#include "format/writer.h"

void tp_ops_convert(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		    int64_t pid);

/* Draws t's pending arrow start when its op started by end_ns (the end
 * of the window being written). */
void tp_ops_close(struct tp_writer *out, struct tp_thread *t, int64_t pid, uint64_t end_ns);

#endif
