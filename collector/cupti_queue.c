/* CUPTI's activity buffers, from the capture side's callbacks to the
 * decoder (collector/cupti_queue.h).  Threads:
 *   - CUPTI's buffer callbacks (preload/cupti_buffers.c) run on CUPTI's or
 *     the program's threads: tp_cupti_queue_alloc() allocates,
 *     tp_cupti_queue_push() pushes a completed buffer onto a lock-free list
 *     (`done`); nothing here takes a lock (Kineto's deadlock with CUPTI's
 *     lock), so any number of them may run at once, and alongside the
 *     flush thread.
 *   - The flush thread (tp_cupti_queue_drain()) takes the whole list, walks
 *     each buffer with libcupti's cuptiActivityGetNextRecord, hands each
 *     record to tp_gpu_parse_record() (collector/cupti_decode.c) and frees
 *     the buffer.
 *   - At exit (preload/cupti.c's handler, on the exiting thread), the
 *     flush thread is kept from calling CUPTI (`closed`, `walking`), CUPTI
 *     flushes one last time, and the records are copied out of the buffers
 *     (`flats`), so that the flush thread decodes them without calling
 *     CUPTI, which may be gone by then. */
#include "collector/cupti_queue.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_SIZE (4u << 20) /* Kineto's size */
#define BUF_HEADER 64	    /* struct buf lives just before the data */

/* A lock-free list: pushed by any thread, taken whole by one. */
struct node {
	struct node *next;
};

struct buf {
	struct node link; /* first: a struct node * is a struct buf * */
	size_t valid;
};
_Static_assert(sizeof(struct buf) <= BUF_HEADER, "header fits before the data");

/* Records copied out of CUPTI's buffers at exit, packed one after another
 * at 8-byte boundaries (tp_gpu_record_size()). */
struct flat {
	struct node link; /* first */
	size_t len;
	_Alignas(8) unsigned char data[];
};

static _Atomic(struct node *) done;  /* completed buffers, newest first */
static _Atomic(struct node *) flats; /* records copied at exit */
/* Counts, all relaxed: they order nothing.  The footer reads dropped and
 * refused after the final drain, which the exit path orders. */
static _Atomic int nbufs;	     /* buffers out: with CUPTI or queued */
static _Atomic uint64_t dropped, refused;
/* Set once by tp_cupti_queue_open() (release: the source's functions
 * before it; the flush thread's acquire loads pair with it). */
static _Atomic(const struct tp_cupti_source *) source;
/* The exit handshake (Dekker's, both seq-cst): the exiting thread sets
 * `closed` and then waits while `walking` is set; the flush thread sets
 * `walking` and then calls CUPTI only while `closed` is clear. */
static _Atomic int closed;
static _Atomic int walking;

static void list_push(_Atomic(struct node *) *list, struct node *n)
{
	struct node *head = atomic_load_explicit(list, memory_order_relaxed);
	do
		n->next = head;
	/* Release: the node's contents (the buffer CUPTI filled, its `valid`)
	 * before its publication; pairs with the acquire exchange in
	 * list_take(). */
	while (!atomic_compare_exchange_weak_explicit(list, &head, n, memory_order_release,
						      memory_order_relaxed));
}

/* Takes the whole list, oldest first. */
static struct node *list_take(_Atomic(struct node *) *list)
{
	/* Acquire: pairs with the release CAS in list_push(). */
	struct node *n = atomic_exchange_explicit(list, NULL, memory_order_acquire);
	struct node *rev = NULL;
	while (n) {
		struct node *next = n->next;
		n->next = rev;
		rev = n;
		n = next;
	}
	return rev;
}

uint8_t *tp_cupti_queue_alloc(size_t *size)
{
	*size = 0;
	/* Bounded: with every buffer waiting for the flush thread, CUPTI drops
	 * records and counts them (its dropped count, in the push).  Relaxed:
	 * a count, ordering nothing. */
	if (atomic_fetch_add_explicit(&nbufs, 1, memory_order_relaxed) >= TP_CUPTI_QUEUE_MAX) {
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
		return NULL;
	}
	unsigned char *p = aligned_alloc(BUF_HEADER, BUF_HEADER + BUF_SIZE);
	if (!p) {
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
		return NULL;
	}
	*size = BUF_SIZE;
	return p + BUF_HEADER;
}

void tp_cupti_queue_push(uint8_t *buffer, size_t valid, uint64_t n)
{
	if (n)
		atomic_fetch_add_explicit(&dropped, n, memory_order_relaxed);
	if (!buffer)
		return;
	struct buf *b = (struct buf *)(void *)(buffer - BUF_HEADER);
	b->valid = valid;
	list_push(&done, &b->link);
}

static void buf_free(struct buf *b)
{
	free(b);
	atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
}

void tp_cupti_queue_open(const struct tp_cupti_source *src)
{
	/* Pairs with the acquire loads in tp_cupti_queue_drain() and
	 * tp_cupti_queue_copy_out(). */
	atomic_store_explicit(&source, src, memory_order_release);
}

int tp_cupti_queue_opened(void)
{
	return atomic_load_explicit(&source, memory_order_acquire) != NULL;
}

void tp_cupti_queue_close(void)
{
	atomic_store_explicit(&closed, 1, memory_order_seq_cst);
	/* Seq-cst, against tp_cupti_queue_drain()'s store of `walking` and
	 * load of `closed`: either it sees `closed` and stays out, or we see
	 * `walking` and wait (bounded: a pass walks a few buffers) for its
	 * release store. */
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 2000 && atomic_load_explicit(&walking, memory_order_seq_cst); i++)
		nanosleep(&ms, NULL);
}

/* Copies the records of one CUPTI buffer into a flat (exit only). */
static void flatten(const struct tp_cupti_source *s, struct buf *b)
{
	uint8_t *data = (uint8_t *)b + BUF_HEADER;
	size_t total = 0;
	CUpti_Activity *rec = NULL;
	while (s->next_record(data, b->valid, &rec) == CUPTI_SUCCESS)
		total += tp_gpu_record_size(rec);
	struct flat *f = malloc(sizeof(*f) + total);
	if (f) {
		f->len = 0;
		rec = NULL;
		while (s->next_record(data, b->valid, &rec) == CUPTI_SUCCESS) {
			size_t sz = tp_gpu_record_size(rec);
			if (!sz || f->len + sz > total)
				continue;
			/* The record's own size may be less than sz (padding). */
			memcpy(f->data + f->len, rec, sz);
			f->len += sz;
		}
		list_push(&flats, &f->link);
	}
	buf_free(b);
}

void tp_cupti_queue_copy_out(void)
{
	const struct tp_cupti_source *s = atomic_load_explicit(&source, memory_order_acquire);
	if (!s)
		return;
	/* Oldest first onto the flats stack, so that list_take() gives them
	 * back oldest first to drain_flats(), in the order drain_done()
	 * decodes. */
	for (struct node *n = list_take(&done); n;) {
		struct node *next = n->next;
		flatten(s, (struct buf *)n);
		n = next;
	}
}

void tp_cupti_queue_forget(void)
{
	/* The forked child's only thread: CUDA and CUPTI do not survive fork,
	 * and the parent's buffers are the parent's. */
	atomic_store_explicit(&source, NULL, memory_order_relaxed);
	atomic_store_explicit(&done, NULL, memory_order_relaxed);
	atomic_store_explicit(&flats, NULL, memory_order_relaxed);
	atomic_store_explicit(&nbufs, 0, memory_order_relaxed);
	atomic_store_explicit(&dropped, 0, memory_order_relaxed);
	atomic_store_explicit(&refused, 0, memory_order_relaxed);
}

static void drain_done(const struct tp_cupti_source *s)
{
	for (struct node *n = list_take(&done); n;) {
		struct node *next = n->next;
		struct buf *b = (struct buf *)n;
		uint8_t *data = (uint8_t *)b + BUF_HEADER;
		CUpti_Activity *rec = NULL;
		while (s->next_record(data, b->valid, &rec) == CUPTI_SUCCESS)
			tp_gpu_parse_record(rec);
		buf_free(b);
		n = next;
	}
}

static void drain_flats(void)
{
	for (struct node *n = list_take(&flats); n;) {
		struct node *next = n->next;
		struct flat *f = (struct flat *)n;
		for (size_t off = 0; off < f->len;) {
			const CUpti_Activity *rec = (const CUpti_Activity *)(void *)(f->data + off);
			tp_gpu_parse_record(rec);
			off += tp_gpu_record_size(rec);
		}
		free(f);
		n = next;
	}
}

void tp_cupti_queue_drain(int how)
{
	const struct tp_cupti_source *s = atomic_load_explicit(&source, memory_order_acquire);
	if (s) {
		atomic_store_explicit(&walking, 1, memory_order_seq_cst);
		/* Seq-cst against tp_cupti_queue_close() (its comment). */
		if (!atomic_load_explicit(&closed, memory_order_seq_cst)) {
			/* The queue first: a full one would leave the flush
			 * without buffers. */
			drain_done(s);
			s->sync(how);
			drain_done(s);
		}
		/* Release: our calls into CUPTI before the exiting thread's
		 * seq-cst load that sees it clear. */
		atomic_store_explicit(&walking, 0, memory_order_release);
	}
	drain_flats();
}

uint64_t tp_cupti_queue_dropped(void)
{
	return atomic_load_explicit(&dropped, memory_order_relaxed);
}

uint64_t tp_cupti_queue_refused(void)
{
	return atomic_load_explicit(&refused, memory_order_relaxed);
}
