/* Where a program thread is right now, as it publishes it for the live file
 * (collector/live.c, docs/live.md): its innermost open CUDA call, its open
 * NVTX push/pop ranges, its open PyTorch op and module.  One struct in each
 * struct tp_thread, written by its owner thread only, read racily by the
 * flush thread about once a second.
 *
 * The cost on the owner's side is a few stores, no fence but the compiler's
 * (release stores are plain moves on x86-64), so that a recorded CUDA call
 * pays about a nanosecond (bench/RESULTS.md).  What the reader gets is a
 * snapshot that may be a call late or early; a name is never torn (each
 * name slot is a seqlock) and never a pointer into the program's memory:
 * names are copied, cut at TP_LIVE_NAME_BYTES - 1 bytes. */
#ifndef TP_COLLECTOR_LIVE_PUB_H
#define TP_COLLECTOR_LIVE_PUB_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define TP_LIVE_NAME_WORDS 6
#define TP_LIVE_NAME_BYTES (TP_LIVE_NAME_WORDS * 8)
/* NVTX push/pop ranges published per thread, outermost first; deeper ones
 * are counted in the depth but not named. */
#define TP_LIVE_NVTX 4
/* The bytes of an NVTX range's extended payload (NCCL's collective: comm,
 * bytes, op, peer) copied into its slot, as the record copies them
 * (collector/nvtx_payload_decode.h's TP_NVTX_PAYLOAD_MAX, checked in
 * collector/live.c); decoded by the flush thread. */
#define TP_LIVE_PAYLOAD_WORDS 8

/* One named open thing: a seqlock over its name and start.  The words are
 * atomics (relaxed) so that the reader's racy copy is no data race. */
struct tp_live_name {
	_Atomic uint32_t seq;	    /* odd while the owner writes */
	_Atomic uint64_t start;	    /* tp_clock_now() ticks at entry */
	_Atomic uint64_t w[TP_LIVE_NAME_WORDS]; /* the name, NUL-padded */
};

/* An NVTX push/pop range's slot: its name, and the payload the push gave
 * (NVTX's payload extension), under the name's seqlock.  size == 0: none. */
struct tp_live_nvtx {
	struct tp_live_name n;
	_Atomic uint64_t domain, schema;
	_Atomic uint32_t size, copied; /* as struct tp_nvtx_payload_hdr's */
	_Atomic uint64_t p[TP_LIVE_PAYLOAD_WORDS];
};

/* The process's open NVTX start/end ranges (nvtxRangeStart, nvtxRangeEnd; any
 * domain), which are not a thread's stack: a range may end on another
 * thread.  A fixed table of slots, each its range's id (0: free,
 * TP_LIVE_RANGE_BUSY: being claimed and written), the tid of the thread that
 * started it and its name and payload as an NVTX push's slot.  A start
 * claims a free slot (compare-and-swap from 0), writes it, then stores the
 * id (release); an end finds its id and stores 0 (release): range ids are
 * unique in the process (preload/nvtx.c), so no two writers share a slot.
 * Ranges past TP_LIVE_RANGES open at once are not published.  Only started
 * on a thread that has its state (as everything here). */
#define TP_LIVE_RANGES 16
#define TP_LIVE_RANGE_BUSY UINT64_MAX
struct tp_live_range {
	_Atomic uint64_t id;
	_Atomic int32_t tid;
	struct tp_live_nvtx x;
};
extern struct tp_live_range tp_live_ranges[TP_LIVE_RANGES]; /* collector/live.c */

/* The thread's Python call stack (TRACEPROF_PYTHON_STACK's shadow stack,
 * preload/pystack_profile.c): its depth and the name index of each frame
 * (collector/pystack_decode.h's table), outermost first, as many as the
 * shadow keeps.  Names only: the frame objects stay the owner's.
 *
 * Written by the owner with the GIL held (its profile function), read by
 * the flush thread.  A push writes one entry under the seqlock and then the
 * depth; a pop stores the depth alone: the entries below it do not change
 * until a later push, which moves seq, so a reader that saw the depth of a
 * pop still copies entries of one stack.  A resync (the shadow seeded, or
 * the thread's state made after its shadow) writes every entry under the
 * seqlock. */
#define TP_LIVE_PY 128
struct tp_live_py {
	_Atomic uint32_t seq;	/* odd while the owner writes entries */
	_Atomic uint32_t on;	/* 1 while the shadow is kept (below) */
	_Atomic uint32_t depth; /* frames on the stack; may exceed TP_LIVE_PY */
	_Atomic uint32_t idx[TP_LIVE_PY];
};

/* Set once the program set a profile function in every thread
 * (threading.setprofile_all_threads): every thread's shadow stops being
 * kept, and a stale one must not be shown (collector/live.c).  Relaxed on
 * both sides: a flag alone, stored by the audit hook, read by the flush
 * thread; a reader that misses it shows one stack a second late. */
extern _Atomic int tp_live_py_gone;

struct tp_live_pub {
	/* The innermost open CUDA call: its id (collector/cuda_record.h) + 1,
	 * 0 when none; its entry time in tp_clock_now() ticks.  The owner
	 * stores call_start (relaxed) and then call (release) on entry, and
	 * call = 0 (relaxed) on return; the flush thread's acquire load of
	 * call in tp_live_read_call() pairs with the release, so that a
	 * non-zero call comes with its entry's start (or a later call's). */
	_Atomic uint32_t call;
	_Atomic uint64_t call_start;
	/* A call entered while no window records (the x86-64 assembly
	 * wrappers' not-recording path, scripts/gen-cuda-wrappers' idle_asm()):
	 * call is its id + 1 with TP_LIVE_CALL_IDLE set, and no time is read
	 * (no rdtsc on that path); call_enters, incremented by the owner before
	 * it stores call, tells one such call from the next of the same id.
	 * The flush thread dates it when it first sees that pair (seen_*:
	 * flush thread only), so its start is known to a pass or so. */
	_Atomic uint32_t call_enters;
	uint32_t seen_call, seen_enters;
	uint64_t seen_at;
	/* Open NVTX push/pop ranges on this thread (all domains): the depth,
	 * and the first TP_LIVE_NVTX names.  Depth: stored by the owner
	 * (release) after a push's slot is written, (relaxed) at a pop; the
	 * reader (acquire) reads slots below the depth it loaded, each
	 * through its seqlock. */
	_Atomic uint32_t nvtx_depth;
	struct tp_live_nvtx nvtx[TP_LIVE_NVTX];
	/* The innermost open PyTorch op and module (TRACEPROF_PYTORCH): on is
	 * 1 while one is open, stored (release) after its slot is written. */
	_Atomic uint32_t op_on, mod_on;
	struct tp_live_name op, mod;
	/* The last record_function() range opened and not yet closed
	 * (torch's user scope: gloo's "gloo:all_reduce", which is where a
	 * rank waits for its peers); as op_on.  One level: an inner range's
	 * end hides an outer one until the next opens. */
	_Atomic uint32_t range_on;
	struct tp_live_name range;
	struct tp_live_py py;
};

/* The call word's flag for a call entered while no window records. */
#define TP_LIVE_CALL_IDLE 0x80000000u

/* Owner thread: a CUDA call with id `id` starts at `start` ticks.  Two
 * stores. */
static inline __attribute__((always_inline)) void tp_live_call_enter(struct tp_live_pub *p, uint32_t id,
								    uint64_t start)
{
	atomic_store_explicit(&p->call_start, start, memory_order_relaxed);
	/* Release: pairs with the acquire load in the flush thread's reader
	 * (collector/live.c); call_start above is seen with it. */
	atomic_store_explicit(&p->call, id + 1, memory_order_release);
}

/* Owner thread: the call returned.  One store; relaxed: a reader that still
 * sees the call reports it open a moment longer. */
static inline __attribute__((always_inline)) void tp_live_call_leave(struct tp_live_pub *p)
{
	atomic_store_explicit(&p->call, 0, memory_order_relaxed);
}

/* Owner thread: opens slot n's seqlock (odd) for writing; returns the
 * sequence to close it with (tp_live_seq_end()). */
static inline uint32_t tp_live_seq_begin(struct tp_live_name *n)
{
	uint32_t s = atomic_load_explicit(&n->seq, memory_order_relaxed);
	/* Relaxed: every word written after it is a release store, which
	 * orders this odd seq before itself; a reader that acquires such a
	 * word then sees the odd seq (or later) on its second load of seq
	 * (tp_live_name_get()).  No fence: GCC's ThreadSanitizer refuses
	 * atomic_thread_fence (make check-tsan), and on x86-64 release stores
	 * and acquire loads are plain moves, as relaxed ones are. */
	atomic_store_explicit(&n->seq, s + 1, memory_order_relaxed);
	return s;
}

static inline void tp_live_seq_end(struct tp_live_name *n, uint32_t s)
{
	/* Release: the words written since tp_live_seq_begin() are visible
	 * before the even seq (pairs with the reader's acquire load of seq). */
	atomic_store_explicit(&n->seq, s + 2, memory_order_release);
}

/* Owner thread, inside the seqlock: the name (len bytes, cut to fit) and
 * start. */
static inline void tp_live_name_words(struct tp_live_name *n, const char *name, size_t len,
				      uint64_t start)
{
	uint64_t w[TP_LIVE_NAME_WORDS] = { 0 };
	if (len > TP_LIVE_NAME_BYTES - 1)
		len = TP_LIVE_NAME_BYTES - 1;
	memcpy(w, name, len);
	atomic_store_explicit(&n->start, start, memory_order_release);
	for (int i = 0; i < TP_LIVE_NAME_WORDS; i++)
		atomic_store_explicit(&n->w[i], w[i], memory_order_release);
}

/* Owner thread: writes name (len bytes, cut to fit) and start into slot n
 * under its seqlock. */
static inline void tp_live_name_set(struct tp_live_name *n, const char *name, size_t len,
				    uint64_t start)
{
	uint32_t s = tp_live_seq_begin(n);
	tp_live_name_words(n, name, len, start);
	tp_live_seq_end(n, s);
}

/* Owner thread: an NVTX range's slot, its name as tp_live_name_set() and
 * its payload: `size` bytes at the program's `bytes` (of which the first
 * TP_LIVE_PAYLOAD_WORDS * 8 are copied, and nothing they point to), of
 * schema `schema` in domain `domain`; size 0: none. */
static inline void tp_live_nvtx_set(struct tp_live_nvtx *x, const char *name, size_t len,
				    uint64_t start, uint64_t domain, uint64_t schema,
				    const void *bytes, uint32_t size)
{
	uint32_t copied = 0;
	uint64_t p[TP_LIVE_PAYLOAD_WORDS] = { 0 };
	if (size && bytes) {
		copied = size < sizeof(p) ? size : (uint32_t)sizeof(p);
		memcpy(p, bytes, copied);
	}
	uint32_t s = tp_live_seq_begin(&x->n);
	tp_live_name_words(&x->n, name, len, start);
	atomic_store_explicit(&x->size, size, memory_order_release);
	if (size) {
		atomic_store_explicit(&x->domain, domain, memory_order_release);
		atomic_store_explicit(&x->schema, schema, memory_order_release);
		atomic_store_explicit(&x->copied, copied, memory_order_release);
		for (int i = 0; i < TP_LIVE_PAYLOAD_WORDS; i++)
			atomic_store_explicit(&x->p[i], p[i], memory_order_release);
	}
	tp_live_seq_end(&x->n, s);
}

/* Flush thread: copies slot n's name (NUL-terminated, out holds
 * TP_LIVE_NAME_BYTES) and start.  Returns 0, or -1 when the owner was
 * writing it (the caller leaves it out this time). */
static inline int tp_live_name_get(struct tp_live_name *n, char *out, uint64_t *start)
{
	/* Acquire: pairs with the owner's final release store of seq. */
	uint32_t s1 = atomic_load_explicit(&n->seq, memory_order_acquire);
	if (s1 & 1)
		return -1;
	uint64_t w[TP_LIVE_NAME_WORDS];
	*start = atomic_load_explicit(&n->start, memory_order_acquire);
	for (int i = 0; i < TP_LIVE_NAME_WORDS; i++)
		w[i] = atomic_load_explicit(&n->w[i], memory_order_acquire);
	/* The acquire loads above keep the second load of seq below after
	 * them; one that read a word of a write in progress sees its odd seq
	 * (pairs with the owner's release stores of the words). */
	if (atomic_load_explicit(&n->seq, memory_order_relaxed) != s1)
		return -1;
	memcpy(out, w, TP_LIVE_NAME_BYTES);
	out[TP_LIVE_NAME_BYTES - 1] = '\0';
	return 0;
}

/* An NVTX slot's payload as the flush thread copies it. */
struct tp_live_payload {
	uint64_t domain, schema;
	uint32_t size, copied;
	uint64_t p[TP_LIVE_PAYLOAD_WORDS];
};

/* Flush thread: as tp_live_name_get(), and the slot's payload into *pl
 * (pl->size 0: none), all from one write of the owner. */
static inline int tp_live_nvtx_get(struct tp_live_nvtx *x, char *out, uint64_t *start,
				   struct tp_live_payload *pl)
{
	/* Acquire: pairs with the owner's final release store of seq. */
	uint32_t s1 = atomic_load_explicit(&x->n.seq, memory_order_acquire);
	if (s1 & 1)
		return -1;
	uint64_t w[TP_LIVE_NAME_WORDS];
	*start = atomic_load_explicit(&x->n.start, memory_order_acquire);
	for (int i = 0; i < TP_LIVE_NAME_WORDS; i++)
		w[i] = atomic_load_explicit(&x->n.w[i], memory_order_acquire);
	pl->size = atomic_load_explicit(&x->size, memory_order_acquire);
	pl->domain = atomic_load_explicit(&x->domain, memory_order_acquire);
	pl->schema = atomic_load_explicit(&x->schema, memory_order_acquire);
	pl->copied = atomic_load_explicit(&x->copied, memory_order_acquire);
	for (int i = 0; i < TP_LIVE_PAYLOAD_WORDS; i++)
		pl->p[i] = atomic_load_explicit(&x->p[i], memory_order_acquire);
	/* The acquire loads above keep the second load of seq below after
	 * them; one that read a word of a write in progress sees its odd seq
	 * (pairs with the owner's release stores of the words). */
	if (atomic_load_explicit(&x->n.seq, memory_order_relaxed) != s1)
		return -1;
	if (pl->copied > sizeof(pl->p))
		pl->copied = sizeof(pl->p);
	memcpy(out, w, TP_LIVE_NAME_BYTES);
	out[TP_LIVE_NAME_BYTES - 1] = '\0';
	return 0;
}

/* Owner thread, GIL held: frame `d` (from the outermost, 0) is pushed with
 * name index idx.  Four stores (one past TP_LIVE_PY: the depth alone). */
static inline void tp_live_py_push(struct tp_live_py *p, uint32_t d, uint32_t idx)
{
	if (d < TP_LIVE_PY) {
		uint32_t s = atomic_load_explicit(&p->seq, memory_order_relaxed);
		/* Relaxed: the release store of the entry below orders it
		 * (as in tp_live_seq_begin()). */
		atomic_store_explicit(&p->seq, s + 1, memory_order_relaxed);
		/* Release: pairs with the reader's acquire load of the entry;
		 * a reader that sees it sees the odd seq on its second load. */
		atomic_store_explicit(&p->idx[d], idx, memory_order_release);
		/* Release: the entry before the depth that counts it (pairs
		 * with the reader's acquire load of depth). */
		atomic_store_explicit(&p->depth, d + 1, memory_order_release);
		/* Release: all of the above before the even seq (pairs with
		 * the reader's first, acquire, load of seq). */
		atomic_store_explicit(&p->seq, s + 2, memory_order_release);
		return;
	}
	atomic_store_explicit(&p->depth, d + 1, memory_order_release);
}

/* Owner thread, GIL held: the stack is now `d` frames deep after pops.
 * Release: pairs with the reader's acquire load of depth. */
static inline void tp_live_py_pop(struct tp_live_py *p, uint32_t d)
{
	atomic_store_explicit(&p->depth, d, memory_order_release);
}

/* Owner thread, GIL held: the whole stack at once, `depth` frames of which
 * the first min(depth, TP_LIVE_PY) have the name indexes idx[] (outermost
 * first), and whether it is kept (on). */
static inline void tp_live_py_sync(struct tp_live_py *p, const uint32_t *idx, uint32_t depth,
				   int on)
{
	uint32_t s = atomic_load_explicit(&p->seq, memory_order_relaxed);
	/* Relaxed: ordered by the release stores below (tp_live_seq_begin()). */
	atomic_store_explicit(&p->seq, s + 1, memory_order_relaxed);
	uint32_t n = depth < TP_LIVE_PY ? depth : TP_LIVE_PY;
	for (uint32_t i = 0; i < n; i++)
		atomic_store_explicit(&p->idx[i], idx[i], memory_order_release);
	atomic_store_explicit(&p->depth, depth, memory_order_release);
	atomic_store_explicit(&p->on, (uint32_t)(on != 0), memory_order_release);
	/* Release: pairs with the reader's first load of seq. */
	atomic_store_explicit(&p->seq, s + 2, memory_order_release);
}

/* Owner thread: the shadow is no longer kept (its profile function was
 * replaced); the stack it holds is stale.  Release: pairs with the reader's
 * acquire load of on. */
static inline void tp_live_py_off(struct tp_live_py *p)
{
	atomic_store_explicit(&p->on, 0, memory_order_release);
}

/* Flush thread: copies the stack's name indexes, outermost first, into
 * out (room for TP_LIVE_PY) and its depth into *depth.  Returns how many
 * were copied (min(depth, TP_LIVE_PY)), 0 when the thread keeps no
 * shadow, or -1 when the owner was writing (the caller leaves it out this
 * time). */
static inline int tp_live_py_get(struct tp_live_py *p, uint32_t *out, uint32_t *depth)
{
	/* Acquire: pairs with the owner's final release store of seq. */
	uint32_t s1 = atomic_load_explicit(&p->seq, memory_order_acquire);
	if (s1 & 1)
		return -1;
	/* Acquire: pairs with tp_live_py_sync()'s and tp_live_py_off()'s
	 * release stores of on. */
	if (!atomic_load_explicit(&p->on, memory_order_acquire) ||
	    atomic_load_explicit(&tp_live_py_gone, memory_order_relaxed))
		return 0;
	/* Acquire: pairs with the release stores of depth (push, pop, sync):
	 * the entries it counts were written before it. */
	uint32_t d = atomic_load_explicit(&p->depth, memory_order_acquire);
	uint32_t n = d < TP_LIVE_PY ? d : TP_LIVE_PY;
	for (uint32_t i = 0; i < n; i++)
		out[i] = atomic_load_explicit(&p->idx[i], memory_order_acquire);
	/* The acquire loads above keep this load after them; one that read
	 * an entry of a later push sees that push's odd seq, or later. */
	if (atomic_load_explicit(&p->seq, memory_order_relaxed) != s1)
		return -1;
	*depth = d;
	return (int)n;
}

/* Any thread: range `id` (not 0 nor TP_LIVE_RANGE_BUSY) started on thread
 * tid, as tp_live_nvtx_set() takes it.  A scan of the slots and one
 * compare-and-swap; nothing when all are taken. */
static inline void tp_live_range_start(uint64_t id, int32_t tid, const char *name, size_t len,
				       uint64_t start, uint64_t domain, uint64_t schema,
				       const void *bytes, uint32_t size)
{
	for (int i = 0; i < TP_LIVE_RANGES; i++) {
		struct tp_live_range *r = &tp_live_ranges[i];
		uint64_t free_id = 0;
		/* Relaxed: a hint; the exchange below decides. */
		if (atomic_load_explicit(&r->id, memory_order_relaxed) != 0)
			continue;
		/* Acquire: the slot's last end (its release store of 0) is
		 * before this thread's writes below (the seqlock's sequence
		 * goes on from the last writer's). */
		if (!atomic_compare_exchange_strong_explicit(&r->id, &free_id, TP_LIVE_RANGE_BUSY,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		atomic_store_explicit(&r->tid, tid, memory_order_relaxed);
		tp_live_nvtx_set(&r->x, name, len, start, domain, schema, bytes, size);
		/* Release: the tid and the name before the id that shows them
		 * (pairs with the reader's acquire load of id). */
		atomic_store_explicit(&r->id, id, memory_order_release);
		return;
	}
}

/* Any thread: range `id` ended.  A scan of the slots, one store. */
static inline void tp_live_range_end(uint64_t id)
{
	for (int i = 0; i < TP_LIVE_RANGES; i++) {
		struct tp_live_range *r = &tp_live_ranges[i];
		/* Relaxed: only this range's end writes a slot holding its id. */
		if (atomic_load_explicit(&r->id, memory_order_relaxed) == id) {
			/* Release: pairs with the next start's acquire exchange. */
			atomic_store_explicit(&r->id, 0, memory_order_release);
			return;
		}
	}
}

/* Flush thread: slot i's range when it is open and was started on thread
 * tid: its name (out holds TP_LIVE_NAME_BYTES), start and payload, and its
 * id in *idp.  Returns 0, or -1 when it is not (free, another thread's, or
 * written or ended while read). */
static inline int tp_live_range_get(int i, int32_t tid, char *out, uint64_t *start,
				    struct tp_live_payload *pl, uint64_t *idp)
{
	struct tp_live_range *r = &tp_live_ranges[i];
	/* Acquire: pairs with the release store of the id in
	 * tp_live_range_start(): the tid and the name are that range's. */
	uint64_t id = atomic_load_explicit(&r->id, memory_order_acquire);
	if (id == 0 || id == TP_LIVE_RANGE_BUSY ||
	    atomic_load_explicit(&r->tid, memory_order_relaxed) != tid)
		return -1;
	if (tp_live_nvtx_get(&r->x, out, start, pl) < 0)
		return -1;
	/* Acquire: the copy above is before this load; a slot ended and
	 * claimed again meanwhile shows another id (ids are never reused). */
	if (atomic_load_explicit(&r->id, memory_order_acquire) != id)
		return -1;
	*idp = id;
	return 0;
}

#endif
