/* The table of a file's own events (format/aggregate.h).
 *
 * Cost: this runs for every event the flush thread writes, next to a JSON
 * formatter of about 650 instructions an event (bench_json), so the common
 * case (ag_fast, about 50 instructions, no call and no frame) is loads and
 * compares: the thread's stack from the last thread seen (events come in
 * runs of one thread), the name's row from a small cache keyed by the
 * name's address (stable names: CUDA API names, kernel names), one push and
 * the row's counts.  A name's text is compared (format/event.h asks it: an
 * address may be freed and reused) only where it can change: not for the
 * literals of our own image (common/self_image.h), among them every CUDA API
 * name.  What that case leaves out is kept where it costs nothing: a row's
 * self time as the children's time to subtract (a slice with no children
 * adds none), the span's end as each stack's latest end.  Everything else
 * (names hashed: common/hash.h; nesting; steps; instants and the rest) is
 * ag_slow's. */
#include "format/aggregate_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/layout.h"


static int ag_same_cat(const char *x, const char *y)
{
	return x == y || !strcmp(x, y);
}

/* Doubles the rows' room and rehashes the slots; 0 or -1. */
static int ag_grow(struct tp_agg *a)
{
	uint32_t cap = 2 * a->rows_cap, ns = 2 * cap;
	struct ag_row *rows = realloc(a->rows, cap * sizeof(*rows));
	if (!rows)
		return -1;
	a->rows = rows;
	uint32_t *slots = calloc(ns, sizeof(*slots));
	if (!slots)
		return -1;
	for (uint32_t r = 0; r < a->nrows; r++) {
		uint32_t i = a->rows[r].hash & (ns - 1);
		while (slots[i])
			i = (i + 1) & (ns - 1);
		slots[i] = r + 1;
	}
	free(a->slots);
	a->slots = slots;
	a->nslots = ns;
	a->rows_cap = cap;
	return 0;
}

/* The row of (name, cat) from the hash table, added when new; AG_NONE when
 * the table is full (counted). */
static uint32_t ag_lookup(struct tp_agg *a, const char *name, uint32_t nlen, const char *cat)
{
	uint64_t h = tp_hash_bytes(name, nlen);
	for (uint32_t i = (uint32_t)h & (a->nslots - 1);; i = (i + 1) & (a->nslots - 1)) {
		uint32_t s = a->slots[i];
		if (!s) {
			if (a->nrows == TP_AGG_MAX_ROWS ||
			    a->name_bytes + nlen > TP_AGG_MAX_NAME_BYTES) {
				a->names_cut++;
				return AG_NONE;
			}
			if (a->nrows == a->rows_cap) {
				if (ag_grow(a) < 0) {
					a->no_memory++;
					return AG_NONE;
				}
				return ag_lookup(a, name, nlen, cat);
			}
			char *copy = malloc(nlen ? nlen : 1);
			if (!copy) {
				a->no_memory++;
				return AG_NONE;
			}
			memcpy(copy, name, nlen);
			struct ag_row *r = &a->rows[a->nrows];
			memset(r, 0, sizeof(*r));
			r->cat = cat;
			r->name = copy;
			r->nlen = nlen;
			r->hash = (uint32_t)h;
			r->min = UINT64_MAX;
			a->name_bytes += nlen;
			a->slots[i] = ++a->nrows;
			return a->nrows - 1;
		}
		const struct ag_row *r = &a->rows[s - 1];
		if (r->hash == (uint32_t)h && r->nlen == nlen && !memcmp(r->name, name, nlen) &&
		    ag_same_cat(r->cat, cat))
			return s - 1;
	}
}

/* n bytes equal: names are mostly short (CUDA API names), and a call to
 * memcmp costs more than comparing them here. */
static inline int ag_eq(const char *x, const char *y, uint32_t n)
{
	if (n >= 8 && n <= 16) {
		uint64_t a0, b0, a1, b1;
		memcpy(&a0, x, 8);
		memcpy(&b0, y, 8);
		memcpy(&a1, x + n - 8, 8);
		memcpy(&b1, y + n - 8, 8);
		return ((a0 ^ b0) | (a1 ^ b1)) == 0;
	}
	if (n > 16 && n <= 32) {
		uint64_t a0, b0, a1, b1, a2, b2, a3, b3;
		memcpy(&a0, x, 8);
		memcpy(&b0, y, 8);
		memcpy(&a1, x + 8, 8);
		memcpy(&b1, y + 8, 8);
		memcpy(&a2, x + n - 16, 8);
		memcpy(&b2, y + n - 16, 8);
		memcpy(&a3, x + n - 8, 8);
		memcpy(&b3, y + n - 8, 8);
		return ((a0 ^ b0) | (a1 ^ b1) | (a2 ^ b2) | (a3 ^ b3)) == 0;
	}
	return !memcmp(x, y, n);
}

/* The first 8 bytes of a struct tp_event: kind, name_stable, nargs,
 * name_len, with no padding. */
_Static_assert(offsetof(struct tp_event, name_len) == 4 && offsetof(struct tp_event, cat) == 8,
	       "struct tp_event's head is its first 8 bytes");
static inline uint64_t ag_head(uint8_t kind, uint8_t stable, uint16_t nargs, uint32_t nlen)
{
	struct tp_event x = { .kind = kind, .name_stable = stable, .nargs = nargs, .name_len = nlen };
	uint64_t h;
	memcpy(&h, &x, sizeof(h));
	return h;
}
/* What of the head the cache compares: all but nargs. */
#define AG_HEAD_MASK ag_head(0xff, 0xff, 0, UINT32_MAX)
#define AG_HEAD_CHECK ag_head(0, 0, 1, 0)


/* Names beyond the table are looked up again each time: a full table is
 * counted per call (calls_cut), and rare. */
static uint32_t ag_row_of(struct tp_agg *a, const struct tp_event *e)
{
	struct ag_cache *set = NULL;
	if (e->name_stable) {
		set = a->cache[AG_CACHE_SET(e->name)];
		for (int w = 0; w < 2; w++) {
			const struct ag_cache *c = &set[w];
			if (c->name == e->name &&
			    (c->head & AG_HEAD_MASK) == ag_head(TP_EV_SLICE, 1, 0, e->name_len) &&
			    c->cat == e->cat && ag_eq(a->rows[c->row].name, e->name, e->name_len))
				return c->row;
		}
	}
	uint32_t row = ag_lookup(a, e->name, e->name_len, e->cat);
	if (set && row != AG_NONE) {
		/* The new entry first, the one it displaces second: a stale
		 * entry of a reused address fails the text compare until it
		 * goes. */
		set[1] = set[0];
		struct ag_cache *c = &set[0];
		c->name = e->name;
		c->head = ag_head(TP_EV_SLICE, 1, 0, e->name_len);
		c->cat = e->cat;
		c->row = row;
		if (!tp_image_ro_holds(&a->image, e->name, e->name_len))
			c->head |= AG_HEAD_CHECK;
	}
	return row;
}

static struct ag_thr *ag_thread(struct tp_agg *a, int64_t pid, int64_t tid)
{
	struct ag_thr *t = a->cur;
	if (t != &a->none && t->pid == pid && t->tid == tid)
		return t;
	for (size_t i = 0; i < a->nthr; i++)
		if (a->thr[i].pid == pid && a->thr[i].tid == tid)
			return a->cur = &a->thr[i];
	if (a->nthr == a->thr_cap) {
		size_t cap = a->thr_cap ? 2 * a->thr_cap : 16;
		struct ag_thr *x = realloc(a->thr, cap * sizeof(*x));
		if (!x) {
			a->cur = &a->none; /* it may point into the old thr */
			return NULL;
		}
		a->thr = x;
		a->thr_cap = cap;
	}
	t = &a->thr[a->nthr];
	if (a->nthr < a->thr_kept) {
		/* A stack kept from an earlier file. */
		t->n = 0;
		t->maxend = 0;
	} else {
		memset(t, 0, sizeof(*t));
		a->thr_kept = a->nthr + 1;
	}
	t->pid = pid;
	t->tid = tid;
	a->nthr++;
	return a->cur = t;
}

/* ProfilerStep#N, as summary's ^ProfilerStep#(\d+)$: its number in *n. */
static int ag_step_name(const char *s, uint32_t len, uint64_t *n)
{
	static const char pre[] = TP_STEP_PREFIX;
	const uint32_t pl = sizeof(pre) - 1;
	/* The first byte first: this runs for every slice, and a call to
	 * memcmp for each CUDA call's name cost more than the rest of the
	 * table's work. */
	if (len <= pl || len > pl + 19 || s[0] != 'P' || memcmp(s, pre, pl))
		return 0;
	uint64_t v = 0;
	for (uint32_t i = pl; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*n = v;
	return 1;
}

static void ag_step(struct tp_agg *a, uint64_t n, uint64_t dur, int64_t pid)
{
	if (a->nsteps == a->steps_cap) {
		size_t cap = a->steps_cap ? 2 * a->steps_cap : 64;
		struct ag_step *x = cap > TP_AGG_MAX_STEPS ? NULL : realloc(a->steps, cap * sizeof(*x));
		if (!x) {
			a->steps_cut++;
			return;
		}
		a->steps = x;
		a->steps_cap = cap;
	}
	a->steps[a->nsteps++] = (struct ag_step){ .step = n, .dur = dur, .pid = pid };
}

/* A step's phase (start-up, teardown, whole run: its args.phase), as one
 * of the layout's constant strings, or NULL for an iteration. */
static const char *ag_step_phase(const struct tp_event *e)
{
	static const char *const known[] = { TP_STEP_PHASE_STARTUP, TP_STEP_PHASE_TEARDOWN,
					     TP_STEP_PHASE_WHOLE };
	for (uint16_t i = 0; e->args && i < e->nargs; i++) {
		const struct tp_arg *x = &e->args[i];
		if (x->type != TP_VAL_STR || x->klen != sizeof(TP_STEP_PHASE_ARG) - 1 ||
		    memcmp(x->key, TP_STEP_PHASE_ARG, x->klen))
			continue;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (x->n == strlen(known[k]) && !memcmp(x->s, known[k], x->n))
				return known[k];
	}
	return NULL;
}

/* What a child entry takes from a parent that ends at pe. */
static uint64_t ag_overlap(const struct ag_ent *c, uint64_t pe)
{
	if (c->row == AG_FOLD)
		return c->end;
	uint64_t end = c->end < pe ? c->end : pe;
	return end > c->start ? end - c->start : 0;
}

/* Room for one more entry: grows the stack, or folds its older half into
 * one entry (what a later parent that encloses them all subtracts). */
static int ag_room(struct tp_agg *a, struct ag_thr *t)
{
	if (t->n < t->cap)
		return 1;
	if (t->cap < TP_AGG_STACK_MAX) {
		uint32_t cap = t->cap ? 2 * t->cap : 32;
		struct ag_ent *x = realloc(t->st, cap * sizeof(*x));
		if (x) {
			t->st = x;
			t->cap = cap;
			return 1;
		}
		if (!t->cap)
			return 0;
	}
	uint32_t half = t->n / 2;
	struct ag_ent f = { .start = t->st[0].start, .end = 0, .row = AG_FOLD };
	for (uint32_t i = 0; i < half; i++) {
		const struct ag_ent *x = &t->st[i];
		f.end += x->row == AG_FOLD ? x->end : x->end - x->start;
	}
	t->st[0] = f;
	memmove(&t->st[1], &t->st[half], (t->n - half) * sizeof(*t->st));
	t->n -= half - 1;
	a->self_folded += half;
	return 1;
}

/* A call of dur whose children took `children` of it. */
static inline void ag_count(struct ag_row *r, uint64_t dur, uint64_t children)
{
	r->calls++;
	r->total += dur;
	r->sub += children < dur ? children : dur;
	if (dur < r->min)
		r->min = dur;
	if (dur > r->max)
		r->max = dur;
}

static __attribute__((noinline)) void ag_slice(struct tp_agg *a, const struct tp_event *e,
					       uint64_t s, uint64_t end)
{
	uint64_t dur = end - s, stepno = 0;
	uint32_t row = AG_NONE;
	if (ag_step_name(e->name, e->name_len, &stepno)) {
		/* A step is no parent and no child for self time (summary's
		 * events path skips it too): it is written after everything
		 * in it, and on the stack it would take the place of the
		 * slices it holds, so that a child written later still (a
		 * start/end range ended on another thread) would find no
		 * parent. */
		const char *phase = ag_step_phase(e);
		ag_step(a, stepno, dur, e->pid);
		if (phase && a->nedges < sizeof(a->edges) / sizeof(a->edges[0]))
			a->edges[a->nedges++] = (typeof(a->edges[0])){
				{ .step = stepno, .dur = dur, .pid = e->pid }, phase };
		return;
	}
	row = ag_row_of(a, e);
	if (row == AG_NONE)
		a->calls_cut++;
	struct ag_thr *t = ag_thread(a, e->pid, e->tid);
	uint64_t children = 0;
	/* A slice of no duration takes nothing from a parent nor gives to a
	 * child: it stays out of the stack. */
	if (t && dur && ag_room(a, t)) {
		struct ag_ent *st = t->st;
		/* Slices that arrived first but lie wholly after this one stay
		 * (GPU annotations arrive after all their stream's kernels). */
		uint32_t after = t->n;
		while (after && st[after - 1].row != AG_FOLD && st[after - 1].start >= end)
			after--;
		/* Its children that arrived first: what started after it, or at
		 * its start and ended sooner (summary sorts by start, the longer
		 * first; of two equal slices the first is the parent). */
		uint32_t c = after;
		while (c) {
			const struct ag_ent *x = &st[c - 1];
			if (x->start < s ||
			    (x->start == s && x->row != AG_FOLD && x->end >= end))
				break;
			children += ag_overlap(x, end);
			c--;
		}
		/* A parent that arrived first: the nearest entry below still open
		 * at s. */
		uint32_t lim = c > AG_PARENT_SCAN ? c - AG_PARENT_SCAN : 0;
		if (t->maxend <= s)
			lim = c;
		for (uint32_t i = c; i > lim; i--) {
			const struct ag_ent *p = &st[i - 1];
			if (p->row == AG_FOLD || p->end <= s)
				continue;
			if (p->row != AG_NONE)
				a->rows[p->row].sub += (end < p->end ? end : p->end) - s;
			break;
		}
		/* This slice replaces its children, below those after it. */
		if (after < t->n)
			memmove(&st[c + 1], &st[after], (t->n - after) * sizeof(*st));
		st[c] = (struct ag_ent){ .start = s, .end = end, .row = row };
		t->n = c + 1 + (t->n - after);
		if (end > t->maxend)
			t->maxend = end;
	}
	if (row != AG_NONE)
		ag_count(&a->rows[row], dur, children);
}

/* The fast path's push and counts: a slice with no child nor parent on
 * its thread's stack (so far), whose row is known. */
static inline __attribute__((always_inline)) void ag_push(struct tp_agg *a, struct ag_thr *t,
							  uint32_t row, uint64_t s, uint64_t end)
{
	struct ag_ent *x = &t->st[t->n++];
	x->start = s;
	x->end = end;
	x->row = row;
	t->maxend = end;
	struct ag_row *r = &a->rows[row];
	uint64_t dur = end - s;
	r->calls++;
	r->total += dur;
	if (dur < r->min)
		r->min = dur;
	if (dur > r->max)
		r->max = dur;
}

/* What ag_fast did. */
enum { AG_SLOW, AG_DONE, AG_CHECK };

/* The common case, kept to a few loads and no call (so no frame): a slice
 * of the last thread seen that starts after everything on its stack ended
 * (no child, no parent among them: it is pushed), with a name the cache
 * knows (not a step: steps never enter the cache).  maxend - 1 < s:
 * maxend <= s, and not 0, so that the thread has a slice before this one,
 * whose start was the span's (ag_slow).  AG_CHECK: all but the text of a
 * name whose entry (*cp) says to compare it (ag_fast_check). */
static inline __attribute__((always_inline)) int ag_fast(struct tp_agg *a,
							 const struct tp_event *e,
							 const struct ag_cache **cp)
{
	struct ag_thr *t = a->cur;
	uint64_t s = e->ts, end = e->end;
	if (t->pid != e->pid || t->tid != e->tid || t->maxend - 1 >= s || end <= s ||
	    t->n >= t->cap)
		return AG_SLOW;
	const struct ag_cache *c = a->cache[AG_CACHE_SET(e->name)];
	if (c->name != e->name && (++c)->name != e->name)
		return AG_SLOW;
	uint64_t head;
	memcpy(&head, e, sizeof(head));
	/* The head: a slice, name_stable, the entry's name_len, and no text
	 * to compare. */
	head &= AG_HEAD_MASK;
	if (head != c->head || c->cat != e->cat) {
		if ((head | AG_HEAD_CHECK) != c->head || c->cat != e->cat)
			return AG_SLOW;
		*cp = c;
		return AG_CHECK;
	}
	ag_push(a, t, c->row, s, end);
	return AG_DONE;
}

/* AG_CHECK's text compare, and the push when equal: 1, or 0 (not pushed). */
static int ag_fast_row(struct tp_agg *a, const struct tp_event *e, const struct ag_cache *c)
{
	if (!ag_eq(a->rows[c->row].name, e->name, e->name_len))
		return 0;
	ag_push(a, a->cur, c->row, e->ts, e->end);
	return 1;
}

/* Every event the fast path leaves: the span, then a slice's row, nesting
 * and counts.  The first slice after a change of thread tries the fast
 * path again on its thread (events come in runs of one thread). */
static __attribute__((noinline)) void ag_slow(struct tp_agg *a, const struct tp_event *e)
{
	uint64_t s = e->ts, end = e->ts;
	if (e->kind == TP_EV_SLICE && e->end > e->ts)
		end = e->end;
	if (s < a->lo)
		a->lo = s;
	if (end > a->hi)
		a->hi = end;
	if (e->kind != TP_EV_SLICE)
		return;
	const struct ag_thr *t = a->cur;
	if ((t->pid != e->pid || t->tid != e->tid) && ag_thread(a, e->pid, e->tid)) {
		const struct ag_cache *c = NULL;
		int r = ag_fast(a, e, &c);
		if (r == AG_DONE || (r == AG_CHECK && ag_fast_row(a, e, c)))
			return;
	}
	ag_slice(a, e, s, end);
}

/* Out of line, so that the common case makes only tail calls. */
static __attribute__((noinline)) void ag_fast_check(struct tp_agg *a, const struct tp_event *e,
						    const struct ag_cache *c)
{
	if (!ag_fast_row(a, e, c))
		ag_slow(a, e);
}

void tp_agg_event(struct tp_agg *a, const struct tp_event *e)
{
	const struct ag_cache *c = NULL;
	int r = ag_fast(a, e, &c);
	/* Tail calls only: the common case needs no frame. */
	if (r == AG_CHECK)
		ag_fast_check(a, e, c);
	else if (r == AG_SLOW)
		ag_slow(a, e);
}
