/* The GPU timeline's pending events and windows (collector/gpu.h): GPU
 * events wait here, as collector/cupti_decode.c made them, until the window
 * that holds them or their launching call is written; then come their
 * flows, gpu_user_annotation spans and track names.  Flush thread only, no
 * locks; except the correlation switches (tp_gpu_flows_*()), atomics thrown
 * by the thread that changes CUPTI's state.  The other parts are listed in
 * collector/gpu_internal.h. */
#include "collector/gpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collector/annos.h"
#include "collector/gpu_internal.h"
#include "common/log.h"

/* See tp_gpu_flows_start() (collector/gpu.h).  Release stores by the
 * thread that changes CUPTI's state; relaxed loads on the flush thread,
 * ordered after them by its acquire of the ring that carried the record. */
static _Atomic int flows_on;
static _Atomic uint64_t flows_until = UINT64_MAX;

void tp_gpu_flows_start(void)
{
	atomic_store_explicit(&flows_until, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&flows_on, 1, memory_order_release);
}

void tp_gpu_flows_stop(uint64_t ticks)
{
	atomic_store_explicit(&flows_until, ticks, memory_order_release);
}

void tp_gpu_flows_off(void)
{
	atomic_store_explicit(&flows_on, 0, memory_order_release);
	atomic_store_explicit(&flows_until, UINT64_MAX, memory_order_relaxed);
}

int tp_gpu_flows_at(uint64_t start_ticks)
{
	return atomic_load_explicit(&flows_on, memory_order_relaxed) &&
	       start_ticks < atomic_load_explicit(&flows_until, memory_order_relaxed);
}

/* At most this many parsed events wait for their window (about 100 MB);
 * beyond it the oldest are lost and counted. */
#define MAX_PENDING (1u << 20)

static struct {
	struct tp_gpu_event *ev;
	size_t n, cap;
	uint64_t lost;
	int64_t clock_offset;
	uint64_t next_flow; /* the last flow id handed out */
} G;

struct track {
	uint32_t dev;
	int32_t stream;
	uint64_t last_ns; /* its newest event written (start), for W's window test */
};

/* What the window being written has so far: the launches and GPU tracks of
 * the events streamed into it while it recorded (tp_gpu_stream_events()),
 * then of those written at its end, whose gpu_user_annotation spans and
 * track names tp_gpu_window_events() writes.  A window discarded without a
 * save leaves entries here: the next window's end keeps only those inside
 * its own times (windows do not overlap). */
static struct {
	struct tp_gpu_launch *launches;
	size_t nlaunch, caplaunch;
	struct track tracks[512];
	int ntracks;
} W;

void tp_gpu_reset(void)
{
	free(G.ev);
	memset(&G, 0, sizeof(G));
	free(W.launches);
	memset(&W, 0, sizeof(W));
	tp_gpu_corr_reset();
	tp_gpu_sync_reset();
	tp_gpu_names_reset();
	tp_gpu_devices_reset();
}

void tp_gpu_set_clock_offset(int64_t offset_ns)
{
	G.clock_offset = offset_ns;
}

uint64_t tp_gpu_pending(void)
{
	return G.n;
}

uint64_t tp_gpu_lost(void)
{
	return G.lost;
}

uint64_t tp_gpu_host_ns(uint64_t gpu_ts)
{
	return (uint64_t)((int64_t)gpu_ts - G.clock_offset);
}

struct tp_gpu_event *tp_gpu_event_new(unsigned kind, uint64_t start, uint64_t end,
				      uint32_t device, uint32_t context, uint32_t stream,
				      uint32_t corr)
{
	if (G.n == G.cap) {
		if (G.cap >= MAX_PENDING) {
			/* Lose the oldest event to keep the newest. */
			memmove(G.ev, G.ev + 1, (G.n - 1) * sizeof(*G.ev));
			G.n--;
			G.lost++;
		} else {
			size_t cap = G.cap ? G.cap * 2 : 4096;
			struct tp_gpu_event *ev = realloc(G.ev, cap * sizeof(*ev));
			if (!ev) {
				G.lost++;
				return NULL;
			}
			G.ev = ev;
			G.cap = cap;
		}
	}
	struct tp_gpu_event *e = &G.ev[G.n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->start = tp_gpu_host_ns(start);
	e->end = tp_gpu_host_ns(end);
	e->device = device;
	e->context = context;
	e->stream = stream;
	e->corr = corr;
	return e;
}

/* Adds launch l to the window's list, growing it (a launch that finds no
 * memory is left out of the gpu_user_annotation spans). */
static void add_launch(const struct tp_gpu_launch *l)
{
	if (W.nlaunch == W.caplaunch) {
		size_t c = W.caplaunch ? W.caplaunch * 2 : 1024;
		struct tp_gpu_launch *p = realloc(W.launches, c * sizeof(*p));
		if (p) {
			W.launches = p;
			W.caplaunch = c;
		}
	}
	if (W.nlaunch < W.caplaunch)
		W.launches[W.nlaunch++] = *l;
}

static void add_track(uint32_t dev, int32_t stream, uint64_t at_ns)
{
	for (int t = 0; t < W.ntracks; t++)
		if (W.tracks[t].dev == dev && W.tracks[t].stream == stream) {
			if (at_ns > W.tracks[t].last_ns)
				W.tracks[t].last_ns = at_ns;
			return;
		}
	if (W.ntracks < (int)(sizeof(W.tracks) / sizeof(W.tracks[0])))
		W.tracks[W.ntracks++] = (struct track){ dev, stream, at_ns };
}

/* The process and thread names of the GPU tracks used in the window
 * [first_ns, ...]; forgets them. */
static void write_tracks(struct tp_writer *out, uint64_t first_ns)
{
	uint64_t devs = 0;
	for (int t = 0; t < W.ntracks; t++)
		if (W.tracks[t].last_ns >= first_ns && W.tracks[t].dev < 64)
			devs |= 1ull << W.tracks[t].dev;
	for (uint32_t d = 0; d < 64; d++) {
		if (!(devs & (1ull << d)))
			continue;
		char name[32];
		tp_format(name, sizeof(name), "GPU %u", d);
		/* After every host process, as Kineto sorts them. */
		tp_writer_process(out, TP_GPU_PID(d), name, NULL, TP_GPU_SORT_BASE + d);
	}
	for (int t = 0; t < W.ntracks; t++) {
		if (W.tracks[t].last_ns < first_ns)
			continue;
		char name[32];
		tp_format(name, sizeof(name), "stream %d", W.tracks[t].stream);
		tp_writer_thread(out, TP_GPU_PID(W.tracks[t].dev), W.tracks[t].stream, name,
				 W.tracks[t].stream);
	}
	W.ntracks = 0;
}

/* Writes e (its launching call l, in the window when in_api) with its
 * arrow, and notes its launch and track for the window's end. */
static void write_one(struct tp_writer *out, const struct tp_gpu_event *e,
		      const struct tp_gpu_link *l, int in_api, int64_t pid)
{
	uint32_t dev = tp_gpu_event_device(e);
	uint64_t corr = in_api ? l->number : 0;
	/* One id per arrow, not the correlation: a graph launch causes
	 * several kernels, and a viewer binds an id's start to one end
	 * only.  32 bits: traceprof merge moves each input's ids to its
	 * own range above them.  Writers that bind arrows to slices use
	 * the correlation instead (tp_gpu_write_event()). */
	uint64_t flow = in_api ? (G.next_flow = G.next_flow % TP_FLOW_ID_MAX + 1) : 0;
	tp_gpu_write_event(out, e, dev, corr);
	if (in_api) {
		int64_t tid = (int64_t)(l->ext >> TP_GPU_EXT_TICK_BITS);
		tp_gpu_write_flow(out, TP_EV_FLOW_OUT, flow, pid, tid, l->api_ns);
		tp_gpu_write_flow(out, TP_EV_FLOW_IN, flow, TP_GPU_PID(dev), (int32_t)e->stream,
				  e->start);
		if (e->kind != TP_GPU_SYNC)
			add_launch(&(struct tp_gpu_launch){ tid, l->api_ns, dev, (int32_t)e->stream,
							    e->start, e->end });
	}
	add_track(dev, (int32_t)e->stream, e->start > l->api_ns ? e->start : l->api_ns);
}

void tp_gpu_stream_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			  int64_t pid)
{
	size_t k = 0;
	tp_gpu_corr_window_begin(); /* for a link through a hidden runtime call */
	for (size_t i = 0; i < G.n; i++) {
		struct tp_gpu_event *e = &G.ev[i];
		struct tp_gpu_link l;
		/* Only an event whose launching call is already in the window:
		 * the window's end would write it here too, the same way (its
		 * times only widen).  The rest waits for the end.  A call seen
		 * only through CUPTI's record of a runtime call traceprof cannot
		 * interpose (the runtime inside cuBLAS) is linked as at the end,
		 * once the calls that record may hold are drained. */
		if (!tp_gpu_corr_find_streaming(e->corr, &l) || !l.has_api || l.api_ns < first_ns ||
		    l.api_ns > last_ns) {
			G.ev[k++] = *e;
			continue;
		}
		write_one(out, e, &l, 1, pid);
		tp_gpu_corr_done(&l);
	}
	G.n = k;
}

void tp_gpu_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			  int64_t pid)
{
	size_t k = 0;
	tp_gpu_corr_window_begin();
	for (size_t i = 0; i < G.n; i++) {
		struct tp_gpu_event *e = &G.ev[i];
		struct tp_gpu_link l;
		tp_gpu_corr_find(e->corr, &l);
		int in_api = l.has_api && l.api_ns >= first_ns && l.api_ns <= last_ns;
		int in_gpu = e->start >= first_ns && e->start <= last_ns;
		if (!in_api && !in_gpu) {
			/* Older than this window: no later window wants it. */
			if (e->start > last_ns || (l.has_api && l.api_ns > last_ns))
				G.ev[k++] = *e;
			else
				tp_gpu_corr_done(&l);
			continue;
		}
		write_one(out, e, &l, in_api, pid);
		tp_gpu_corr_done(&l);
	}
	G.n = k;
	/* Launches streamed into a window discarded since are not this one's. */
	size_t n = 0;
	for (size_t i = 0; i < W.nlaunch; i++)
		if (W.launches[i].api >= first_ns && W.launches[i].api <= last_ns)
			W.launches[n++] = W.launches[i];
	tp_gpu_write_annotations(out, W.launches, n, pid);
	W.nlaunch = 0;
	/* Launches up to this window's end were written: their annotations
	 * are not needed again. */
	tp_annos_drop_before(last_ns + 1);
	write_tracks(out, first_ns);
	tp_gpu_corr_window_end(last_ns);
	tp_gpu_sync_prune(last_ns);
}

void tp_gpu_prune(uint64_t now_ns, uint64_t keep_ns)
{
	tp_gpu_sync_prune(now_ns);
	uint64_t before = now_ns > keep_ns ? now_ns - keep_ns : 0;
	size_t k = 0;
	for (size_t i = 0; i < G.n; i++)
		if (G.ev[i].end >= before)
			G.ev[k++] = G.ev[i];
	G.n = k;
	tp_annos_drop_before(before);
	tp_gpu_corr_prune(before);
}
