/* The table of a file's own events: what format/aggregate.c (the events
 * as they pass) and format/aggregate_life.c (the table's life, its spare,
 * its output) share.  Not for other files: format/aggregate.h is the
 * interface. */
#ifndef TP_FORMAT_AGGREGATE_INT_H
#define TP_FORMAT_AGGREGATE_INT_H

#include <stdint.h>

#include "common/self_image.h"
#include "format/aggregate.h"

#define AG_NONE UINT32_MAX
#define AG_FOLD (UINT32_MAX - 1) /* struct ag_ent */
/* The first room for rows and their slots (a power of two, at least twice
 * the rows: half full at most); both double as names come, up to
 * TP_AGG_MAX_ROWS.  A file begins small: a window's file is opened once,
 * but a table sized for its bound up front cost a bench_json file of 1 MiB
 * a tenth of its time in zeroing. */
#define AG_ROWS0 64
/* The stable names' cache: AG_CACHE_SETS sets of two entries, the one
 * used last first (two names whose addresses fall in one set do not evict
 * each other at every event: bench_json's four names did, with one way). */
#define AG_CACHE_SETS 64
/* The set of a name address: the top bits of a multiplicative hash
 * (Fibonacci hashing), which every bit of the address reaches (string
 * literals lie packed, a few bytes apart). */
#define AG_CACHE_SET(p) ((size_t)(((uint64_t)(uintptr_t)(p) * 0x9e3779b97f4a7c15ull) >> 58))
_Static_assert(AG_CACHE_SETS == 64, "AG_CACHE_SET takes the top 6 bits");
/* Entries below a stack's top searched for an enclosing slice: events come
 * mostly children first (a slice is recorded when it ends), so the parent
 * of a slice that arrives after it is rarely more than one below. */
#define AG_PARENT_SCAN 8

/* 64 bytes: the fast path finds a row with a shift. */
struct ag_row {
	const char *cat;
	char *name;
	uint32_t nlen;
	uint32_t hash; /* the low half of tp_hash_bytes (what the slots use) */
	uint64_t calls, total, min, max;
	/* What the children take: self is total - sub (mod 2^64, as int64),
	 * so that a slice with no children touches no self time. */
	uint64_t sub;
};

/* A slice of a thread that may still be a later slice's child or parent. */
struct ag_ent {
	/* AG_FOLD: several old entries folded into one (ag_room), and end is
	 * their durations' sum, what a parent subtracts (no later slice is
	 * their parent's child nor their child: their end is not needed).
	 * Only st[0] is ever folded. */
	uint64_t start;
	uint32_t row; /* AG_NONE: a name beyond the table */
	/* Between start and end: gcc then stores the two from two registers
	 * (ag_push) instead of loading them as a vector and taking it apart
	 * for the compares (three more instructions an event). */
	uint64_t end;
};

struct ag_thr {
	int64_t pid, tid;
	struct ag_ent *st;
	uint32_t n, cap;
	/* The latest end of the slices pushed in this file (pops leave it):
	 * a slice that starts after it has no parent among them, the common
	 * case of slices one after another.  0: none yet.  Also the span's
	 * end for them: the fast path updates nothing else (tp_agg_doc). */
	uint64_t maxend;
};

struct ag_step {
	uint64_t step, dur;
	int64_t pid;
};

/* A stable name's row.  Two in a cache line. */
struct ag_cache {
	const char *name, *cat;
	/* The first 8 bytes of a struct tp_event of this name as the fast
	 * path takes it (kind TP_EV_SLICE, name_stable 1, name_len; nargs
	 * masked out: AG_HEAD_MASK): one compare for the three.  Its nargs
	 * bits hold AG_HEAD_CHECK when the fast path must compare the event's
	 * text with the row's (format/event.h: a stable name's address may
	 * be freed and reused): for every name but those inside a read-only
	 * segment of our own image (literals: tp_agg.image), whose address
	 * is their text. */
	uint64_t head;
	uint32_t row;
};

/* The image field of struct tp_agg: the object this code is linked into
 * (libtraceprof.so, or a program linked with libtpcore.a,
 * common/self_image.h): the CUDA API names of the generated table and the
 * other literal names lie in its read-only segments, and their text cannot
 * change while this code is mapped. */
struct tp_agg {
	struct ag_row *rows;
	uint32_t nrows, rows_cap, nslots;
	size_t name_bytes;
	uint32_t *slots; /* row + 1; 0 empty */
	struct ag_cache cache[AG_CACHE_SETS][2];
	struct tp_image image;
	/* The last thread seen, always valid: &none when none (no room: the
	 * fast path never takes it), else in thr (updated when thr moves). */
	struct ag_thr *cur;
	struct ag_thr none;
	struct ag_thr *thr;
	/* thr[0 .. thr_kept) may hold a stack (st, cap: kept from an earlier
	 * file, or grown in this one), beyond it nothing. */
	size_t nthr, thr_cap, thr_kept;
	struct ag_step *steps;
	size_t nsteps, steps_cap;
	/* The start-up and teardown steps (args.phase, scripts/layout.spec):
	 * in "steps" as every step, and named in "step_phases" with their
	 * phase, so that readers of "steps" alone (summary --by rank) see
	 * what the events show.  At most two per process; a merged file's
	 * further ones are not named. */
	struct {
		struct ag_step s;
		const char *phase;
	} edges[8];
	size_t nedges;
	/* UINT64_MAX, 0: no event yet.  The fast path's slices update
	 * neither: their ends are their stacks' maxend, and their starts
	 * come after a slice of theirs that ag_slow counted (or that came
	 * after one, and so on). */
	uint64_t lo, hi;
	int64_t rank;
	uint64_t names_cut, calls_cut, steps_cut, self_folded, no_memory;
};

/* An empty cache entry's name: no event's (format/aggregate_life.c). */
extern const char tp_agg_no_name[1];

#endif
