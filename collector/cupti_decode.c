/* CUPTI activity records decoded into the GPU timeline (tp_gpu_parse_record(),
 * collector/gpu.h): kernels, copies, memsets and syncs become pending GPU
 * events; CUDA event records, external correlations and runtime API records
 * feed the correlation (collector/gpu_corr.c) and the syncs' wait fields
 * (collector/gpu_sync.c).
 *
 * The one collector file that knows CUPTI's types: it reads the toolkit's
 * cupti_activity.h, and calls nothing of CUPTI's (collector/cupti_queue.c
 * walks CUPTI's buffers and hands each record here, on the flush thread), so
 * it is unit-tested with records built by hand (test_cupti_convert,
 * test_cupti_fields). */
#include "collector/gpu_internal.h"

#if defined(__has_include)
#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define TP_GPU_HAVE_CUPTI 1
#endif
#endif

/* Everything down to tp_gpu_parse_record() reads CUPTI's records: built
 * without the toolkit's CUPTI headers (CUDA_HOME without a toolkit), none of
 * it is used. */
#ifdef TP_GPU_HAVE_CUPTI
/* A runtime API record that came without an id of ours is kept for
 * collector/gpu_corr.c's link to a hidden outer call; one with ours needs
 * nothing more.  Driver records are never needed: every driver call that
 * can cause GPU work is interposed and pushes its id, so it is never a
 * hidden outer call. */
static int parse_api(const void *record)
{
	const CUpti_ActivityAPI *r = record;
	if (r->kind != CUPTI_ACTIVITY_KIND_RUNTIME)
		return 0;
	uint64_t dur = r->end > r->start ? r->end - r->start : 0;
	return tp_gpu_corr_note_outer(r->correlationId, tp_gpu_host_ns(r->start), dur,
				      r->threadId);
}

static int parse_kernel(const void *record)
{
	const CUpti_ActivityKernel10 *k = record;
	struct tp_gpu_event *e = tp_gpu_event_new(TP_GPU_KERNEL, k->start, k->end, k->deviceId,
						  k->contextId, k->streamId, k->correlationId);
	if (!e)
		return 0;
	e->name = tp_gpu_intern_kernel_name(k->name);
	e->grid[0] = k->gridX;
	e->grid[1] = k->gridY;
	e->grid[2] = k->gridZ;
	e->block[0] = k->blockX;
	e->block[1] = k->blockY;
	e->block[2] = k->blockZ;
	e->regs = k->registersPerThread;
	e->shared = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory);
	tp_gpu_note_context(k->contextId, k->deviceId);
	return 1;
}

static int parse_memcpy(const void *record)
{
	const CUpti_ActivityMemcpy6 *m = record;
	struct tp_gpu_event *e = tp_gpu_event_new(TP_GPU_MEMCPY, m->start, m->end, m->deviceId,
						  m->contextId, m->streamId, m->correlationId);
	if (!e)
		return 0;
	e->bytes = m->bytes;
	e->copy_kind = m->copyKind;
	e->src_kind = m->srcKind;
	e->dst_kind = m->dstKind;
	tp_gpu_note_context(m->contextId, m->deviceId);
	return 1;
}

static int parse_memset(const void *record)
{
	const CUpti_ActivityMemset4 *m = record;
	struct tp_gpu_event *e = tp_gpu_event_new(TP_GPU_MEMSET, m->start, m->end, m->deviceId,
						  m->contextId, m->streamId, m->correlationId);
	if (!e)
		return 0;
	e->bytes = m->bytes;
	e->mem_kind = m->memoryKind;
	tp_gpu_note_context(m->contextId, m->deviceId);
	return 1;
}

static int parse_sync(const void *record)
{
	const CUpti_ActivitySynchronization2 *s = record;
	/* The record has no device: the context's, learned from the kernels
	 * and copies, at write time. */
	struct tp_gpu_event *e = tp_gpu_event_new(TP_GPU_SYNC, s->start, s->end, UINT32_MAX,
						  s->contextId, s->streamId, s->correlationId);
	if (!e)
		return 0;
	e->sync_type = (uint32_t)s->type;
	e->wait_stream = -1;
	if (s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE ||
	    s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT)
		tp_gpu_sync_wait_on(e, s->cudaEventId);
	return 1;
}

static int parse_cuda_event(const void *record)
{
	const CUpti_ActivityCudaEvent *c = record;
	/* Every version starts with these fields. */
	tp_gpu_sync_note_record(c->contextId, c->eventId, c->streamId, c->correlationId);
	return 1;
}

static int parse_external(const void *record)
{
	const CUpti_ActivityExternalCorrelation *x = record;
	if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
		return 0;
	tp_gpu_corr_note_external(x->correlationId, x->externalId);
	return 1;
}

/* The one table from record kind to decoder: the record's layout (its size,
 * for copying records out of CUPTI's buffers at exit) and the function that
 * reads it.  A kind not here is skipped.  The kinds CUPTI is asked for are
 * preload/cupti_kinds.c's. */
struct decoder {
	size_t size;
	int (*parse)(const void *record);
};
#define DEC(kind, type, fn) [kind] = { sizeof(type), fn }
static const struct decoder decoders[] = {
	DEC(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUpti_ActivityKernel10, parse_kernel),
	DEC(CUPTI_ACTIVITY_KIND_KERNEL, CUpti_ActivityKernel10, parse_kernel),
	DEC(CUPTI_ACTIVITY_KIND_MEMCPY, CUpti_ActivityMemcpy6, parse_memcpy),
	DEC(CUPTI_ACTIVITY_KIND_MEMSET, CUpti_ActivityMemset4, parse_memset),
	DEC(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUpti_ActivitySynchronization2, parse_sync),
	DEC(CUPTI_ACTIVITY_KIND_CUDA_EVENT, CUpti_ActivityCudaEvent, parse_cuda_event),
	DEC(CUPTI_ACTIVITY_KIND_DRIVER, CUpti_ActivityAPI, parse_api),
	DEC(CUPTI_ACTIVITY_KIND_RUNTIME, CUpti_ActivityAPI, parse_api),
	DEC(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUpti_ActivityExternalCorrelation,
	    parse_external),
};

static const struct decoder *decoder_of(const void *record)
{
	uint32_t kind = (uint32_t)((const CUpti_Activity *)record)->kind;
	if (kind >= sizeof(decoders) / sizeof(decoders[0]) || !decoders[kind].parse)
		return NULL;
	return &decoders[kind];
}
#endif

int tp_gpu_parse_record(const void *record)
{
#ifdef TP_GPU_HAVE_CUPTI
	const struct decoder *d = decoder_of(record);
	return d ? d->parse(record) : 0;
#else
	(void)record;
	return 0;
#endif
}

size_t tp_gpu_record_size(const void *record)
{
#ifdef TP_GPU_HAVE_CUPTI
	const struct decoder *d = decoder_of(record);
	return d ? (d->size + 7) & ~(size_t)7 : 0;
#else
	(void)record;
	return 0;
#endif
}
