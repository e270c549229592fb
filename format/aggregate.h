/* The table a file carries of its own events: what `traceprof summary`
 * prints, computed as the events pass through tp_writer_event() once, so
 * that a job's summary reads each file's tail instead of its events
 * (issue 35).  Format-neutral: the writers serialize it as a document
 * (format/event.h), the "aggregate" member of the footer.
 *
 * Per (name, category) of the slices: calls, total, self, min, max, in ns.
 * Self is a slice's duration minus its children's on the same (pid, tid),
 * nested as summary nests them (by start, the longer first; a child that
 * outlasts its parent counts up to the parent's end).  ProfilerStep#N
 * slices are the steps' table instead: step, duration, pid.  The span is
 * the first event's start to the last end, over every event.
 *
 * Bounded: at most TP_AGG_MAX_ROWS names (and TP_AGG_MAX_NAME_BYTES of
 * their text) and TP_AGG_MAX_STEPS steps; what does not fit is counted
 * (names_cut, calls_cut, steps_cut), as are the children whose self-time
 * bookkeeping a full per-thread stack had to fold (self_folded: their
 * parents' self times may then be off).
 *
 * Flush thread only, as the writer it belongs to. */
#ifndef TP_FORMAT_AGGREGATE_H
#define TP_FORMAT_AGGREGATE_H

#include "format/event.h"

#define TP_AGG_MAX_ROWS 4096
#define TP_AGG_MAX_NAME_BYTES (1u << 20)
#define TP_AGG_MAX_STEPS 16384
/* Open slices kept per (pid, tid) for self times. */
#define TP_AGG_STACK_MAX 4096

struct tp_agg;

/* NULL when out of memory (the file then has no table).  rank: the
 * header's, written with the table (a job's summary by rank reads only
 * the tables). */
struct tp_agg *tp_agg_new(int64_t rank);
void tp_agg_free(struct tp_agg *a);
void tp_agg_event(struct tp_agg *a, const struct tp_event *e);
/* Appends the table's members to d (inside an object the caller opened). */
void tp_agg_doc(const struct tp_agg *a, struct tp_doc *d);

/* One row of tp_agg_top(): name points into the table (valid until its next
 * event or its free: the caller copies it before either, on the same
 * thread). */
struct tp_agg_top {
	const char *name;
	uint32_t nlen;
	uint64_t calls, total; /* total: ns */
};

/* The table's rows with the largest totals so far, largest first (ties: the
 * row seen first), at most max of them; returns how many.  The live file's
 * "top" (collector/live.c).  A pass over the rows (at most
 * TP_AGG_MAX_ROWS), with an insertion into out for the few that beat its
 * last. */
size_t tp_agg_top(const struct tp_agg *a, struct tp_agg_top *out, size_t max);

/* The table's rows one by one, for a sum over several tables (the live
 * file's "top" over a window's parts): how many there are (NULL: 0), and
 * row i of them as tp_agg_top() gives it (calls 0: a row with no event). */
size_t tp_agg_nrows(const struct tp_agg *a);
void tp_agg_row(const struct tp_agg *a, size_t i, struct tp_agg_top *out);

#endif
