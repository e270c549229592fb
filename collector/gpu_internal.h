/* What the files of the GPU timeline share with one another, and nothing
 * else includes (flush thread only: no locks).  The public side is
 * collector/gpu.h.  Who does what:
 *
 *   collector/cupti_decode.c  CUPTI's activity records -> the calls below
 *                             (the only collector file that knows CUPTI)
 *   collector/gpu.c           pending GPU events; a window's events, flows
 *                             and tracks; pruning
 *   collector/gpu_write.c     one GPU event as a Kineto-style slice
 *   collector/gpu_corr.c      GPU event -> the API call that launched it
 *   collector/gpu_sync.c      syncs on CUDA events: what they waited on
 *   collector/gpu_devices.c   devices, contexts, occupancy, deviceProperties
 *   collector/gpu_annos.c     gpu_user_annotation spans
 *   collector/gpu_names.c     kernel names (demangled, interned)
 *   collector/gpu_map.c       the hash map all of them use */
#ifndef TP_COLLECTOR_GPU_INTERNAL_H
#define TP_COLLECTOR_GPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "collector/gpu.h"

enum tp_gpu_kind { TP_GPU_KERNEL = 1, TP_GPU_MEMCPY = 2, TP_GPU_MEMSET = 3, TP_GPU_SYNC = 4 };

/* One GPU event waiting for its window. */
struct tp_gpu_event {
	uint64_t start, end; /* CLOCK_MONOTONIC ns */
	uint64_t bytes;
	const char *name; /* interned (kernels only) */
	uint32_t kind, device, context, stream, corr;
	union {
		struct { /* kernels */
			int32_t grid[3], block[3];
		};
		/* Event Sync and Stream Wait Event: the CUDA event waited on,
		 * the stream that recorded it (-1: not known) and CUPTI's
		 * correlation of the cudaEventRecord that did (0: not known). */
		struct {
			int32_t wait_stream;
			uint32_t wait_event, wait_record;
		};
	};
	uint32_t regs, shared;
	uint8_t copy_kind, src_kind, dst_kind;
	uint16_t mem_kind;
	uint32_t sync_type;
};

/* ---- gpu.c ---- */

/* A GPU timestamp (CUPTI's clock) in CLOCK_MONOTONIC ns
 * (tp_gpu_set_clock_offset()). */
uint64_t tp_gpu_host_ns(uint64_t gpu_ts);

/* A new pending GPU event with the fields every kind has (times in the GPU
 * clock); the caller fills the rest.  NULL when out of memory (counted in
 * tp_gpu_lost()). */
struct tp_gpu_event *tp_gpu_event_new(unsigned kind, uint64_t start, uint64_t end,
				      uint32_t device, uint32_t context, uint32_t stream,
				      uint32_t corr);

/* ---- gpu_write.c ---- */

/* Writes e as a complete event on GPU dev's stream track.  corr: the
 * launching call's correlation number in this trace, or 0. */
void tp_gpu_write_event(struct tp_writer *out, const struct tp_gpu_event *e, uint32_t dev,
			uint64_t corr);

/* One end of an arrow (Kineto's "ac2g"): kind TP_EV_FLOW_OUT at the
 * launching call, TP_EV_FLOW_IN at the GPU event. */
void tp_gpu_write_flow(struct tp_writer *out, int kind, uint64_t id, int64_t pid, int64_t tid,
		       uint64_t ts);

/* ---- gpu_corr.c ---- */

/* What a window needs to know of a GPU event's launching call. */
struct tp_gpu_link {
	uint64_t ext;	   /* its external id; 0: none known */
	int has_api;	   /* its API event was noted (tp_gpu_note_api()) */
	uint64_t api_ns;   /* then: when it started */
	uint64_t number;   /* then: its correlation number */
	uint64_t *noted;   /* the id's note time, cleared once written; or NULL */
};

/* Finds the call CUPTI numbered corr (linking it through CUPTI's record of
 * a hidden runtime call when needed).  Returns 1 when its external id is
 * known. */
int tp_gpu_corr_find(uint32_t corr, struct tp_gpu_link *l);
/* The same while a window records (tp_gpu_stream_events(), every 0.5 s):
 * a link through a hidden runtime call's record waits until every call of
 * ours it may hold is noted (gpu_corr.c, link_outer()), and is then the one
 * tp_gpu_corr_find() would make at the window's end. */
int tp_gpu_corr_find_streaming(uint32_t corr, struct tp_gpu_link *l);

/* The call's GPU event was written (or dropped): its mapping can go. */
void tp_gpu_corr_done(struct tp_gpu_link *l);

/* The correlation number in this trace of the call CUPTI numbered corr, or
 * -1 when it has none here. */
int64_t tp_gpu_corr_record_number(uint32_t corr);

/* CUPTI numbered corr the call that pushed our external id ext. */
void tp_gpu_corr_note_external(uint32_t corr, uint64_t ext);

/* CUPTI's record of a runtime call (corr; start in host ns, duration and
 * CUPTI's thread id), kept when it came without an id of ours.  Returns 1
 * when kept. */
int tp_gpu_corr_note_outer(uint32_t corr, uint64_t start_ns, uint64_t dur_ns,
			   uint32_t thread);

/* Before a window is written, and before GPU events are streamed at a
 * drain: sorts the noted API events (those new since the last time). */
void tp_gpu_corr_window_begin(void);

/* Forgets what no window after one ending at last_ns can need. */
void tp_gpu_corr_window_end(uint64_t last_ns);

/* Forgets API events and mappings older than before (ns). */
void tp_gpu_corr_prune(uint64_t before);

void tp_gpu_corr_reset(void);

/* ---- gpu_sync.c ---- */

/* The CUDA event (context, event) was recorded on stream by the call CUPTI
 * numbered corr. */
void tp_gpu_sync_note_record(uint32_t context, uint32_t event, uint32_t stream, uint32_t corr);

/* Fills e's wait fields (a sync of type Event Sync or Stream Wait Event on
 * CUDA event `event`) from the last record of that event. */
void tp_gpu_sync_wait_on(struct tp_gpu_event *e, uint32_t event);

/* The name of sync type t (CUPTI's numbering; "Unknown" past it). */
const char *tp_gpu_sync_name(unsigned t);

/* Appends a sync's args after the common ones; returns the new count. */
unsigned tp_gpu_sync_args(struct tp_arg *args, unsigned n, const struct tp_gpu_event *e);

/* Forgets records of CUDA events noted before now_ns minus a minute. */
void tp_gpu_sync_prune(uint64_t now_ns);

void tp_gpu_sync_reset(void);

/* ---- gpu_devices.c ---- */

/* Context ctx runs on device dev (learned from kernels and copies). */
void tp_gpu_note_context(uint32_t ctx, uint32_t dev);

/* The device of e: its own, else its context's, else 0. */
uint32_t tp_gpu_event_device(const struct tp_gpu_event *e);

/* Appends Kineto's occupancy args of kernel e on device dev, when the
 * device is known. */
void tp_gpu_kernel_occupancy(struct tp_arg *args, unsigned *n, const struct tp_gpu_event *e,
			     uint32_t dev);

void tp_gpu_devices_reset(void);

/* ---- gpu_annos.c ---- */

/* A written GPU event (not a sync) whose launching call is in the window. */
struct tp_gpu_launch {
	int64_t tid;
	uint64_t api; /* the call's start */
	uint32_t dev;
	int32_t stream;
	uint64_t start, end;
};

/* Writes the gpu_user_annotation spans of host process pid's annotations
 * over these launches (reordered). */
void tp_gpu_write_annotations(struct tp_writer *out, struct tp_gpu_launch *ls, size_t nl,
			      int64_t pid);

/* ---- gpu_names.c ---- */

void tp_gpu_names_reset(void);

#endif
