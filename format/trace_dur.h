/* The exact durations of the trace layout (format/trace_dur.c): "dur"
 * written as double(end) - double(ts), so that a reader's double sum
 * ts + dur lands exactly on the slice's end (the comment in trace_dur.c
 * says why and how). */
#ifndef TP_FORMAT_TRACE_DUR_H
#define TP_FORMAT_TRACE_DUR_H

#include <stdint.h>

/* Writes ,"dur":.. for a slice from s to e (ns relative to the trace's
 * base, 0 <= s <= e < 2^53) at d; returns the end.  d has room for the
 * 41 bytes that format/trace.c reserves for it (in TR_HEAD_MAX). */
char *tp_trace_put_dur(char *d, int64_t s, int64_t e);

#endif
