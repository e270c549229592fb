/* A lock-free single-producer single-consumer ring of fixed-size records.
 *
 * The producer is the thread that owns the ring (the hot path); the consumer
 * is the flush thread.  head and tail are free-running 64-bit counters; the
 * slot of counter c is c & mask.  The producer keeps a private bound (limit:
 * the tail it last saw plus the ring's size) and reloads the shared tail only
 * when head reaches it, so the common write touches no cache line the
 * consumer writes, and tests room with one compare.
 *
 * A full ring drops the record and counts it in `dropped`: the producer never
 * waits.  Drops are data, written into the trace by the flush thread.
 *
 * Memory: the slots are reserved whole but only their first
 * TP_RING_FIRST_BYTES are made resident at creation; the flush thread makes
 * the rest resident ahead of the producer (tp_ring_prefault()), so that a
 * thread that records a few events costs 64 KiB, not the whole ring, and
 * the hot path stays as it was (on a kernel without MADV_POPULATE_WRITE, the
 * whole ring is made resident at creation, as before).  A drained ring whose
 * thread has exited gives its pages back (tp_ring_destroy()). */
#ifndef TP_COLLECTOR_RING_H
#define TP_COLLECTOR_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/record.h"

/* How far ahead of the head the producer prefetches: 16 records, 1 KiB. */
#define TP_RING_PREFETCH_AHEAD 16
/* Resident at creation: 1024 records. */
#define TP_RING_FIRST_BYTES (64u * 1024u)

struct tp_ring {
	/* Producer side, one cache line. */
	_Alignas(64) _Atomic uint64_t head; /* next slot to write */
	uint64_t limit;			    /* head may grow up to this without a look at tail */
	_Atomic uint64_t dropped;	    /* records lost to a full ring */
	uint64_t wake_next;		    /* no high-water wake before head reaches this */
	/* Immutable after creation; on the producer's line, which the hot path
	 * reads anyway. */
	uint64_t mask;
	struct tp_record *slots;
	/* Not the ring's: struct tp_thread's flag (collector/hot.h), set by
	 * the owner thread while it writes into this ring, so that a signal
	 * handler that records in the middle of a write drops its record
	 * instead of corrupting the slot.  Here because the write touches this
	 * line anyway: one cache line less to reload on a cold call. */
	uint32_t writing;
	/* Of `dropped`, the records lost because their write came from a
	 * signal handler that interrupted a write on the same thread (not a
	 * full ring: raising the ring size does not help).  Fills the line. */
	_Atomic uint64_t dropped_interrupted;
	/* Consumer side, its own cache line. */
	_Alignas(64) _Atomic uint64_t tail; /* next slot to read */
	/* Slots [0, resident) are resident: set by the creating thread before
	 * the ring is published, then by the flush thread only. */
	uint64_t resident;
};

/* Allocates a ring of `nslots` records (a power of two >= 16) with mmap,
 * TP_RING_FIRST_BYTES of it resident.  Returns 0 or -errno. */
int tp_ring_init(struct tp_ring *r, uint64_t nslots);
/* Unmaps the slots (idempotent).  Afterwards the ring reads as empty: head,
 * tail and dropped keep their values, so the accounting is unchanged; the
 * producer must never write to it again. */
void tp_ring_destroy(struct tp_ring *r);
/* Consumer (flush thread): makes more of the slots resident when the
 * producer's first lap gets near the end of the resident part: at least
 * twice as much, and twice what the head has used.  Never blocks the
 * producer, which may write concurrently (MADV_POPULATE_WRITE faults the
 * pages in without changing their contents). */
void tp_ring_prefault(struct tp_ring *r);
/* Resident bytes of the slots, for tests. */
uint64_t tp_ring_resident_bytes(const struct tp_ring *r);

/* Producer, slow path of tp_ring_room(): reloads tail, wakes the flush
 * thread when the ring is at least half full (the high-water mark), and sets
 * the private limit to the next half ring or the end of the room, whichever
 * comes first.  So it runs at most once per half ring of records, and wakes
 * at most once per half ring: no lock, and one futex(FUTEX_WAKE) at most,
 * the flush thread's existing wake.  Preserves errno. */
int tp_ring_room_slow(struct tp_ring *r, uint64_t h, unsigned n);

/* The function tp_ring_room_slow() calls at the high-water mark (NULL: none).
 * Set by the flush thread's start; must be async-signal-safe and preserve
 * errno, since any recording thread, signal handlers included, calls it. */
void tp_ring_set_wake(void (*wake)(void));

/* Producer: whether n more records fit after head h.  Looks at tail only
 * when the private limit is reached (tp_ring_room_slow()). */
static inline __attribute__((always_inline)) int tp_ring_room(struct tp_ring *r, uint64_t h, unsigned n)
{
	if (__builtin_expect(h + n <= r->limit, 1))
		return 1;
	return tp_ring_room_slow(r, h, n);
}

/* Producer: reserves n consecutive records (n <= 1 + TP_REC_MAX_EXTRA).
 * Returns the counter of the first one, or -1 if the ring is full (the
 * caller then calls tp_ring_drop()).  Slots wrap: use tp_ring_slot(). */
static inline __attribute__((always_inline)) int64_t tp_ring_reserve(struct tp_ring *r, unsigned n)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	return tp_ring_room(r, h, n) ? (int64_t)h : -1;
}

static inline __attribute__((always_inline)) struct tp_record *tp_ring_slot(struct tp_ring *r, uint64_t c)
{
	return &r->slots[c & r->mask];
}

/* Producer: asks for the cache line TP_RING_PREFETCH_AHEAD records after
 * `slot` in a writable state ahead of time.  A slot was last read by the
 * consumer on another core, so its first store otherwise waits for that line;
 * fetched a few records early, the store finds it ready (measured in
 * bench/RESULTS.md).  A hint only: it orders nothing, a slot not yet consumed
 * is not harmed (the consumer merely reloads the line), and near the end of
 * the slots it points past them, which a prefetch may do (it never faults);
 * the first records after a wrap then go without. */
static inline __attribute__((always_inline)) void tp_ring_prefetch(const struct tp_record *slot)
{
#if defined(__x86_64__)
	/* PREFETCHW: executes as a NOP on CPUs that lack it. */
	__asm__ __volatile__("prefetchw %0" ::"m"(*(const char *)(slot + TP_RING_PREFETCH_AHEAD)));
#else
	__builtin_prefetch(slot + TP_RING_PREFETCH_AHEAD, 1, 3);
#endif
}

/* Producer: publishes n records reserved at h. */
static inline __attribute__((always_inline)) void tp_ring_commit(struct tp_ring *r, uint64_t h, unsigned n)
{
	/* Release pairs with the consumer's acquire load of head in
	 * tp_ring_consume(): the record contents are visible before the new
	 * head. */
	atomic_store_explicit(&r->head, h + n, memory_order_release);
}

/* Producer: counts one record lost to a full ring (or to a write it
 * interrupted).  Only the producer writes `dropped`: a relaxed load and
 * store, no locked instruction; the flush thread reads it relaxed. */
static inline void tp_ring_drop(struct tp_ring *r)
{
	atomic_store_explicit(&r->dropped,
			      atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Producer: counts one record lost because a signal handler recorded while
 * its thread was writing (hot.h's `writing`), in `dropped` and in
 * `dropped_interrupted`.  Same ordering as tp_ring_drop(). */
static inline void tp_ring_drop_interrupted(struct tp_ring *r)
{
	tp_ring_drop(r);
	atomic_store_explicit(&r->dropped_interrupted,
			      atomic_load_explicit(&r->dropped_interrupted, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Consumer: calls fn(rec, nextra_records_follow, ctx) for each complete record
 * group (a record and its extras, contiguous in a temporary copy when they
 * wrap), then frees the slots.  Returns the number of groups consumed. */
typedef void (*tp_ring_fn)(const struct tp_record *rec, void *ctx);
uint64_t tp_ring_consume(struct tp_ring *r, tp_ring_fn fn, void *ctx);

/* Consumer: as tp_ring_consume(), but fn(rec, n, ctx) may refuse a group of n
 * records by returning 0: the group and the ones after it stay in the ring.
 * Returns the number of records (not groups) taken. */
typedef int (*tp_ring_take_fn)(const struct tp_record *rec, unsigned n, void *ctx);
uint64_t tp_ring_take(struct tp_ring *r, tp_ring_take_fn fn, void *ctx);

#endif
