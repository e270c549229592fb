/* The CUPTI source's flush-thread plugin (collector/flush.h): each pass asks
 * the capture side to follow the schedule and decodes what CUPTI handed
 * over (collector/cupti_queue.c); each window gets its GPU events
 * (collector/gpu.h); the footer says how CUPTI fared, from what the capture
 * side reported (tp_cupti_report_*(), collector/cupti_queue.h). */
#include <stdatomic.h>

#include "collector/control.h"
#include "collector/cupti_queue.h"
#include "collector/flush.h"
#include "collector/gpu.h"
#include "common/clock.h"

/* The footer's text: a string that never changes once published (release
 * store; the footer's acquire load pairs with it, so that the text's bytes
 * come before its pointer). */
static _Atomic(const char *) status;
static _Atomic uint32_t version; /* relaxed: a number alone */

/* The devices, written once by the thread that loaded CUPTI before
 * devs_ready's release store; the flush thread reads them after its
 * acquire load and hands them to collector/gpu_devices.c. */
static struct tp_gpu_device devs[TP_GPU_MAX_DEVICES];
static int devs_ok[TP_GPU_MAX_DEVICES];
static _Atomic int devs_ready;
static int props_done; /* flush thread */

static uint64_t last_flush_ns; /* flush thread */

void tp_cupti_report_status(const char *text)
{
	atomic_store_explicit(&status, text, memory_order_release);
}

void tp_cupti_report_version(uint32_t v)
{
	atomic_store_explicit(&version, v, memory_order_relaxed);
}

void tp_cupti_report_devices(const struct tp_gpu_device *d, const int *ok, int n)
{
	if (atomic_load_explicit(&devs_ready, memory_order_relaxed))
		return; /* once: the flush thread may be reading them */
	for (int i = 0; i < n && i < TP_GPU_MAX_DEVICES; i++) {
		devs[i] = d[i];
		devs_ok[i] = ok[i];
	}
	/* Pairs with the acquire load in cupti_device_properties(). */
	atomic_store_explicit(&devs_ready, 1, memory_order_release);
}

static void cupti_pass(uint64_t now_ns)
{
	if (!tp_cupti_queue_opened())
		return;
	/* Completed buffers only, every 500 ms; CUPTI fills one before
	 * handing it over, and a window forces the rest out when it closes. */
	int how = 0;
	if (now_ns - last_flush_ns > 500000000ull) {
		last_flush_ns = now_ns;
		how = TP_CUPTI_SYNC_FLUSH;
	}
	tp_cupti_queue_drain(how);
	/* Nothing records: GPU events older than 10 s cannot belong to a window
	 * still waiting to be written. */
	if (!tp_action_records(tp_control_action(tp_control_current_step())))
		tp_gpu_prune(now_ns, 10000000000ull);
}

static void cupti_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
				int64_t pid)
{
	if (!tp_cupti_queue_opened())
		return;
	tp_cupti_queue_drain(TP_CUPTI_SYNC_FLUSH | TP_CUPTI_SYNC_FORCED);
	tp_gpu_window_events(out, first_ns, last_ns, pid);
}

/* Every TP_FL_DISK_NS while a window records: CUPTI's completed buffers
 * now, and their events into the file, so that a record CUPTI can hand over
 * is on disk within about half a second.  The pass's own flush is put off
 * by as much: CUPTI is asked as often as without the streaming. */
static void cupti_window_stream(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
				int64_t pid)
{
	if (!tp_cupti_queue_opened())
		return;
	last_flush_ns = tp_clock_monotonic_ns();
	tp_cupti_queue_drain(TP_CUPTI_SYNC_FLUSH);
	tp_gpu_stream_events(out, first_ns, last_ns, pid);
}

static void cupti_footer(struct tp_doc *d)
{
	const char *s = atomic_load_explicit(&status, memory_order_acquire);
	uint32_t v = atomic_load_explicit(&version, memory_order_relaxed);
	tp_doc_object(d, "gpu");
	tp_doc_str(d, "cupti", s ? s : "off");
	if (v)
		tp_doc_u64(d, "cupti_version", v);
	tp_doc_u64(d, "cupti_records_dropped", tp_cupti_queue_dropped());
	tp_doc_u64(d, "cupti_buffers_refused", tp_cupti_queue_refused());
	tp_doc_u64(d, "gpu_events_lost", tp_gpu_lost());
	tp_doc_end(d);
}

static const struct tp_doc *cupti_device_properties(void)
{
	if (!props_done && atomic_load_explicit(&devs_ready, memory_order_acquire)) {
		props_done = 1;
		for (int i = 0; i < TP_GPU_MAX_DEVICES; i++)
			if (devs_ok[i])
				tp_gpu_set_device(i, &devs[i]);
	}
	return props_done ? tp_gpu_device_properties() : NULL;
}

const struct tp_flush_plugin tp_cupti_plugin = {
	.name = "cupti",
	.pass = cupti_pass,
	.window_events = cupti_window_events,
	.window_stream = cupti_window_stream,
	.footer = cupti_footer,
	.device_properties = cupti_device_properties,
};
