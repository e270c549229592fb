/* Correlation: which API call launched a GPU event (collector/gpu.h tells
 * the scheme).  Three maps and a list:
 *   corr   CUPTI correlation + 1 -> our external id; aux: when noted, 0 once
 *          its GPU event was written;
 *   api    external id -> the API event's start (ns); aux: its correlation
 *          number in this trace (tp_gpu_note_api());
 *   outer  CUPTI's runtime records that came without an id of ours:
 *          correlation + 1 -> start (ns); aux: duration << 32 | CUPTI's
 *          thread id (link_outer());
 *   done   thread id + 1 -> the latest end (ns) of its API events noted so
 *          far (link_outer()'s streaming);
 *   notes  the API events noted for the windows not written yet, sorted by
 *          start when a window is written and at each drain while one
 *          records. */
#include <stdlib.h>
#include <string.h>

#include "collector/annos.h"
#include "collector/gpu_internal.h"
#include "collector/gpu_map.h"
#include "collector/thread.h"
#include "common/clock.h"

struct note {
	uint64_t start, end; /* ns */
	uint64_t ext;
	int64_t tid;
};

static struct {
	struct tp_gpu_map corr, api, outer, done;
	uint64_t next_corr; /* the last correlation number handed out */
	struct note *notes;
	size_t nnotes, notes_cap;
	size_t nsorted; /* notes[0, nsorted) are in order of start */
} C;

/* At most this many API events are noted for link_outer() (32 MB), as many
 * as GPU events may wait (collector/gpu.c); past it, GPU events of calls
 * inside a hidden runtime stay unlinked (written, without a correlation). */
#define MAX_NOTES (1u << 20)

/* Our API events may start this much before the CUPTI record of the call
 * that contains them: the same CLOCK_MONOTONIC reached two ways (TSC ticks
 * converted, CUPTI's timestamp callback) differs by well under this. */
#define LINK_SLACK_NS 2000

void tp_gpu_corr_reset(void)
{
	tp_gpu_map_free(&C.corr);
	tp_gpu_map_free(&C.api);
	tp_gpu_map_free(&C.outer);
	tp_gpu_map_free(&C.done);
	free(C.notes);
	memset(&C, 0, sizeof(C));
}

uint64_t tp_gpu_note_api(int64_t tid, uint64_t start_ticks, uint64_t start_ns, uint64_t end_ns)
{
	/* GPU work will be correlated: keep the annotations that enclose it
	 * (gpu_user_annotation events, written with the window's GPU events). */
	tp_annos_keep();
	/* A thread's records are converted in the order it committed them,
	 * which for calls that do not nest is their order in time: every call
	 * of tid that ended before this one started is noted by now
	 * (link_outer()'s streaming). */
	uint64_t *done = tp_gpu_map_get(&C.done, (uint64_t)tid + 1, NULL);
	if (done && *done < end_ns)
		*done = end_ns;
	else if (!done)
		tp_gpu_map_put(&C.done, (uint64_t)tid + 1, end_ns, 0);
	uint64_t corr = C.next_corr + 1;
	uint64_t ext = tp_gpu_ext_id(tid, start_ticks);
	if (tp_gpu_map_put(&C.api, ext, start_ns, corr) != 0)
		return 0;
	if (C.nnotes == C.notes_cap && C.notes_cap < MAX_NOTES) {
		size_t cap = C.notes_cap ? C.notes_cap * 2 : 4096;
		struct note *n = realloc(C.notes, cap * sizeof(*n));
		if (n) {
			C.notes = n;
			C.notes_cap = cap;
		}
	}
	if (C.nnotes < C.notes_cap)
		C.notes[C.nnotes++] = (struct note){ start_ns, end_ns, ext, tid };
	return C.next_corr = corr;
}

void tp_gpu_corr_note_external(uint32_t corr, uint64_t ext)
{
	tp_gpu_map_put(&C.corr, (uint64_t)corr + 1, ext, tp_clock_monotonic_ns());
}

/* One with an id of ours needs nothing more (CUPTI writes a call's
 * external-correlation record just before its API record). */
int tp_gpu_corr_note_outer(uint32_t corr, uint64_t start_ns, uint64_t dur_ns, uint32_t thread)
{
	uint64_t key = (uint64_t)corr + 1;
	if (tp_gpu_map_get(&C.corr, key, NULL))
		return 0;
	if (dur_ns > UINT32_MAX)
		dur_ns = UINT32_MAX;
	return tp_gpu_map_put(&C.outer, key, start_ns, dur_ns << 32 | thread) == 0;
}

static int note_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct note *)a)->start, y = ((const struct note *)b)->start;
	return (x > y) - (x < y);
}

void tp_gpu_corr_window_begin(void)
{
	/* At each drain too (tp_gpu_stream_events()): only the notes new
	 * since the last sort are sorted, then merged from the end with the
	 * sorted ones, of which only those later than the new ones' first
	 * move (few: the new calls are the latest). */
	size_t p = C.nsorted, m = C.nnotes - p;
	if (!m)
		return;
	qsort(C.notes + p, m, sizeof(*C.notes), note_cmp);
	if (p && C.notes[p - 1].start > C.notes[p].start) {
		struct note *t = malloc(m * sizeof(*t));
		if (!t) {
			qsort(C.notes, C.nnotes, sizeof(*C.notes), note_cmp);
		} else {
			memcpy(t, C.notes + p, m * sizeof(*t));
			for (size_t i = p, j = m, k = C.nnotes; j;) {
				if (i && C.notes[i - 1].start > t[j - 1].start)
					C.notes[--k] = C.notes[--i];
				else
					C.notes[--k] = t[--j];
			}
			free(t);
		}
	}
	C.nsorted = C.nnotes;
}

/* Drops the notes that started before `before` (sorted or not). */
static void notes_drop_before(uint64_t before)
{
	size_t k = 0, sorted = 0;
	for (size_t i = 0; i < C.nnotes; i++)
		if (C.notes[i].start >= before) {
			sorted += i < C.nsorted; /* an ordered prefix stays one */
			C.notes[k++] = C.notes[i];
		}
	C.nnotes = k;
	C.nsorted = sorted;
}

/* CUPTI gives a GPU event the correlation of the outermost CUDA call that
 * caused it, and records no driver call made inside a runtime call.  When
 * that outer call is one traceprof could not interpose (nvcc's static
 * runtime inside the program, the runtime inside cuBLAS and other NVIDIA
 * libraries), the id our driver wrapper pushed inside it reaches no record.
 * The outer call's API record still says when and on which thread it ran:
 * our API event on that thread that overlaps it most is the driver call it
 * made (measured on an H100: the runtime's own work is about a microsecond
 * on either side of it).  Links the correlation to that event's id and
 * returns the id, or 0.  Notes sorted by start.
 *
 * streaming (while the window records, at each drain): only once every
 * call of ours that can overlap the record is noted, so that the link is
 * the one the window's end would make, never one made from part of the
 * candidates (a link is kept once made).  Time alone cannot tell: a thread
 * preempted between its call's end and its record's commit is converted
 * after other threads' later calls.  So the rule is the thread's own order:
 * once a call of that thread that ended after the record's end (plus the
 * clocks' skew) is noted, every call of it that started before the
 * record's end is too (tp_gpu_note_api()), unless the two nest, and a call
 * of ours cannot hold the outermost call's record nor outlast it from
 * inside.  A record whose thread traceprof does not know waits for the
 * window's end. */
static uint64_t link_outer(uint32_t corr, int streaming)
{
	uint64_t key = (uint64_t)corr + 1, *aux = NULL;
	uint64_t *start = tp_gpu_map_get(&C.outer, key, &aux);
	if (!start)
		return 0;
	uint64_t s = *start, e = s + (*aux >> 32);
	/* -1 (a thread that never recorded, a platform whose CUPTI ids differ):
	 * any thread's overlap counts. */
	int64_t tid = tp_threads_tid_of_cupti((uint32_t)*aux);
	if (streaming) {
		uint64_t *done = tid < 0 ? NULL : tp_gpu_map_get(&C.done, (uint64_t)tid + 1, NULL);
		if (!done || *done < e + LINK_SLACK_NS)
			return 0; /* not yet: a later drain or the window's end links it */
	}
	uint64_t from = s > LINK_SLACK_NS ? s - LINK_SLACK_NS : 0;
	size_t lo = 0, hi = C.nnotes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (C.notes[mid].start < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t best = 0, ext = 0;
	for (size_t i = lo; i < C.nnotes && C.notes[i].start <= e; i++) {
		const struct note *n = &C.notes[i];
		uint64_t a = n->start > s ? n->start : s, b = n->end < e ? n->end : e;
		if ((tid < 0 || n->tid == tid) && b > a && b - a > best) {
			best = b - a;
			ext = n->ext;
		}
	}
	if (ext)
		tp_gpu_map_put(&C.corr, key, ext, tp_clock_monotonic_ns());
	return ext;
}

/* outer: may link through CUPTI's record of a hidden runtime call, which
 * needs the notes sorted (tp_gpu_corr_window_begin()); 2: while the window
 * records (link_outer()'s streaming). */
static int corr_find(uint32_t corr, struct tp_gpu_link *l, int outer)
{
	memset(l, 0, sizeof(*l));
	uint64_t *api_corr = NULL;
	uint64_t *ext = tp_gpu_map_get(&C.corr, (uint64_t)corr + 1, &l->noted);
	if (!ext && outer && link_outer(corr, outer == 2))
		ext = tp_gpu_map_get(&C.corr, (uint64_t)corr + 1, &l->noted);
	if (!ext)
		return 0;
	l->ext = *ext;
	uint64_t *api = tp_gpu_map_get(&C.api, *ext, &api_corr);
	if (api) {
		l->has_api = 1;
		l->api_ns = *api;
		l->number = *api_corr;
	}
	return 1;
}

int tp_gpu_corr_find(uint32_t corr, struct tp_gpu_link *l)
{
	return corr_find(corr, l, 1);
}

int tp_gpu_corr_find_streaming(uint32_t corr, struct tp_gpu_link *l)
{
	return corr_find(corr, l, 2);
}

void tp_gpu_corr_done(struct tp_gpu_link *l)
{
	/* No put since tp_gpu_corr_find(): the pointer is still the entry's. */
	if (l->noted)
		*l->noted = 0;
}

/* HTA pairs wait_on_cuda_event_record_corr_id with the cudaEventRecord's
 * "correlation", so CUPTI's own number would name an unrelated call. */
int64_t tp_gpu_corr_record_number(uint32_t corr)
{
	uint64_t *num;
	uint64_t *ext = corr ? tp_gpu_map_get(&C.corr, (uint64_t)corr + 1, NULL) : NULL;
	if (!ext || !tp_gpu_map_get(&C.api, *ext, &num) || !*num)
		return -1;
	return (int64_t)*num;
}

static int keep_api(uint64_t k, uint64_t v, uint64_t a, void *ctx)
{
	(void)k;
	(void)a;
	return v > *(uint64_t *)ctx;
}

static int keep_corr(uint64_t k, uint64_t v, uint64_t a, void *ctx)
{
	(void)k;
	(void)v;
	/* aux: the time it was noted; 0 once its GPU event is written. */
	return a != 0 && a > *(uint64_t *)ctx;
}

void tp_gpu_corr_window_end(uint64_t last_ns)
{
	/* API records up to this window's end were written here or into an
	 * earlier window: no later window can link to them. */
	tp_gpu_map_filter(&C.api, keep_api, &last_ns);
	uint64_t zero = 0;
	tp_gpu_map_filter(&C.corr, keep_corr, &zero);
	/* The same for the calls' times, and CUPTI's records of the calls. */
	notes_drop_before(last_ns + 1);
	tp_gpu_map_filter(&C.outer, keep_api, &last_ns);
	/* A thread that made no call since: its next one makes it again. */
	tp_gpu_map_filter(&C.done, keep_api, &last_ns);
}

void tp_gpu_corr_prune(uint64_t before)
{
	tp_gpu_map_filter(&C.api, keep_api, &before);
	tp_gpu_map_filter(&C.corr, keep_corr, &before);
	notes_drop_before(before);
	tp_gpu_map_filter(&C.outer, keep_api, &before);
	tp_gpu_map_filter(&C.done, keep_api, &before);
}
