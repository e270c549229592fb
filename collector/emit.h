/* The producer side: writing one record (and its extras) into the calling
 * thread's ring.  Inline because it is the hot path: no lock, no allocation
 * (except the one-time ring creation), no syscall, no formatting. */
#ifndef TP_COLLECTOR_EMIT_H
#define TP_COLLECTOR_EMIT_H

#include <string.h>

#include "collector/control.h"
#include "collector/thread.h"
#include "common/clock.h"

/* The calling thread's state, created on first use; NULL when it cannot
 * record (thread exiting, out of memory). */
static inline __attribute__((always_inline)) struct tp_thread *tp_emit_self(void)
{
	struct tp_thread *t = tp_self;
	if (__builtin_expect((uintptr_t)t <= (uintptr_t)TP_THREAD_GONE, 0))
		t = tp_thread_create_self();
	return t;
}

/* Writes rec followed by `extra_len` bytes of extras (at most
 * TP_REC_MAX_EXTRA * 64) into t's ring.  rec->nextra is set here.  A full
 * ring, or a write interrupted by a signal handler that records too, drops
 * the record and counts it. */
static inline void tp_emit(struct tp_thread *t, const struct tp_record *rec, const void *extra,
			   size_t extra_len)
{
	unsigned nextra = (unsigned)((extra_len + TP_REC_EXTRA_BYTES - 1) / TP_REC_EXTRA_BYTES);
	if (__builtin_expect(t->ring.writing, 0)) {
		tp_ring_drop_interrupted(&t->ring);
		return;
	}
	t->ring.writing = 1;
	/* A compiler barrier is enough: only a signal handler on this same
	 * thread can observe t->ring.writing. */
	atomic_signal_fence(memory_order_seq_cst);
	int64_t h = tp_ring_reserve(&t->ring, 1 + nextra);
	if (__builtin_expect(h < 0, 0)) {
		tp_ring_drop(&t->ring);
	} else {
		struct tp_record *slot = tp_ring_slot(&t->ring, (uint64_t)h);
		*slot = *rec;
		slot->nextra = (uint8_t)nextra;
		const char *src = extra;
		for (unsigned i = 0; i < nextra; i++) {
			struct tp_record *x = tp_ring_slot(&t->ring, (uint64_t)h + 1 + i);
			size_t n = extra_len - (size_t)i * TP_REC_EXTRA_BYTES;
			memcpy(x, src + (size_t)i * TP_REC_EXTRA_BYTES,
			       n < TP_REC_EXTRA_BYTES ? n : TP_REC_EXTRA_BYTES);
		}
		tp_ring_commit(&t->ring, (uint64_t)h, 1 + nextra);
	}
	atomic_signal_fence(memory_order_seq_cst);
	t->ring.writing = 0;
}

/* The hot path's split form of tp_emit() for one record without extras, so
 * that the caller writes the record's fields straight into its slot instead
 * of building it on the stack and copying it:
 *
 *   uint64_t h;
 *   struct tp_record *r;
 *   if (tp_emit_reserve1(t, &h, &r)) { ...fill every field of *r...; tp_emit_commit1(t, h); }
 *
 * tp_emit_reserve1() returns 0 when the record is dropped and counted (ring
 * full, or a write interrupted by a signal handler that records too, as in
 * tp_emit()); nothing else may be emitted on this thread between the two
 * calls.  r->nextra must be written as 0. */
static inline __attribute__((always_inline)) int tp_emit_reserve1(struct tp_thread *t, uint64_t *h,
								  struct tp_record **slot)
{
	if (__builtin_expect(t->ring.writing, 0)) {
		tp_ring_drop_interrupted(&t->ring);
		return 0;
	}
	t->ring.writing = 1;
	/* A compiler barrier is enough: only a signal handler on this same
	 * thread can observe t->ring.writing. */
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t c = atomic_load_explicit(&t->ring.head, memory_order_relaxed);
	if (__builtin_expect(!tp_ring_room(&t->ring, c, 1), 0)) {
		tp_ring_drop(&t->ring);
		/* Pairs with the fence above: the drop is counted before a signal
		 * handler may write again. */
		atomic_signal_fence(memory_order_seq_cst);
		t->ring.writing = 0;
		return 0;
	}
	*h = c;
	*slot = tp_ring_slot(&t->ring, c);
	tp_ring_prefetch(*slot);
	return 1;
}

static inline __attribute__((always_inline)) void tp_emit_commit1(struct tp_thread *t, uint64_t h)
{
	tp_ring_commit(&t->ring, h, 1);
	/* Compiler barrier, as in tp_emit(): the slot and head are written
	 * before t->ring.writing clears for a signal handler on this thread. */
	atomic_signal_fence(memory_order_seq_cst);
	t->ring.writing = 0;
}

/* Emits a record whose extras are a NUL-terminated copy of `s` (cut to fit,
 * with TP_RF_TRUNC), for markers, ranges and counters. */
void tp_emit_named(struct tp_thread *t, struct tp_record *rec, const char *s, size_t len);

#endif
