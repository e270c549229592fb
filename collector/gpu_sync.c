/* Synchronization events on CUDA events (Event Sync, Stream Wait Event):
 * what they waited on.  As Kineto, each CUDA event's last record (the stream
 * that recorded it and CUPTI's correlation of the cudaEventRecord) is kept,
 * and a sync on it gets Kineto's wait_on_* args. */
#include <string.h>

#include "collector/gpu_internal.h"
#include "collector/gpu_map.h"
#include "common/clock.h"

/* CUDA event (context, id; event_key()) -> its last record: CUPTI
 * correlation | stream << 32; aux = the time it was noted. */
static struct tp_gpu_map events;

/* How long a CUDA event's record is kept for the waits on it. */
#define EVENT_KEEP_NS 60000000000ull

/* CUPTI's numbering of the sync types that wait on a CUDA event. */
#define SYNC_EVENT_SYNC 1
#define SYNC_STREAM_WAIT_EVENT 2

/* Nonzero (the map's empty key is 0). */
static uint64_t event_key(uint32_t context, uint32_t event)
{
	return 1ull << 63 | (uint64_t)(context & 0x7fffffffu) << 32 | event;
}

void tp_gpu_sync_reset(void)
{
	tp_gpu_map_free(&events);
}

void tp_gpu_sync_note_record(uint32_t context, uint32_t event, uint32_t stream, uint32_t corr)
{
	tp_gpu_map_put(&events, event_key(context, event), (uint64_t)stream << 32 | corr,
		       tp_clock_monotonic_ns());
}

void tp_gpu_sync_wait_on(struct tp_gpu_event *e, uint32_t event)
{
	/* CUPTI writes a record's CUDA_EVENT record before the syncs that wait
	 * on it (buffers are in time order). */
	uint64_t *rec = tp_gpu_map_get(&events, event_key(e->context, event), NULL);
	e->wait_event = event;
	if (rec) {
		e->wait_stream = (int32_t)(*rec >> 32);
		e->wait_record = (uint32_t)*rec;
	}
}

const char *tp_gpu_sync_name(unsigned t)
{
	static const char *const s[] = { "Unknown", "Event Sync", "Stream Wait Event",
					 "Stream Sync", "Context Sync" };
	return t < sizeof(s) / sizeof(s[0]) ? s[t] : "Unknown";
}

unsigned tp_gpu_sync_args(struct tp_arg *args, unsigned n, const struct tp_gpu_event *e)
{
	const char *k = tp_gpu_sync_name(e->sync_type);
	args[n++] = TP_ARG(str, "cuda_sync_kind", k, strlen(k), 1);
	if (e->sync_type == SYNC_EVENT_SYNC || e->sync_type == SYNC_STREAM_WAIT_EVENT) {
		args[n++] = TP_ARG(i64, "wait_on_stream", e->wait_stream);
		args[n++] = TP_ARG(i64, "wait_on_cuda_event_record_corr_id",
				   tp_gpu_corr_record_number(e->wait_record));
		args[n++] = TP_ARG(u64, "wait_on_cuda_event_id", e->wait_event);
	}
	return n;
}

static int keep_event(uint64_t k, uint64_t v, uint64_t a, void *ctx)
{
	(void)k;
	(void)v;
	return a >= *(uint64_t *)ctx;
}

void tp_gpu_sync_prune(uint64_t now_ns)
{
	/* CUDA events recorded long before: a wait on one is reported with
	 * its stream unknown, which bounds the map. */
	uint64_t old = now_ns > EVENT_KEEP_NS ? now_ns - EVENT_KEEP_NS : 0;
	tp_gpu_map_filter(&events, keep_event, &old);
}
