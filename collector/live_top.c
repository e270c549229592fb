/* The live file's "top" (collector/live_top.h): the sum by name over a
 * window's parts.  Flush thread only. */
#include "collector/live_top.h"

#include <stdlib.h>
#include <string.h>

#include "collector/flush_int.h"
#include "common/hash.h"
#include "format/aggregate.h"
#include "format/writer.h"

/* The parts of a window summed (more: over 400 GB at TRACEPROF_MAX_FILE_MB's
 * 100 MB parts; the first LT_PARTS are). */
#define LT_PARTS 4096

/* The sum by name of the rows of every part of a window (a window has
 * one part but past TRACEPROF_MAX_FILE_MB, and the same name in several):
 * rows whose names point into the parts' tables (valid while this pass
 * runs: the tables are the flush thread's), in an open-addressing table of
 * row indexes + 1 grown at half full.  Flush thread only; kept between
 * passes, so that a pass allocates only when a window has more names than
 * any before. */
struct lt_row {
	const char *name;
	uint32_t nlen;
	uint64_t hash, total, calls;
};
static struct {
	struct lt_row *rows;
	size_t n, cap;
	uint32_t *slots;
	size_t nslots; /* a power of two, 0 before the first */
} S;

/* Makes room for one more row.  Returns 0, or -1 (out of memory). */
static int lt_sum_room(void)
{
	if (S.n < S.cap && 2 * (S.n + 1) <= S.nslots)
		return 0;
	size_t cap = S.cap ? 2 * S.cap : 4096;
	struct lt_row *rows = realloc(S.rows, cap * sizeof(*rows));
	if (!rows)
		return -1;
	S.rows = rows;
	S.cap = cap;
	uint32_t *slots = calloc(2 * cap, sizeof(*slots));
	if (!slots)
		return -1;
	free(S.slots);
	S.slots = slots;
	S.nslots = 2 * cap;
	for (size_t r = 0; r < S.n; r++) {
		size_t at = S.rows[r].hash & (S.nslots - 1);
		while (S.slots[at])
			at = (at + 1) & (S.nslots - 1);
		S.slots[at] = (uint32_t)r + 1;
	}
	return 0;
}

/* Adds one part's row to the sum.  Returns 0, or -1 (out of memory). */
static int lt_sum_add(const struct tp_agg_top *row)
{
	if (lt_sum_room() < 0)
		return -1;
	uint64_t h = tp_hash_bytes(row->name, row->nlen);
	size_t at = h & (S.nslots - 1);
	for (; S.slots[at]; at = (at + 1) & (S.nslots - 1)) {
		struct lt_row *x = &S.rows[S.slots[at] - 1];
		if (x->hash == h && x->nlen == row->nlen && !memcmp(x->name, row->name, row->nlen)) {
			x->total += row->total;
			x->calls += row->calls;
			return 0;
		}
	}
	S.slots[at] = (uint32_t)S.n + 1;
	S.rows[S.n++] = (struct lt_row){ row->name, row->nlen, h, row->total, row->calls };
	return 0;
}

int tp_live_top_of(struct tp_agg *const *aggs, int n, struct tp_live_top *top)
{
	S.n = 0;
	if (S.nslots)
		memset(S.slots, 0, S.nslots * sizeof(*S.slots));
	for (int i = 0; i < n; i++) {
		size_t rows = tp_agg_nrows(aggs[i]);
		for (size_t k = 0; k < rows; k++) {
			struct tp_agg_top row;
			tp_agg_row(aggs[i], k, &row);
			if (row.calls && lt_sum_add(&row) < 0)
				return -1;
		}
	}
	if (!S.n)
		return 0;
	/* The TP_LIVE_TOP largest, largest first (ties: the row summed first). */
	const struct lt_row *best[TP_LIVE_TOP];
	int nb = 0;
	for (size_t r = 0; r < S.n; r++) {
		const struct lt_row *x = &S.rows[r];
		if (nb == TP_LIVE_TOP && x->total <= best[nb - 1]->total)
			continue;
		int k = nb < TP_LIVE_TOP ? nb++ : TP_LIVE_TOP - 1;
		while (k > 0 && best[k - 1]->total < x->total) {
			best[k] = best[k - 1];
			k--;
		}
		best[k] = x;
	}
	for (int k = 0; k < nb; k++) {
		size_t len = best[k]->nlen < TP_LIVE_TOP_NAME - 1 ? best[k]->nlen : TP_LIVE_TOP_NAME - 1;
		memcpy(top[k].name, best[k]->name, len);
		top[k].name[len] = '\0';
		top[k].total = best[k]->total;
		top[k].calls = best[k]->calls;
	}
	return nb;
}

int tp_live_top_sum(struct tp_live_top *top)
{
	if (!tp_fl.wsm.nwin)
		return 0;
	static struct tp_writer *w[LT_PARTS];
	static struct tp_agg *aggs[LT_PARTS];
	int nw = tp_fl_window_writers(&tp_fl.wsm.win[tp_fl.wsm.nwin - 1], w, LT_PARTS);
	for (int i = 0; i < nw; i++)
		aggs[i] = w[i]->agg;
	return tp_live_top_of(aggs, nw, top);
}
