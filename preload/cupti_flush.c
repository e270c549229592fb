/* The CUPTI source's flush-thread plugin (collector/flush.h): each pass
 * follows the schedule with the activity kinds and parses what CUPTI handed
 * over; each window gets its GPU events (collector/gpu.h); the footer says
 * how CUPTI fared. */
#include "collector/control.h"
#include "collector/flush.h"
#include "collector/gpu.h"
#include "preload/cupti_internal.h"

static uint64_t last_flush_ns;

/* Whether the flush thread has GPU records to parse: CUPTI records for us,
 * or did until exit or another client took it. */
static int has_records(int st)
{
	return st == TP_CUPTI_ST_ACTIVE || st == TP_CUPTI_ST_STOPPED || st == TP_CUPTI_ST_YIELDED;
}

static void cupti_pass(uint64_t now_ns)
{
	int st = atomic_load_explicit(&tp_cupti_state, memory_order_acquire);
	if (!has_records(st))
		return;
	if (st == TP_CUPTI_ST_ACTIVE)
		tp_cupti_follow_schedule();
	/* Completed buffers only; CUPTI fills one before handing it over, and a
	 * window forces the rest out when it closes. */
	if (st == TP_CUPTI_ST_ACTIVE && now_ns - last_flush_ns > 500000000ull) {
		last_flush_ns = now_ns;
		tp_cupti_fn.FlushAll(0);
	}
	tp_cupti_buffers_collect(0);
	/* Nothing records: GPU events older than 10 s cannot belong to a window
	 * still waiting to be written. */
	if (!tp_action_records(tp_control_action(tp_control_current_step())))
		tp_gpu_prune(now_ns, 10000000000ull);
}

static void cupti_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
				int64_t pid)
{
	if (!has_records(atomic_load_explicit(&tp_cupti_state, memory_order_acquire)))
		return;
	tp_cupti_buffers_collect(1);
	tp_gpu_window_events(out, first_ns, last_ns, pid);
}

static void cupti_footer(struct tp_doc *d)
{
	tp_doc_object(d, "gpu");
	tp_doc_str(d, "cupti", tp_cupti_status_text());
	if (tp_cupti_version())
		tp_doc_u64(d, "cupti_version", tp_cupti_version());
	tp_doc_u64(d, "cupti_records_dropped", tp_cupti_buffers_dropped());
	tp_doc_u64(d, "cupti_buffers_refused", tp_cupti_buffers_refused());
	tp_doc_u64(d, "gpu_events_lost", tp_gpu_lost());
	tp_doc_end(d);
}

const struct tp_flush_plugin tp_cupti_plugin = {
	.name = "cupti",
	.init = tp_cupti_init,
	.pass = cupti_pass,
	.window_events = cupti_window_events,
	.footer = cupti_footer,
	.device_properties = tp_cupti_device_properties,
};
