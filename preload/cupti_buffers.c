/* CUPTI's activity buffers.  Threads:
 *   - CUPTI's buffer callbacks run on CUPTI's or the program's threads: they
 *     allocate, or push a completed buffer onto a lock-free list (`done`);
 *     no lock of ours is held there (Kineto's deadlock with CUPTI's lock).
 *   - The flush thread takes the list and hands each record to the
 *     collector's decoder (tp_gpu_parse_record(), collector/cupti_decode.c).
 *   - At exit, after CUPTI's last flush, the records are copied out of the
 *     buffers (`flats`), so that the flush thread parses them without
 *     calling CUPTI, which may be gone by then. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/gpu.h"
#include "preload/cupti_internal.h"

#define BUF_SIZE (4u << 20) /* Kineto's size */
#define MAX_BUFS 32	    /* at most 128 MB of CUPTI buffers */
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
static _Atomic int nbufs;
static _Atomic uint64_t dropped, refused;
/* Set by the flush thread while it reads CUPTI buffers with
 * cuptiActivityGetNextRecord; the exit handler waits for it to clear. */
static _Atomic int flush_parsing;

static void list_push(_Atomic(struct node *) *list, struct node *n)
{
	struct node *head = atomic_load_explicit(list, memory_order_relaxed);
	do
		n->next = head;
	/* Release: the node's contents before its publication; pairs with the
	 * acquire exchange in list_take(). */
	while (!atomic_compare_exchange_weak_explicit(list, &head, n, memory_order_release,
						      memory_order_relaxed));
}

/* Takes the whole list, oldest first. */
static struct node *list_take(_Atomic(struct node *) *list)
{
	/* Pairs with the release CAS in list_push(). */
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

void CUPTIAPI tp_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*buffer = NULL;
	*size = 0;
	/* Bounded: with every buffer waiting for the flush thread, CUPTI drops
	 * records and counts them (cuptiActivityGetNumDroppedRecords). */
	if (atomic_fetch_add_explicit(&nbufs, 1, memory_order_relaxed) >= MAX_BUFS) {
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
		return;
	}
	unsigned char *p = aligned_alloc(BUF_HEADER, BUF_HEADER + BUF_SIZE);
	if (!p) {
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
		return;
	}
	*buffer = p + BUF_HEADER;
	*size = BUF_SIZE;
}

void CUPTIAPI tp_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid)
{
	(void)size;
	if (!buffer)
		return;
	size_t n = 0;
	/* No lock of ours is held here (Kineto's deadlock with CUPTI's lock). */
	if (tp_cupti_fn.GetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS && n)
		atomic_fetch_add_explicit(&dropped, n, memory_order_relaxed);
	struct buf *b = (struct buf *)(void *)(buffer - BUF_HEADER);
	b->valid = valid;
	list_push(&done, &b->link);
}

/* Copies the records of one CUPTI buffer into slots (exit only). */
static void flatten(struct buf *b)
{
	uint8_t *data = (uint8_t *)b + BUF_HEADER;
	size_t total = 0;
	CUpti_Activity *rec = NULL;
	while (tp_cupti_fn.GetNextRecord(data, b->valid, &rec) == CUPTI_SUCCESS)
		total += tp_gpu_record_size(rec);
	struct flat *f = malloc(sizeof(*f) + total);
	if (f) {
		f->len = 0;
		rec = NULL;
		while (tp_cupti_fn.GetNextRecord(data, b->valid, &rec) == CUPTI_SUCCESS) {
			size_t sz = tp_gpu_record_size(rec);
			if (!sz || f->len + sz > total)
				continue;
			/* The record's own size may be less than sz (padding). */
			memcpy(f->data + f->len, rec, sz);
			f->len += sz;
		}
		list_push(&flats, &f->link);
	}
	free(b);
	atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
}

void tp_cupti_buffers_wait_parsing(void)
{
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 2000 && atomic_load_explicit(&flush_parsing, memory_order_acquire); i++)
		nanosleep(&ms, NULL);
}

void tp_cupti_buffers_copy_out(void)
{
	/* Oldest first onto the flats stack, so that list_take() gives them
	 * back oldest first to parse_flats(), as parse_done() parses. */
	for (struct node *n = list_take(&done); n;) {
		struct node *next = n->next;
		flatten((struct buf *)n);
		n = next;
	}
}

void tp_cupti_buffers_forget(void)
{
	atomic_store_explicit(&done, NULL, memory_order_relaxed);
	atomic_store_explicit(&flats, NULL, memory_order_relaxed);
}

uint64_t tp_cupti_buffers_dropped(void)
{
	return atomic_load_explicit(&dropped, memory_order_relaxed);
}

uint64_t tp_cupti_buffers_refused(void)
{
	return atomic_load_explicit(&refused, memory_order_relaxed);
}

static void parse_done(void)
{
	for (struct node *n = list_take(&done); n;) {
		struct node *next = n->next;
		struct buf *b = (struct buf *)n;
		CUpti_Activity *rec = NULL;
		uint8_t *data = (uint8_t *)b + BUF_HEADER;
		while (tp_cupti_fn.GetNextRecord(data, b->valid, &rec) == CUPTI_SUCCESS)
			tp_gpu_parse_record(rec);
		free(b);
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		n = next;
	}
}

static void parse_flats(void)
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

void tp_cupti_buffers_collect(int flush)
{
	atomic_store_explicit(&flush_parsing, 1, memory_order_seq_cst);
	/* Seq-cst against the exit handler's state change (preload/cupti.c):
	 * either it sees flush_parsing set and waits
	 * (tp_cupti_buffers_wait_parsing()), or we see TP_CUPTI_ST_STOPPED and
	 * stay out. */
	int st = atomic_load_explicit(&tp_cupti_state, memory_order_seq_cst);
	if (st == TP_CUPTI_ST_ACTIVE || st == TP_CUPTI_ST_YIELDED) {
		if (flush && st == TP_CUPTI_ST_ACTIVE)
			tp_cupti_fn.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		parse_done();
	}
	atomic_store_explicit(&flush_parsing, 0, memory_order_release);
	parse_flats();
}
