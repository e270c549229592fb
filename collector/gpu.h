/* The GPU timeline, collector side: GPU activity records decoded into
 * Kineto-style events, and the launch-to-kernel flow arrows (flush thread
 * only).
 *
 * Nothing here calls CUDA or CUPTI: the capture side (preload/cupti*.c)
 * loads CUPTI and hands every buffer it receives to the collector's queue
 * (collector/cupti_queue.c), which walks it and hands each record to
 * tp_gpu_parse_record().  That function (collector/cupti_decode.c) and the
 * queue are the only collector code that reads CUPTI's types, from the
 * toolkit's cupti_activity.h; the other parts (collector/gpu_internal.h
 * lists them) know GPU events only, so they are unit-tested with records
 * built by hand.
 *
 * Correlation.  An intercepted launch or copy pushes the external id
 * tp_gpu_ext_id(tid, start) around the real call, where start is the clock
 * ticks of its API record.  CUPTI's EXTERNAL_CORRELATION records map its own
 * correlation id to that external id; the API record, when it is converted
 * (collector/cuda_decode.c), is noted under the same id with its time and
 * gets a correlation number of ours, written in its args.  A GPU event whose CUPTI
 * correlation leads to a noted API record in the window gets the same
 * number as its "correlation" and a flow arrow from that API event, as
 * Kineto writes them: Holistic Trace Analysis pairs a launch with its kernel
 * by equal "correlation" args.  When the call that pushed the id ran inside
 * a CUDA call traceprof could not interpose (a static runtime), CUPTI's API
 * record of that call and the times of ours link the two (link_outer() in
 * collector/gpu_corr.c).  CUPTI's own numbers cannot be used: they are
 * not known yet when the API event is written. */
#ifndef TP_COLLECTOR_GPU_H
#define TP_COLLECTOR_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/layout.h"
#include "format/writer.h"
#include "format/trace.h"

/* The pid of GPU d's events.  Kineto uses the device index, so GPU 0 is
 * pid 0, which Perfetto reserves for the kernel's idle process (and its
 * maintainers advise against).  Linux pids stay below 2^22 (pid_max's
 * ceiling) and traceprof merge makes up pids from 2^30: 10^9 + d collides
 * with neither.  Holistic Trace Analysis tells GPU events by args.stream,
 * and DevTools, speedscope and Perfetto take any pid (measured: HTA's
 * analyses and both npm readers over such traces).  TP_GPU_PID_BASE is
 * common/layout.h's (scripts/layout.spec). */
#define TP_GPU_PID(d) ((int64_t)TP_GPU_PID_BASE + (int64_t)(d))

/* Bits 63..42: thread id (Linux pid_max is at most 2^22); bits 41..0: the low
 * ticks of the API record's start.  Unique per thread for 2^42 ticks (about
 * 24 minutes at 3 GHz), far longer than a launch waits for its kernel. */
#define TP_GPU_EXT_TICK_BITS 42
static inline uint64_t tp_gpu_ext_id(int64_t tid, uint64_t start_ticks)
{
	return ((uint64_t)tid << TP_GPU_EXT_TICK_BITS) |
	       (start_ticks & ((1ull << TP_GPU_EXT_TICK_BITS) - 1));
}

/* Which API records get a correlation number (collector/cuda_decode.c):
 * those that can cause GPU work and start while CUPTI records for us.  Both switches are
 * thrown by the program's thread that changes CUPTI's state, before the
 * change takes effect, and never by the flush thread's pass: a drain that
 * ran before that pass numbered nothing (a short run's launches under load)
 * or numbered the launches after a yield.  The ring orders them: a record
 * the thread writes after the switch reaches the flush thread (its acquire
 * of the ring) after the switch; records of other threads around it follow
 * the wrappers' own relaxed view of tp_cupti_corr_on (preload/cupti.h).
 *   tp_gpu_flows_start(): CUPTI records from now on (the loader, before any
 *     wrapper can push an id);
 *   tp_gpu_flows_stop(ticks): records that start at or after ticks get no
 *     number (another client took CUPTI);
 *   tp_gpu_flows_off(): no numbers at all (a forked child; unit tests). */
void tp_gpu_flows_start(void);
void tp_gpu_flows_stop(uint64_t ticks);
void tp_gpu_flows_off(void);
/* Whether an API record that started at start_ticks gets a number. */
int tp_gpu_flows_at(uint64_t start_ticks);

/* What one device looks like, as Kineto's deviceProperties lists it. */
struct tp_gpu_device {
	char name[256];
	uint64_t total_global_mem;
	int compute_major, compute_minor;
	int max_threads_per_block, max_threads_per_sm;
	int regs_per_block, warp_size;
	int shared_per_block, num_sms, regs_per_sm;
	int shared_per_block_optin, shared_per_sm;
	int max_blocks_per_sm;
};

#define TP_GPU_MAX_DEVICES 64

/* Forgets every event, mapping and device (tests; after fork). */
void tp_gpu_reset(void);

/* GPU timestamps minus this are CLOCK_MONOTONIC nanoseconds: 0 when CUPTI
 * uses our timestamp callback, CLOCK_REALTIME - CLOCK_MONOTONIC when it could
 * not be registered (CUPTI's own clock is CLOCK_REALTIME on Linux). */
void tp_gpu_set_clock_offset(int64_t offset_ns);

/* Parses one CUPTI activity record (a CUpti_Activity *; collector/
 * cupti_decode.c).  Returns 1 when it was kept, 0 when its kind is not one
 * of ours (driver API records, ...). */
int tp_gpu_parse_record(const void *record);

/* The bytes of a record tp_gpu_parse_record() reads, rounded up to 8 (so
 * that records copied one after another stay aligned); 0 for a kind it
 * does not decode.  For copying records out of CUPTI's buffers at exit
 * (collector/cupti_queue.c): the list of kinds lives in cupti_decode.c's
 * table only. */
size_t tp_gpu_record_size(const void *record);

/* Events parsed and kept but not yet written or discarded. */
uint64_t tp_gpu_pending(void);

/* Events discarded unwritten because the pending list was full. */
uint64_t tp_gpu_lost(void);

/* convert.c: an API record of thread tid that started at start_ticks
 * (start_ns once converted; it ended at end_ns) is being written into the
 * current window.  Returns the correlation number to write in its args, or 0
 * (no memory: write none; its GPU events then get none either). */
uint64_t tp_gpu_note_api(int64_t tid, uint64_t start_ticks, uint64_t start_ns, uint64_t end_ns);

/* Writes the GPU events, their flows, and the GPU tracks' metadata for the
 * window [first_ns, last_ns] of host process pid, then forgets what no later
 * window can need. */
void tp_gpu_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			  int64_t pid);

/* While the window [first_ns, last_ns so far] records, each time it is put
 * on disk (collector/parts.c, every TP_FL_DISK_NS): writes the GPU events
 * CUPTI has handed over whose launching call is already in the window, with
 * their flows, as its end would; they are not written again.  So that a
 * process that dies keeps them (the cut file, docs/guarantees.md).  The
 * rest (unlinked yet, or linked only through CUPTI's record of a hidden
 * runtime call) waits for the window's end. */
void tp_gpu_stream_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			  int64_t pid);

/* Forgets events and mappings older than now_ns - keep_ns (nothing is
 * recording, so no window can still want them). */
void tp_gpu_prune(uint64_t now_ns, uint64_t keep_ns);

/* Device properties, by device index (CUPTI's deviceId). */
void tp_gpu_set_device(int index, const struct tp_gpu_device *d);

/* Kineto's "deviceProperties": an array of objects, one per known device,
 * or NULL when no device is known.  Valid until the next
 * tp_gpu_set_device() or tp_gpu_reset(). */
const struct tp_doc *tp_gpu_device_properties(void);

/* Names a kernel by its mangled name, demangled when the process has a C++
 * runtime (__cxa_demangle); the result is interned for the process. */
const char *tp_gpu_intern_kernel_name(const char *mangled);

#endif
