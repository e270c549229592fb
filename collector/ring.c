#include "collector/ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int tp_ring_init(struct tp_ring *r, uint64_t nslots)
{
	if (nslots < 16 || (nslots & (nslots - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	size_t bytes = (size_t)nslots * sizeof(struct tp_record);
	/* MAP_POPULATE: fault every page in now, on the thread's first event,
	 * rather than one page fault per 64 records on the hot path later (a
	 * fault costs microseconds; measured in bench/). */
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->slots = p;
	r->mask = nslots - 1;
	r->limit = nslots;
	return 0;
}

void tp_ring_destroy(struct tp_ring *r)
{
	if (r->slots)
		munmap(r->slots, (size_t)(r->mask + 1) * sizeof(struct tp_record));
	r->slots = NULL;
}

uint64_t tp_ring_consume(struct tp_ring *r, tp_ring_fn fn, void *ctx)
{
	/* Acquire pairs with the release store of head in tp_ring_commit(). */
	uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	/* mask and slots share the producer's cache line: read them once, so
	 * that the loop below does not pull that line away from the producer
	 * after each of its stores of head. */
	const uint64_t mask = r->mask;
	const struct tp_record *slots = r->slots;
	uint64_t groups = 0;
	struct tp_record copy[1 + TP_REC_MAX_EXTRA];

	while (t < h) {
		const struct tp_record *rec = &slots[t & mask];
		unsigned n = 1u + rec->nextra;
		if (n > 1 + TP_REC_MAX_EXTRA || t + n > h) {
			/* Cannot happen with a correct producer: a group is published at
			 * once.  Skip the broken record rather than read garbage. */
			t++;
			continue;
		}
		if (((t + n - 1) & mask) < (t & mask)) {
			/* The group wraps around the end of the slots: hand the
			 * callback a contiguous copy. */
			for (unsigned i = 0; i < n; i++)
				copy[i] = slots[(t + i) & mask];
			rec = copy;
		}
		fn(rec, ctx);
		t += n;
		groups++;
	}
	/* Release pairs with the producer's acquire load of tail in
	 * tp_ring_room(): we are done reading the slots before the producer
	 * may reuse them. */
	atomic_store_explicit(&r->tail, t, memory_order_release);
	return groups;
}
