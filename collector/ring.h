/* A lock-free single-producer single-consumer ring of fixed-size records.
 *
 * The producer is the thread that owns the ring (the hot path); the consumer
 * is the flush thread.  head and tail are free-running 64-bit counters; the
 * slot of counter c is c & mask.  The producer keeps a private copy of tail
 * (cached_tail) and reloads the shared one only when the ring looks full, so
 * the common write touches no cache line the consumer writes.
 *
 * A full ring drops the record and counts it in `dropped`: the producer never
 * waits.  Drops are data, written into the trace by the flush thread. */
#ifndef TP_COLLECTOR_RING_H
#define TP_COLLECTOR_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "collector/record.h"

struct tp_ring {
	/* Producer side, one cache line. */
	_Alignas(64) _Atomic uint64_t head; /* next slot to write */
	uint64_t cached_tail;		    /* producer's last view of tail */
	_Atomic uint64_t dropped;	    /* records lost to a full ring */
	_Atomic uint64_t produced;	    /* records offered, kept or dropped */
	/* Consumer side, its own cache line. */
	_Alignas(64) _Atomic uint64_t tail; /* next slot to read */
	/* Immutable after creation. */
	_Alignas(64) uint64_t mask;
	struct tp_record *slots;
};

/* Allocates a ring of `nslots` records (a power of two >= 16) with mmap.
 * Returns 0 or -errno. */
int tp_ring_init(struct tp_ring *r, uint64_t nslots);
void tp_ring_destroy(struct tp_ring *r);

/* Producer: reserves n consecutive records (n <= 1 + TP_REC_MAX_EXTRA).
 * Returns a pointer to the first slot index, or -1 if the ring is full (the
 * caller then calls tp_ring_drop()).  Slots wrap: use tp_ring_slot(). */
static inline __attribute__((always_inline)) int64_t tp_ring_reserve(struct tp_ring *r, unsigned n)
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (__builtin_expect(h + n - r->cached_tail > r->mask + 1, 0)) {
		/* Acquire pairs with the consumer's release store of tail in
		 * tp_ring_consume(): the consumer has finished reading the slots we
		 * are about to overwrite. */
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (h + n - r->cached_tail > r->mask + 1)
			return -1;
	}
	return (int64_t)h;
}

static inline __attribute__((always_inline)) struct tp_record *tp_ring_slot(struct tp_ring *r, uint64_t c)
{
	return &r->slots[c & r->mask];
}

/* Producer: asks for the cache line of slot c in a writable state ahead of
 * time.  A slot was last read by the consumer on another core, so its first
 * store otherwise waits for that line; fetched a few records early, the
 * store finds it ready (measured in bench/RESULTS.md).  A hint only: it
 * orders nothing, and a slot not yet consumed is not harmed (the consumer
 * merely reloads the line). */
static inline __attribute__((always_inline)) void tp_ring_prefetch(struct tp_ring *r, uint64_t c)
{
#if defined(__x86_64__)
	/* PREFETCHW: executes as a NOP on CPUs that lack it. */
	__asm__ __volatile__("prefetchw %0" ::"m"(*(const char *)&r->slots[c & r->mask]));
#else
	__builtin_prefetch(&r->slots[c & r->mask], 1, 3);
#endif
}

/* How far ahead of the head the producer prefetches: 16 records, 1 KiB. */
#define TP_RING_PREFETCH_AHEAD 16

/* Producer: publishes n records reserved at h.  `produced` counts logical
 * records (1 per event, extras not counted). */
static inline __attribute__((always_inline)) void tp_ring_commit(struct tp_ring *r, uint64_t h, unsigned n)
{
	/* Only the producer writes these counters; relaxed read-modify-write by a
	 * plain load and store avoids a locked instruction. */
	atomic_store_explicit(&r->produced,
			      atomic_load_explicit(&r->produced, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	/* Release pairs with the consumer's acquire load of head in
	 * tp_ring_consume(): the record contents are visible before the new
	 * head. */
	atomic_store_explicit(&r->head, h + n, memory_order_release);
}

static inline void tp_ring_drop(struct tp_ring *r)
{
	atomic_store_explicit(&r->produced,
			      atomic_load_explicit(&r->produced, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&r->dropped,
			      atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Consumer: calls fn(rec, nextra_records_follow, ctx) for each complete record
 * group (a record and its extras, contiguous in a temporary copy when they
 * wrap), then frees the slots.  Returns the number of groups consumed. */
typedef void (*tp_ring_fn)(const struct tp_record *rec, void *ctx);
uint64_t tp_ring_consume(struct tp_ring *r, tp_ring_fn fn, void *ctx);

#endif
