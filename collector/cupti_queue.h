/* The GPU timeline's handoff from CUPTI to the flush thread
 * (collector/cupti_queue.c), and what the capture side (preload/cupti*.c)
 * reports for the footer (collector/cupti_plugin.c).
 *
 * The capture side loads CUPTI and answers its two buffer callbacks, on
 * CUPTI's or the program's threads: a buffer asked for comes from
 * tp_cupti_queue_alloc(), a completed one goes to tp_cupti_queue_push() and
 * the callback returns.  The flush thread walks the queued buffers, decodes
 * each record (collector/cupti_decode.c) and frees the buffer.  Every call
 * here runs down, from preload/ to collector/; the one way up is the
 * capture side's `sync` below, registered with tp_cupti_queue_open(). */
#ifndef TP_COLLECTOR_CUPTI_QUEUE_H
#define TP_COLLECTOR_CUPTI_QUEUE_H

#include <cupti_activity.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/gpu.h"

/* What tp_cupti_queue_open() is given, when CUPTI starts recording for us. */
struct tp_cupti_source {
	/* libcupti's own cuptiActivityGetNextRecord, the only way through a
	 * CUPTI buffer: a call into libcupti, not into preload/.  (The build
	 * needs the toolkit's CUPTI headers: the Makefile's preflight.) */
	CUptiResult(CUPTIAPI *next_record)(uint8_t *buffer, size_t valid, CUpti_Activity **record);
	/* The capture side's "CUPTI, now" (preload/cupti.c): switch the
	 * activity kinds as the schedule wants and, with TP_CUPTI_SYNC_FLUSH,
	 * make CUPTI hand over its completed buffers (with
	 * TP_CUPTI_SYNC_FORCED, its partly filled ones too), through
	 * tp_cupti_queue_push().  Does nothing once CUPTI is not ours (another
	 * client, exit).  Called on the flush thread only. */
	void (*sync)(int how);
};
#define TP_CUPTI_SYNC_FLUSH 1
#define TP_CUPTI_SYNC_FORCED 2

/* ---- the capture side (preload/cupti*.c) ---- */

/* The buffer callback's: a buffer of *size bytes for CUPTI, or NULL when
 * TP_CUPTI_QUEUE_MAX buffers are out already or memory is short (counted:
 * tp_cupti_queue_refused(); CUPTI then drops records and counts them).
 * Any thread; no lock. */
#define TP_CUPTI_QUEUE_MAX 32
uint8_t *tp_cupti_queue_alloc(size_t *size);

/* The completed-buffer callback's: `buffer` (from tp_cupti_queue_alloc())
 * holds `valid` bytes of records; `dropped` is what CUPTI says it dropped
 * for that buffer's context and stream (counted as data).  Any thread, no
 * lock, no allocation. */
void tp_cupti_queue_push(uint8_t *buffer, size_t valid, uint64_t dropped);

/* CUPTI records for us from now on: the flush thread may call src's
 * functions (src stays valid for the process). */
void tp_cupti_queue_open(const struct tp_cupti_source *src);

/* Exit, before CUPTI's own exit handlers: the flush thread calls CUPTI no
 * more.  Waits (bounded, 2 s) until it is out of its calls; call without
 * a lock the source's sync takes. */
void tp_cupti_queue_close(void);

/* Exit, after tp_cupti_queue_close() and CUPTI's last flush, on the
 * exiting thread: copies the records out of the queued buffers (with
 * next_record, while CUPTI is still there), so that the flush thread
 * decodes them without calling CUPTI. */
void tp_cupti_queue_copy_out(void);

/* In a forked child: forgets the parent's buffers and source. */
void tp_cupti_queue_forget(void);

/* ---- the flush thread (collector/cupti_plugin.c) ---- */

/* Whether a source was opened (and not forgotten). */
int tp_cupti_queue_opened(void);

/* Asks the source to sync (`how`: TP_CUPTI_SYNC_* or 0), then decodes
 * every queued buffer and every record copied out at exit, oldest first,
 * and frees them.  Flush thread only. */
void tp_cupti_queue_drain(int how);

/* Records CUPTI said it dropped, and buffers refused to it. */
uint64_t tp_cupti_queue_dropped(void);
uint64_t tp_cupti_queue_refused(void);

/* ---- what the capture side reports for the footer ---- */

/* The footer's "cupti" text: `text` must stay as it is for the process
 * (a literal, or a buffer written once before this call).  Any thread. */
void tp_cupti_report_status(const char *text);
/* CUPTI's version, once known. */
void tp_cupti_report_version(uint32_t version);
/* The devices' properties, read right after cuInit (index: CUPTI's
 * deviceId), once; the flush thread takes them in for deviceProperties. */
void tp_cupti_report_devices(const struct tp_gpu_device *devs, const int *ok, int n);

#endif
