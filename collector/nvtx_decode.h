/* NVTX on the flush side: pairing range records into complete events, and
 * the registries of domain and thread names that preload/nvtx.c fills.
 *
 * preload/nvtx.c writes one TP_REC_RANGE record per NVTX call:
 *   arg[0] domain (tp_nvtx_domain_add(); 0: the default domain), arg[1]
 *   enum tp_nvtx_op,
 *   arg[2] the nesting level (push, pop) or the range id (start, end),
 *   arg[3] the NVTX category; the message in the extras (push, start, mark).
 * Pairing happens here rather than on the program's threads, so that the
 * producer keeps no range stack: a push/pop pair is matched by thread and
 * level, a start/end pair by range id, whichever thread ends it. */
#ifndef TP_COLLECTOR_NVTX_DECODE_H
#define TP_COLLECTOR_NVTX_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "collector/record.h"
#include "collector/thread.h"
#include "format/writer.h"

enum tp_nvtx_op {
	TP_NVTX_COMPLETE = 0, /* start..end of the record itself */
	TP_NVTX_PUSH = 1,
	TP_NVTX_POP = 2,
	TP_NVTX_START = 3,
	TP_NVTX_END = 4,
	TP_NVTX_MARK = 5,
};

/* Registers a domain name (cut to 127 bytes); returns the domain's id for
 * records (the address of its name, never freed), or 0 when out of memory.
 * Any thread, lock-free; any number of domains. */
uint64_t tp_nvtx_domain_add(const char *name, size_t len);

/* The name of domain id (from a record), or NULL for 0 (flush thread). */
const char *tp_nvtx_domain_name(uint64_t id);

/* nvtxNameOsThread: names thread tid from now on, recording or not.  Any
 * thread, lock-free; the last name given wins.  The process keeps 1024
 * names (the same name given to a thread again takes no room); past them a
 * name is not kept and is counted (tp_nvtx_thread_names_lost()). */
void tp_nvtx_thread_name_set(int64_t tid, const char *name, size_t len);

/* How many names tp_nvtx_thread_name_set() could not keep since the
 * process started (the footer's thread_names_lost).  Any thread. */
uint64_t tp_nvtx_thread_names_lost(void);

/* Copies the name given to tid into out; returns 0, or -1 when none. */
int tp_nvtx_thread_name_get(int64_t tid, char *out, size_t size);

/* Flush thread: one TP_REC_RANGE record of thread t. */
void tp_nvtx_convert(struct tp_writer *out, struct tp_thread *t, const struct tp_record *r,
		     int64_t pid);

/* Flush thread, at the end of a window: writes t's ranges opened up to
 * end_ns and still open as ending at end_ns with "unfinished":true, forgets
 * them, and applies a name given to t with nvtxNameOsThread. */
void tp_nvtx_close(struct tp_writer *out, struct tp_thread *t, int64_t pid, uint64_t end_ns);

/* Forgets all pairing state (tests; after fork). */
void tp_nvtx_reset(void);

#endif
