/* The Chrome / Kineto trace layout (docs/trace-format.md):
 *
 *   {"schemaVersion":1,"traceName":...,"displayTimeUnit":"ms",
 *    "baseTimeNanoseconds":...,"distributedInfo":{...},"deviceProperties":[...],
 *    "traceEvents":[ event, event, ... ],
 *    "traceprof":{...}}
 *
 * Event times are given in CLOCK_MONOTONIC nanoseconds and written as
 * microseconds relative to baseTimeNanoseconds: ts with 3 decimals, dur as
 * double(end) - double(ts), exactly (up to about 10 decimals; see
 * tp_trace_put_dur() in trace_dur.c), so that readers' double sums ts + dur land
 * exactly on the end. */
#ifndef TP_FORMAT_TRACE_H
#define TP_FORMAT_TRACE_H

#include <stdint.h>

#include "format/event.h"
#include "format/json.h"

/* Room for the text ,"pid":P,"tid":T: two keys of 7 bytes and two numbers
 * of at most 20, rounded up to whole words (it is copied as one block). */
#define TP_TRACE_IDS_MAX 56

/* Room for an event's fixed prefix "ph":"X","cat":"CAT","name": (copied as
 * one block): 16 to 24 bytes of ph, 9 of the name's key, and a category of
 * up to 31 bytes (all of traceprof's are). */
#define TP_TRACE_PRE_MAX 64

struct tp_trace {
	struct tp_json j;
	/* base (wall-clock ns) minus the wall-clock offset of the monotonic
	 * clock: ts = mono_ns - mono_base. */
	int64_t mono_base;
	int64_t pid;
	uint64_t events;
	int nfirst; /* 0 until the first event is written */
	/* The text ,"pid":P,"tid":T of the last event written through the head
	 * writers: events come in runs of one thread (the flush thread drains
	 * one ring at a time), so it is formatted once per run.  ids_len 0:
	 * nothing cached (a zeroed tp_trace is valid). */
	int64_t ids_pid, ids_tid;
	size_t ids_len;
	char ids[TP_TRACE_IDS_MAX];
	/* The text "ph":PH,"cat":"CAT","name": of the last event written
	 * through the head writers, for its ph literal and category pointer:
	 * categories are a few constant strings and events come in runs of
	 * one source, so it is built once per change and copied as one block
	 * (a fixed-size copy is a few moves; the three copies it replaces
	 * include one of variable size, a libc call).  pre_len 0: nothing
	 * cached; a prefix longer than the block is not cached. */
	const char *pre_ph, *pre_cat;
	size_t pre_clen, pre_len; /* the category's length; the prefix's */
	char pre[TP_TRACE_PRE_MAX];
	/* deviceProperties was written in the header (its value was known when
	 * the file began); else tp_trace_device_properties() writes it last. */
	int devprops_done;
};

/* What goes before traceEvents. */
struct tp_trace_header {
	/* traceName, or NULL when the file's name is known only at its end:
	 * then tp_trace_name() writes it after the footer. */
	const char *trace_name;
	int64_t base_wall_ns;	/* baseTimeNanoseconds */
	int64_t wall_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	int64_t pid;
	int64_t rank, local_rank, world_size, local_world_size, node_rank;
	const char *launcher;
	/* A JSON array, or NULL when not known yet (no successful cuInit before
	 * the window began): then tp_trace_device_properties() writes it after
	 * the events. */
	const char *device_properties_json;
	/* A window's file: DOC_WINDOW's members, for finishing the file
	 * should the process die before it ends (NULL: not written). */
	const char *window_name; /* the final name, the step as WINDOW_STEP_FIELD */
	int64_t window_part, window_first_step;
	int64_t window_keep; /* TRACEPROF_NUM_TRACES_TO_KEEP (-1: all) */
	const char *hostname;
};

/* Floors a wall-clock time to Kineto's shared base: every rank of a job that
 * starts within the same bucket gets the same base. */
int64_t tp_trace_base_time(int64_t wall_ns);

/* Starts the file: writes the header and opens traceEvents. */
void tp_trace_begin(struct tp_trace *t, const struct tp_trace_header *h);

/* After the footer: ,"deviceProperties": json ("[]" when NULL), unless the
 * header had it.  JSON readers take top-level keys in any order; Kineto's
 * place, before traceEvents, is used whenever the devices are known then. */
void tp_trace_device_properties(struct tp_trace *t, const char *json);

/* After the footer: ,"traceName": name, for a header written without one
 * (a window's file is named after its last step, known at its end).  JSON
 * readers take top-level keys in any order. */
void tp_trace_name(struct tp_trace *t, const char *name);

/* Opens one event object: writes the separator and '{'.  The caller writes
 * the fields with the tp_json_* functions and closes with
 * tp_trace_event_close(). */
void tp_trace_event_open(struct tp_trace *t);
static inline void tp_trace_event_close(struct tp_trace *t)
{
	tp_json_char(&t->j, '}');
}

/* Writes "ts":<us> for a monotonic time (no separator before). */
void tp_trace_ts(struct tp_trace *t, uint64_t mono_ns);

/* A complete event up to, not including, args and the closing brace:
 *   {"ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID,"ts":..,"dur":..
 * cat is a literal written as is (no escaping: pass only constant names;
 * its length is cached by pointer, so a buffer reused with other text
 * would be written with the old length). */
/* The same head with `extra` more bytes reserved after it, for the caller
 * to write its args into at once (format/json_writer.c): returns where the
 * head ends, to be committed with tp_json_commit(); NULL after an error. */
char *tp_trace_complete_head(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			     int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
			     size_t extra);
char *tp_trace_instant_head(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t ts_ns, size_t extra);
/* The head of a slice (TP_EV_SLICE, as tp_trace_complete_head()) or of an
 * instant (any other kind, as tp_trace_instant_head()) from the event
 * itself: the JSON writer's path, with three arguments to pass instead of
 * nine. */
char *tp_trace_event_head(struct tp_trace *t, const struct tp_event *e, size_t extra);
void tp_trace_complete_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns);

/* A CUDA API event up to, not including, the rest of its args and the
 * closing braces (collector/cuda_decode.c, with format/api_args.h for the
 * args):
 *   {"ph":"X","cat":CAT,"name":NAME,"pid":..,"tid":..,"ts":..,"dur":..,
 *    "args":{"result":RESULT
 * Written with one reservation: this is the event a trace has most of. */
void tp_trace_api_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		       int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
		       int64_t result);

/* After tp_trace_api_open(): ,"correlation":CORR when corr is not 0 (the
 * number that pairs the call with its GPU events, collector/gpu.h). */
void tp_trace_api_corr(struct tp_trace *t, uint64_t corr);

/* An instant event (scope "t") with no args. */
void tp_trace_instant(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		      int64_t pid, int64_t tid, uint64_t ts_ns);
/* The same up to, not including, args and the closing brace (as
 * tp_trace_complete_open()), for instants with fields of their own. */
void tp_trace_instant_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		      int64_t pid, int64_t tid, uint64_t ts_ns);

/* A counter event: {"ph":"C","name":NAME,"pid":..,"tid":..,"ts":..,"args":{KEY:VALUE}}. */
void tp_trace_counter(struct tp_trace *t, const char *name, size_t nlen, const char *key,
		      size_t klen, int64_t pid, int64_t tid, uint64_t ts_ns, double value);

/* Metadata events. */
void tp_trace_meta_name(struct tp_trace *t, const char *what /* process_name|thread_name */,
			int64_t pid, int64_t tid, const char *name);
void tp_trace_meta_sort(struct tp_trace *t, const char *what /* process_sort_index|... */,
			int64_t pid, int64_t tid, int64_t index);
void tp_trace_meta_labels(struct tp_trace *t, int64_t pid, const char *labels);

/* Closes traceEvents and starts the "traceprof" object: the caller writes its
 * body (fields without braces) and calls tp_trace_end(). */
void tp_trace_footer_open(struct tp_trace *t);
/* Closes the traceprof object; top-level fields may follow (",\"k\":v"). */
void tp_trace_footer_close(struct tp_trace *t);
/* Closes the top-level object and flushes. */
int tp_trace_end(struct tp_trace *t);

#endif
