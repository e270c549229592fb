#include "collector/store.h"

#include <string.h>
#include <sys/mman.h>

/* The header takes one record's room, so that the records stay aligned to
 * their cache lines. */
struct tp_store_chunk {
	struct tp_store_chunk *next;
	uint32_t rd, wr; /* records [rd, wr) are held */
	char pad[sizeof(struct tp_record) - sizeof(void *) - 2 * sizeof(uint32_t)];
	struct tp_record rec[];
};

#define STORE_CHUNK_RECS ((TP_STORE_CHUNK_BYTES - sizeof(struct tp_store_chunk)) / sizeof(struct tp_record))

_Static_assert(sizeof(struct tp_store_chunk) == sizeof(struct tp_record),
	       "the chunk header is one record's room");

static struct {
	uint64_t max_chunks;
	uint64_t mapped; /* chunks mapped, in queues or free */
	uint64_t peak;
	struct tp_store_chunk *free;
	uint64_t nfree;
} S;

void tp_store_configure(uint64_t max_bytes)
{
	S.max_chunks = max_bytes / TP_STORE_CHUNK_BYTES;
}

int tp_store_enabled(void)
{
	return S.max_chunks > 0;
}

static struct tp_store_chunk *chunk_get(int populate)
{
	struct tp_store_chunk *c = S.free;
	if (c) {
		S.free = c->next;
		S.nfree--;
	} else {
		if (S.mapped >= S.max_chunks)
			return NULL;
		/* For a burst (a queue's second chunk, or more than 4096 records
		 * to move), the pages are faulted in by one call (MAP_POPULATE):
		 * a fault per page while copying made the move slower than the
		 * producer (measured: 5-10x the drops).  Otherwise not: a thread
		 * that made a few records must cost the pages it uses, not 1 MiB
		 * (1,000 short threads, test/integration/rel_threads_mem.sh). */
		void *p = mmap(NULL, TP_STORE_CHUNK_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
		if (p == MAP_FAILED)
			return NULL; /* as a full budget: the ring keeps the records */
		c = p;
		if (++S.mapped > S.peak)
			S.peak = S.mapped;
	}
	c->next = NULL;
	c->rd = c->wr = 0;
	return c;
}

static void chunk_put(struct tp_store_chunk *c)
{
	if (S.nfree < TP_STORE_KEEP_FREE) {
		c->next = S.free;
		S.free = c;
		S.nfree++;
		return;
	}
	munmap(c, TP_STORE_CHUNK_BYTES);
	S.mapped--;
}

struct take_ctx {
	struct tp_store_queue *q;
	int burst; /* more than a few pages of records to move */
};

static int take_group(const struct tp_record *rec, unsigned n, void *arg)
{
	struct take_ctx *tc = arg;
	struct tp_store_queue *q = tc->q;
	struct tp_store_chunk *c = q->last;
	if (!c || c->wr + n > STORE_CHUNK_RECS) {
		struct tp_store_chunk *nc = chunk_get(c != NULL || tc->burst);
		if (!nc)
			return 0;
		if (c)
			c->next = nc;
		else
			q->first = nc;
		q->last = c = nc;
	}
	memcpy(&c->rec[c->wr], rec, (size_t)n * sizeof(*rec));
	c->wr += n;
	q->records += n;
	return 1;
}

uint64_t tp_store_take(struct tp_store_queue *q, struct tp_ring *r)
{
	if (!S.max_chunks || !r->slots)
		return 0;
	/* Relaxed: an estimate, to choose how to map; tp_ring_take() does its
	 * own acquire load of head. */
	uint64_t pending = atomic_load_explicit(&r->head, memory_order_relaxed) -
			   atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct take_ctx tc = { q, pending > 4096 };
	return tp_ring_take(r, take_group, &tc);
}

uint64_t tp_store_convert(struct tp_store_queue *q, tp_ring_fn fn, void *ctx,
			  uint64_t max_groups)
{
	uint64_t groups = 0;
	struct tp_store_chunk *c;
	while ((c = q->first) && groups < max_groups) {
		while (c->rd < c->wr && groups < max_groups) {
			const struct tp_record *rec = &c->rec[c->rd];
			unsigned n = 1u + rec->nextra;
			/* Whole groups only were stored (take_group()). */
			c->rd += n;
			q->records -= n;
			fn(rec, ctx);
			groups++;
		}
		if (c->rd < c->wr)
			break;
		/* Emptied.  The last chunk goes too: the next take starts a fresh
		 * one (from the free list). */
		q->first = c->next;
		if (!q->first)
			q->last = NULL;
		chunk_put(c);
	}
	return groups;
}

uint64_t tp_store_bytes(void)
{
	return S.mapped * TP_STORE_CHUNK_BYTES;
}

uint64_t tp_store_peak_bytes(void)
{
	return S.peak * TP_STORE_CHUNK_BYTES;
}

void tp_store_after_fork_child(void)
{
	uint64_t max = S.max_chunks;
	memset(&S, 0, sizeof(S));
	S.max_chunks = max;
}
