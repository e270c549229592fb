/* Storage of raw records that the flush thread owns: the drain's buffer
 * between the per-thread rings and the writer.
 *
 * The flush thread moves records out of a ring at memory speed (a copy of 64
 * bytes each) into the ring's thread's queue of chunks, and converts them
 * from there at the writer's speed.  So formatting and compression no longer
 * decide how fast the rings empty: a burst lands in the store, and the writer
 * catches up afterwards.
 *
 * A chunk is TP_STORE_CHUNK_BYTES of mmap'd memory holding whole record
 * groups (a record and its extras never straddle two chunks).  Every chunk
 * mapped, in a queue or kept free for reuse, counts against one budget,
 * TRACEPROF_MAX_BUFFER_MB: past it, tp_store_take() leaves the records in the
 * ring, which then fills and drops on the producer's side, counted as
 * before.  Idle chunks beyond TP_STORE_KEEP_FREE go back to the system, so a
 * drained store costs at most that much.
 *
 * Flush thread only, no locking. */
#ifndef TP_COLLECTOR_STORE_H
#define TP_COLLECTOR_STORE_H

#include <stdint.h>

#include "collector/ring.h"

#define TP_STORE_CHUNK_BYTES (1u << 20)
/* Idle chunks kept mapped for the next burst (4 MiB). */
#define TP_STORE_KEEP_FREE 4

struct tp_store_chunk;

/* One thread's stored records, oldest first. */
struct tp_store_queue {
	struct tp_store_chunk *first, *last;
	uint64_t records; /* records (with extras) held */
};

/* Sets the budget in bytes (0: no storage; the flush thread then converts
 * straight from the rings, as before the store existed). */
void tp_store_configure(uint64_t max_bytes);
/* Whether the budget allows any storage at all. */
int tp_store_enabled(void);

/* Moves whole groups from r into q while the budget allows.  Returns the
 * records moved. */
uint64_t tp_store_take(struct tp_store_queue *q, struct tp_ring *r);

/* Calls fn(rec, ctx) for the oldest groups of q, at most max_groups of them,
 * and gives emptied chunks back.  Returns the groups handed over. */
uint64_t tp_store_convert(struct tp_store_queue *q, tp_ring_fn fn, void *ctx,
			  uint64_t max_groups);

/* Bytes mapped now, and the most ever mapped (for the footer and tests). */
uint64_t tp_store_bytes(void);
uint64_t tp_store_peak_bytes(void);

/* After fork, in the child: the parent's chunks may be in any state (its
 * flush thread may have been moving records); forget them all (they leak,
 * copy-on-write pages of the parent's) and start empty. */
void tp_store_after_fork_child(void);

#endif
