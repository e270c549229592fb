#include "collector/ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* 1 once MADV_POPULATE_WRITE was refused (a kernel older than 5.14): rings
 * are then made resident whole at creation, as before rings grew.  Relaxed:
 * a hint each creating thread may find out for itself. */
static _Atomic int ring_populate_whole;

static int ring_populate(struct tp_ring *r, uint64_t from, uint64_t to)
{
	if (to <= from)
		return 0;
	if (madvise((char *)r->slots + from * sizeof(struct tp_record),
		    (size_t)(to - from) * sizeof(struct tp_record), MADV_POPULATE_WRITE) < 0)
		return -errno;
	r->resident = to;
	return 0;
}

int tp_ring_init(struct tp_ring *r, uint64_t nslots)
{
	if (nslots < 16 || (nslots & (nslots - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	size_t bytes = (size_t)nslots * sizeof(struct tp_record);
	uint64_t first = TP_RING_FIRST_BYTES / sizeof(struct tp_record);
	if (first > nslots)
		first = nslots;
	int whole = atomic_load_explicit(&ring_populate_whole, memory_order_relaxed);
	/* The resident part is faulted in now, on the thread's first event,
	 * rather than one page fault per 64 records on the hot path later (a
	 * fault costs microseconds; measured in bench/); the flush thread keeps
	 * ahead of the producer from there. */
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (whole ? MAP_POPULATE : 0), -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->slots = p;
	r->mask = nslots - 1;
	/* The first look at tail comes at half the ring, the high-water mark
	 * (tp_ring_room_slow()). */
	r->limit = nslots / 2;
	if (whole) {
		r->resident = nslots;
	} else if (ring_populate(r, 0, first) < 0) {
		/* EINVAL: no MADV_POPULATE_WRITE; ENOMEM and others: fault the
		 * whole ring in the old way, which reports a shortage as a
		 * failed ring.  Either way the next rings go straight there. */
		atomic_store_explicit(&ring_populate_whole, 1, memory_order_relaxed);
		munmap(p, bytes);
		r->slots = NULL;
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		r->slots = p;
		r->resident = nslots;
	}
	return 0;
}

void tp_ring_destroy(struct tp_ring *r)
{
	if (r->slots)
		munmap(r->slots, (size_t)(r->mask + 1) * sizeof(struct tp_record));
	r->slots = NULL;
	r->resident = 0;
}

void tp_ring_prefault(struct tp_ring *r)
{
	uint64_t n = r->mask + 1;
	if (!r->slots || r->resident >= n)
		return;
	/* Relaxed: only an estimate of how far the producer got; the pages are
	 * faulted in whatever it writes meanwhile. */
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (h < r->resident / 2)
		return;
	uint64_t want = r->resident * 2;
	while (want < 2 * h && want < n)
		want *= 2;
	if (want > n)
		want = n;
	if (ring_populate(r, r->resident, want) < 0)
		r->resident = n; /* the hot path faults the rest in; stop trying */
}

uint64_t tp_ring_resident_bytes(const struct tp_ring *r)
{
	return r->slots ? r->resident * sizeof(struct tp_record) : 0;
}

/* The high-water hook.  Relaxed: a function pointer set once before the flush
 * thread starts, to a function that lives as long as the library; a producer
 * that still reads NULL merely does not wake the thread early. */
static void (*_Atomic ring_wake)(void);

void tp_ring_set_wake(void (*wake)(void))
{
	atomic_store_explicit(&ring_wake, wake, memory_order_relaxed);
}

int tp_ring_room_slow(struct tp_ring *r, uint64_t h, unsigned n)
{
	uint64_t size = r->mask + 1;
	/* Acquire pairs with the consumer's release store of tail in
	 * tp_ring_consume() and tp_ring_take(): the consumer has finished
	 * reading the slots we are about to overwrite. */
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t full = t + size;
	/* wake_next: a full ring comes here on every call, and must not wake
	 * the flush thread on each: once per half ring of head's progress. */
	if (h - t >= size / 2 && h >= r->wake_next) {
		r->wake_next = h + size / 2;
		void (*wake)(void) = atomic_load_explicit(&ring_wake, memory_order_relaxed);
		if (wake)
			wake();
	}
	/* Come back here after another half ring at the latest, so that a ring
	 * that fills is seen at its high-water mark. */
	uint64_t next = h + size / 2;
	r->limit = next < full ? next : full;
	return h + n <= full;
}

/* The group of records at position t of a ring holding up to h, for the two
 * consumers below.  Returns it (a contiguous copy in copy[] when it wraps
 * around the end of the slots) and its length in *n; or NULL, with *n = 1,
 * for a broken record, which cannot happen with a correct producer (a group
 * is published at once): the caller skips it rather than read garbage.
 * mask and slots are passed in, read once by the caller: they share the
 * producer's cache line, and reading them per group would pull that line
 * away from the producer after each of its stores of head. */
static inline const struct tp_record *ring_group(const struct tp_record *slots, uint64_t mask,
						 uint64_t t, uint64_t h, struct tp_record *copy,
						 unsigned *n)
{
	const struct tp_record *rec = &slots[t & mask];
	*n = 1u + rec->nextra;
	if (*n > 1 + TP_REC_MAX_EXTRA || t + *n > h) {
		*n = 1;
		return NULL;
	}
	if (((t + *n - 1) & mask) < (t & mask)) {
		for (unsigned i = 0; i < *n; i++)
			copy[i] = slots[(t + i) & mask];
		rec = copy;
	}
	return rec;
}

uint64_t tp_ring_consume(struct tp_ring *r, tp_ring_fn fn, void *ctx)
{
	/* Acquire pairs with the release store of head in tp_ring_commit(). */
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	const uint64_t mask = r->mask;
	const struct tp_record *slots = r->slots;
	uint64_t groups = 0;
	struct tp_record copy[1 + TP_REC_MAX_EXTRA];

	while (t < h) {
		unsigned n;
		const struct tp_record *rec = ring_group(slots, mask, t, h, copy, &n);
		if (rec) {
			fn(rec, ctx);
			groups++;
		}
		t += n;
	}
	/* Release pairs with the producer's acquire load of tail in
	 * tp_ring_room_slow(): we are done reading the slots before the producer
	 * may reuse them. */
	atomic_store_explicit(&r->tail, t, memory_order_release);
	return groups;
}

uint64_t tp_ring_take(struct tp_ring *r, tp_ring_take_fn fn, void *ctx)
{
	/* Acquire pairs with the release store of head in tp_ring_commit(). */
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint64_t t0 = t;
	const uint64_t mask = r->mask;
	const struct tp_record *slots = r->slots;
	struct tp_record copy[1 + TP_REC_MAX_EXTRA];

	while (t < h) {
		unsigned n;
		const struct tp_record *rec = ring_group(slots, mask, t, h, copy, &n);
		if (rec && !fn(rec, n, ctx))
			break;
		t += n;
	}
	/* Release pairs with the producer's acquire load of tail in
	 * tp_ring_room_slow(): the slots are read before they may be reused. */
	if (t != t0)
		atomic_store_explicit(&r->tail, t, memory_order_release);
	return t - t0;
}
