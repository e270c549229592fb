/* The life of the table of a file's own events (format/aggregate.h):
 * made, emptied and kept for the next file, freed; and its output, the
 * footer's "aggregate" document.  What it counts as the events pass is
 * format/aggregate.c's. */
#include "format/aggregate_int.h"

#include <stdlib.h>
#include <string.h>

/* One table kept for the next file.  A window's file is opened and closed
 * many times, and growing each thread's stack and the rows anew for every
 * file (realloc, then fresh memory touched) was a fifth of the table's
 * instructions in bench_json's 1 MiB files.  A freed table is emptied and
 * kept with its arrays (stacks up to AG_SPARE_STACK entries, for up to
 * AG_SPARE_THREADS threads; rows and steps up to AG_SPARE_ROWS and
 * AG_SPARE_STEPS: at most about 1.6 MiB, most of it the stacks), and the next
 * tp_agg_new takes it.  The slot is taken and filled by atomic exchange,
 * so that a table is never in two writers' hands even if two threads were
 * to open or close files at once. */
#define AG_SPARE_STACK 1024
#define AG_SPARE_THREADS 64
#define AG_SPARE_ROWS 1024
#define AG_SPARE_STEPS 1024
static struct tp_agg *ag_spare;

/* An empty cache entry's name: no event's. */
const char tp_agg_no_name[1];

static void ag_cache_clear(struct tp_agg *a)
{
	memset(a->cache, 0, sizeof(a->cache));
	for (size_t i = 0; i < AG_CACHE_SETS; i++)
		a->cache[i][0].name = a->cache[i][1].name = tp_agg_no_name;
}

static void ag_destroy(struct tp_agg *a)
{
	if (a->rows)
		for (uint32_t i = 0; i < a->nrows; i++)
			free(a->rows[i].name);
	for (size_t i = 0; i < a->thr_kept; i++)
		free(a->thr[i].st);
	free(a->rows);
	free(a->slots);
	free(a->thr);
	free(a->steps);
	free(a);
}

struct tp_agg *tp_agg_new(int64_t rank)
{
	/* Acquire: pairs with the release in tp_agg_free's exchange, so that
	 * the emptied table's contents are seen whole. */
	struct tp_agg *a = __atomic_exchange_n(&ag_spare, NULL, __ATOMIC_ACQUIRE);
	if (a) {
		a->rank = rank;
		return a;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->rank = rank;
	a->lo = UINT64_MAX;
	a->cur = &a->none;
	ag_cache_clear(a);
	/* Once a table (kept for the next file after that): a walk of the
	 * loaded objects' headers, under the loader's lock. */
	tp_image_of(&tp_agg_no_name, &a->image);
	a->rows = malloc(AG_ROWS0 * sizeof(*a->rows));
	a->slots = calloc(2 * AG_ROWS0, sizeof(*a->slots));
	a->rows_cap = AG_ROWS0;
	a->nslots = 2 * AG_ROWS0;
	if (!a->rows || !a->slots) {
		ag_destroy(a);
		return NULL;
	}
	return a;
}

/* Empties a for the next file, keeping its arrays within the spare's
 * bounds; 0, or -1 when it is too big to keep. */
static int ag_empty(struct tp_agg *a)
{
	if (a->rows_cap > AG_SPARE_ROWS || a->no_memory)
		return -1;
	for (uint32_t i = 0; i < a->nrows; i++)
		free(a->rows[i].name);
	a->nrows = 0;
	a->name_bytes = 0;
	memset(a->slots, 0, a->nslots * sizeof(*a->slots));
	ag_cache_clear(a);
	size_t keep = 0;
	for (size_t i = 0; i < a->thr_kept; i++) {
		struct ag_thr *t = &a->thr[i];
		if (i < AG_SPARE_THREADS && t->cap <= AG_SPARE_STACK) {
			keep = i + 1;
			continue;
		}
		free(t->st);
		t->st = NULL;
		t->cap = 0;
	}
	a->thr_kept = keep;
	a->nthr = 0;
	a->cur = &a->none;
	a->nsteps = 0;
	a->nedges = 0;
	if (a->steps_cap > AG_SPARE_STEPS) {
		free(a->steps);
		a->steps = NULL;
		a->steps_cap = 0;
	}
	a->lo = UINT64_MAX;
	a->hi = 0;
	a->names_cut = a->calls_cut = a->steps_cut = a->self_folded = 0;
	return 0;
}

void tp_agg_free(struct tp_agg *a)
{
	if (!a)
		return;
	if (ag_empty(a) < 0) {
		ag_destroy(a);
		return;
	}
	/* Release: pairs with the acquire of the exchange in tp_agg_new (and
	 * acquire: the table this one replaces was put there by such a
	 * release, and is freed here). */
	struct tp_agg *old = __atomic_exchange_n(&ag_spare, a, __ATOMIC_ACQ_REL);
	if (old)
		ag_destroy(old);
}

void tp_agg_doc(const struct tp_agg *a, struct tp_doc *d)
{
	tp_doc_u64(d, "version", 1);
	tp_doc_i64(d, "rank", a->rank);
	uint64_t hi = a->hi;
	for (size_t i = 0; i < a->nthr; i++)
		if (a->thr[i].maxend > hi)
			hi = a->thr[i].maxend;
	tp_doc_u64(d, "span_ns", hi > a->lo ? hi - a->lo : 0);
	tp_doc_u64(d, "names_cut", a->names_cut + a->no_memory);
	tp_doc_u64(d, "calls_cut", a->calls_cut);
	tp_doc_u64(d, "steps_cut", a->steps_cut);
	tp_doc_u64(d, "self_folded", a->self_folded);
	/* [name, category, calls, total, self, min, max], ns */
	tp_doc_array(d, "rows");
	for (uint32_t i = 0; i < a->nrows; i++) {
		const struct ag_row *r = &a->rows[i];
		if (!r->calls)
			continue;
		tp_doc_array(d, NULL);
		tp_doc_strn(d, NULL, r->name, r->nlen);
		tp_doc_str(d, NULL, r->cat);
		tp_doc_u64(d, NULL, r->calls);
		tp_doc_u64(d, NULL, r->total);
		tp_doc_i64(d, NULL, (int64_t)(r->total - r->sub));
		tp_doc_u64(d, NULL, r->min);
		tp_doc_u64(d, NULL, r->max);
		tp_doc_end(d);
	}
	tp_doc_end(d);
	/* [step, duration ns, pid] */
	tp_doc_array(d, "steps");
	for (size_t i = 0; i < a->nsteps; i++) {
		tp_doc_array(d, NULL);
		tp_doc_u64(d, NULL, a->steps[i].step);
		tp_doc_u64(d, NULL, a->steps[i].dur);
		tp_doc_i64(d, NULL, a->steps[i].pid);
		tp_doc_end(d);
	}
	tp_doc_end(d);
	/* [step, pid, phase]: the steps of "steps" that are no iteration. */
	tp_doc_array(d, "step_phases");
	for (size_t i = 0; i < a->nedges; i++) {
		tp_doc_array(d, NULL);
		tp_doc_u64(d, NULL, a->edges[i].s.step);
		tp_doc_i64(d, NULL, a->edges[i].s.pid);
		tp_doc_str(d, NULL, a->edges[i].phase);
		tp_doc_end(d);
	}
	tp_doc_end(d);
}

size_t tp_agg_top(const struct tp_agg *a, struct tp_agg_top *out, size_t max)
{
	size_t n = 0;
	for (uint32_t i = 0; a && i < a->nrows && max; i++) {
		const struct ag_row *r = &a->rows[i];
		if (!r->calls || (n == max && r->total <= out[n - 1].total))
			continue;
		size_t k = n < max ? n++ : max - 1;
		while (k > 0 && out[k - 1].total < r->total) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = (struct tp_agg_top){ r->name, r->nlen, r->calls, r->total };
	}
	return n;
}

size_t tp_agg_nrows(const struct tp_agg *a)
{
	return a ? a->nrows : 0;
}

void tp_agg_row(const struct tp_agg *a, size_t i, struct tp_agg_top *out)
{
	const struct ag_row *r = &a->rows[i];
	*out = (struct tp_agg_top){ r->name, r->nlen, r->calls, r->total };
}
