/* CUPTI's two buffer callbacks: the capture side's whole part in the
 * records' path.  They run on CUPTI's or the program's threads, take no lock
 * of ours (Kineto's deadlock with CUPTI's lock) and hand over to the
 * collector's queue (collector/cupti_queue.c), which owns the buffers: it
 * allocates them, the flush thread walks and decodes them
 * (collector/cupti_decode.c) and frees them, and it counts what was dropped. */
#include "collector/cupti_queue.h"
#include "preload/cupti_internal.h"

void CUPTIAPI tp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*buffer = tp_cupti_queue_alloc(size);
}

void CUPTIAPI tp_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid)
{
	(void)size;
	if (!buffer)
		return;
	size_t n = 0;
	if (tp_cupti_fn.GetNumDroppedRecords(ctx, stream, &n) != CUPTI_SUCCESS)
		n = 0;
	tp_cupti_queue_push(buffer, valid, n);
}
