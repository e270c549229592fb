/* The one table from record kind to its decoder (flush thread only): each
 * source's records are decoded in collector/<source>_decode.c, beside its
 * capture in preload/<source>.c.  GPU activity does not come as records:
 * CUPTI's buffers are decoded by collector/cupti_decode.c. */
#include "collector/convert.h"

#include "collector/cuda_decode.h"
#include "collector/markers_decode.h"
#include "collector/nvtx_decode.h"
#include "collector/torch_ops_decode.h"

void tp_convert_record(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		       int64_t pid)
{
	switch (r->kind) {
	case TP_REC_API:
		tp_cuda_decode_record(out, r, pid, t->tid);
		break;
	case TP_REC_STEP:
		tp_markers_step(out, t, r, pid);
		break;
	case TP_REC_MARKER_BEGIN:
		tp_markers_push(t, r);
		break;
	case TP_REC_MARKER_END:
		tp_markers_finish(out, t, r, pid);
		break;
	case TP_REC_RANGE:
		tp_nvtx_convert(out, t, r, pid);
		break;
	case TP_REC_OP:
		tp_ops_convert(out, t, r, pid);
		break;
	case TP_REC_INSTANT:
		tp_markers_instant(out, t, r, pid);
		break;
	case TP_REC_COUNTER:
		tp_markers_counter(out, t, r, pid);
		break;
	default:
		break;
	}
}

void tp_convert_close_markers(struct tp_writer *out, struct tp_thread *t, int64_t pid,
			      uint64_t end_ns)
{
	tp_markers_close(out, t, pid, end_ns);
	tp_nvtx_close(out, t, pid, end_ns);
	tp_ops_close(out, t, pid, end_ns);
}
