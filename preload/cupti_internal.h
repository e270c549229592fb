/* What the files of the CUPTI capture side share with one another, and
 * nothing else includes; they know CUPTI's and CUDA's types.  The rest of
 * the library sees preload/cupti.h.  Who does what:
 *
 *   preload/cupti.c          state, loading and subscribing (under the
 *                            client lock), giving CUPTI up, correlation ids,
 *                            process exit and fork
 *   preload/cupti_kinds.c    which activity kinds are on, and when
 *   preload/cupti_load.c     finding and opening libcupti, its symbol table
 *   preload/cupti_buffers.c  CUPTI's two buffer callbacks: buffers from and
 *                            to the collector's queue
 *   preload/cupti_devices.c  device properties, through the real driver
 *   preload/resolve/cupti_hook.c     the interposed cuptiActivityRegisterCallbacks
 *
 * The buffers are queued, walked, decoded and freed on the collector side
 * (collector/cupti_queue.c, cupti_decode.c), whose flush plugin
 * (collector/cupti_plugin.c) calls back up only through the source
 * preload/cupti.c registers (struct tp_cupti_source). */
#ifndef TP_PRELOAD_CUPTI_INTERNAL_H
#define TP_PRELOAD_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"

/* ---- cupti.c ---- */

enum tp_cupti_state {
	TP_CUPTI_ST_IDLE = 0,	  /* not loaded (no successful cuInit yet, or off) */
	TP_CUPTI_ST_LOADING = 1,  /* tp_cupti_on_cuinit() at work */
	TP_CUPTI_ST_ACTIVE = 2,	  /* recording GPU activity */
	TP_CUPTI_ST_FAILED = 3,	  /* host-only mode; the warning was given */
	TP_CUPTI_ST_STOPPED = 4,  /* process exit: records copied out, CUPTI untouched */
	TP_CUPTI_ST_YIELDING = 5, /* another client registers: giving CUPTI up */
	TP_CUPTI_ST_YIELDED = 6,  /* CUPTI belongs to another client; our buffers parsed */
};

/* Written by cupti.c only, with release (or seq-cst) stores. */
extern _Atomic int tp_cupti_state;

/* The wrappers stop pushing correlation ids. */
void tp_cupti_stop_pushing(void);

/* Host-only mode from now on, with the one message of the process (client
 * lock held). */
void tp_cupti_give_up(const char *why);

/* ---- cupti_kinds.c (the _locked ones with the client lock held) ---- */

/* Whether our kinds are on: a hint when read without the lock. */
int tp_cupti_kinds_on(void);

/* Turns our kinds on or off.  Returns 0, or -1 after tp_cupti_give_up(). */
int tp_cupti_kinds_set_locked(int on);

/* Turns every kind we enabled off. */
void tp_cupti_kinds_off_locked(void);

/* Whether CUPTI should record now, by the schedule. */
int tp_cupti_kinds_wanted(void);

/* ---- cupti_load.c ---- */

/* libcupti's functions, resolved by tp_cupti_open(); written before the
 * state leaves TP_CUPTI_ST_LOADING (release), read after. */
struct tp_cupti_api {
	void *h;
	__typeof__(&cuptiGetVersion) GetVersion;
	__typeof__(&cuptiGetResultString) GetResultString;
	__typeof__(&cuptiActivityRegisterTimestampCallback) RegisterTimestampCallback;
	__typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
	__typeof__(&cuptiActivityEnable) Enable;
	__typeof__(&cuptiActivityDisable) Disable;
	__typeof__(&cuptiActivityFlushAll) FlushAll;
	__typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
	__typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords;
	__typeof__(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId;
	__typeof__(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId;
};
extern struct tp_cupti_api tp_cupti_fn;

/* Opens libcupti and resolves tp_cupti_fn.  Returns 0, or -1 with the
 * reason in err. */
int tp_cupti_open(char *err, size_t errlen);

/* CUPTI's text for r ("unknown CUPTI error" when it has none). */
const char *tp_cupti_result_str(CUptiResult r);

/* A lookup with libc's dlsym, never our hook (preload/resolve/cuda_dlsym.c). */
void *tp_cupti_real_sym(void *h, const char *name);

/* ---- cupti_buffers.c ---- */

/* CUPTI's buffer callbacks: buffers from and to collector/cupti_queue.c. */
void CUPTIAPI tp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI tp_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid);

/* ---- cupti_devices.c ---- */

/* Reads the devices' properties through the real driver (the thread that
 * loads CUPTI, right after cuInit) and reports them to the collector
 * (tp_cupti_report_devices()). */
void tp_cupti_query_devices(void);

#endif
