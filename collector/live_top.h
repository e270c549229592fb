/* The live file's "top" (collector/live.c, docs/live.md): the newest
 * window's names by total time, summed exactly over all its parts. */
#ifndef TP_COLLECTOR_LIVE_TOP_H
#define TP_COLLECTOR_LIVE_TOP_H

#include <stdint.h>

#define TP_LIVE_TOP 10
/* Names are cut at TP_LIVE_TOP_NAME - 1 bytes (kernel names can be long). */
#define TP_LIVE_TOP_NAME 256

struct tp_live_top {
	char name[TP_LIVE_TOP_NAME];
	uint64_t total, calls; /* total: ns */
};

/* Flush thread: the newest window's TP_LIVE_TOP names with the largest
 * total time, largest first, summed by name over all the window's parts
 * (a window has one part but past TRACEPROF_MAX_FILE_MB; every part's table
 * stays until the window ends: collector/parts.c), from their tables
 * (format/aggregate.h), which hold what the flush thread converted so
 * far.  Returns how many were written to top (room for TP_LIVE_TOP), 0
 * when the window has no event yet (or there is none), or -1 when out of
 * memory; the caller keeps its last top then. */
int tp_live_top_sum(struct tp_live_top *top);

struct tp_agg;
/* The same over the tables aggs[0 .. n) (tables may be NULL: none). */
int tp_live_top_of(struct tp_agg *const *aggs, int n, struct tp_live_top *top);

#endif
