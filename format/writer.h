/* The one interface between the collector and an output format: a writer
 * turns the format-neutral events of format/event.h into one trace file's
 * bytes, handed to a sink (format/sink.h: file, compression, rename).
 *
 * The collector's calls for one file, in order (flush thread only):
 *   w = tp_writer_open(fmt, sink, &header)
 *   tp_writer_event(w, &e) ...             any number, any tracks
 *   tp_writer_process(w, ...), tp_writer_thread(w, ...)   track names, at
 *                                          the end, when all are known
 *   tp_writer_frame(w, ...) ...            the stack frames its events'
 *                                          sf fields name
 *   tp_writer_close(w, &trailer)           footer, name; frees w
 * or tp_writer_discard(w) instead of close.  tp_writer_bytes() is the size
 * so far (part splitting asks it, not a buffer).
 *
 * Adding a format: a `struct tp_writer_ops` in format/<name>_writer.c, an
 * entry in tp_writer_formats[] (format/writer.c), and a value of
 * TRACEPROF_FORMAT (common/config.c). */
#ifndef TP_FORMAT_WRITER_H
#define TP_FORMAT_WRITER_H

#include <stdint.h>

#include "format/event.h"

struct tp_sink;
struct tp_agg;

/* What a file says before its events. */
struct tp_writer_header {
	int64_t base_wall_ns;	/* the trace's time base (Kineto's baseTimeNanoseconds) */
	int64_t wall_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	int64_t pid;
	int64_t rank, local_rank, world_size, local_world_size, node_rank;
	const char *launcher;
	/* The GPUs' properties, an array of objects, or NULL when not known
	 * yet (no successful cuInit before the file began): then the
	 * trailer's. */
	const struct tp_doc *devices;
	/* A window's file (format/trace.h's window_* members); NULL: none. */
	const char *window_name;
	int64_t window_part, window_first_step;
	int64_t window_keep; /* TRACEPROF_NUM_TRACES_TO_KEEP (-1: all) */
	const char *hostname;
};

/* What a file says after its events. */
struct tp_writer_trailer {
	const char *trace_name;	     /* the file's final name */
	const struct tp_doc *footer; /* the "traceprof" object */
	const struct tp_doc *devices; /* when the header had none; may be NULL */
};

struct tp_writer;

struct tp_writer_ops {
	const char *name; /* the TRACEPROF_FORMAT value: "json", "perfetto" */
	/* The file name's format part: ".json" (a template's ".json" is
	 * replaced by it; sinks add ".zst" / ".gz" after it). */
	const char *ext;
	/* NULL when out of memory. */
	struct tp_writer *(*open)(struct tp_sink *sink, const struct tp_writer_header *h);
	void (*event)(struct tp_writer *w, const struct tp_event *e);
	/* Track names and sort order.  labels may be NULL. */
	void (*process)(struct tp_writer *w, int64_t pid, const char *name, const char *labels,
			int64_t sort_index);
	void (*thread)(struct tp_writer *w, int64_t pid, int64_t tid, const char *name,
		       int64_t sort_index);
	/* One node of the native stack-frame tree: parent 0 is a root. */
	void (*frame)(struct tp_writer *w, uint32_t id, uint32_t parent, const char *name,
		      const char *category);
	/* Writes the end of the file and hands everything to the sink (not
	 * closed: the caller names and closes it).  Frees w.  0 or -errno. */
	int (*close)(struct tp_writer *w, const struct tp_writer_trailer *t);
	void (*discard)(struct tp_writer *w);
	/* Hands everything buffered so far to the sink and flushes it into
	 * the file, between two events: a reader of the temporary file sees
	 * whole events up to here.  0 or -errno. */
	int (*flush)(struct tp_writer *w);
	/* Bytes produced so far (before compression), flushed or not. */
	uint64_t (*bytes)(const struct tp_writer *w);
	/* The first write error (-errno), or 0. */
	int (*error)(const struct tp_writer *w);
};

/* Every writer's state begins with this. */
struct tp_writer {
	const struct tp_writer_ops *ops;
	uint64_t events; /* events written (flows and metadata included) */
	/* The file's own summary table (format/aggregate.h), fed by
	 * tp_writer_event() and written by tp_writer_close() as the footer's
	 * "aggregate" member; NULL: none (out of memory, or a writer opened
	 * without tp_writer_open()). */
	struct tp_agg *agg;
	/* Where the bytes go (tp_writer_open()'s): its digest is what the
	 * table covers. */
	struct tp_sink *sink;
};

/* The formats, by TRACEPROF_FORMAT value; NULL when unknown. */
const struct tp_writer_ops *tp_writer_find(const char *name);
extern const struct tp_writer_ops tp_json_writer;
extern const struct tp_writer_ops tp_perfetto_writer;

/* One whole Trace.packet into buf (cap bytes): an instant named `name` on
 * track of sequence seq, at the sequence's previous packet's time, carrying
 * doc as annotations, as the Perfetto writer writes its documents.  For the
 * end of a cut window finished by the next run (collector/cut_pf.c; the
 * same packets as python/traceprof/cli/recover_pf.py's doc_packet()).
 * Returns its length, or 0 when it does not fit.  format/perfetto_packets.c. */
size_t tp_perfetto_doc_packet(uint8_t *buf, size_t cap, uint64_t seq, uint64_t track,
			      const char *name, const struct tp_doc *doc);

/* Opens a writer with its aggregate table (NULL when out of memory). */
struct tp_writer *tp_writer_open(const struct tp_writer_ops *ops, struct tp_sink *sink,
				 const struct tp_writer_header *h);
void tp_agg_event(struct tp_agg *a, const struct tp_event *e);
static inline void tp_writer_event(struct tp_writer *w, const struct tp_event *e)
{
	if (w->agg)
		tp_agg_event(w->agg, e);
	w->ops->event(w, e);
}
static inline void tp_writer_process(struct tp_writer *w, int64_t pid, const char *name,
				     const char *labels, int64_t sort_index)
{
	w->ops->process(w, pid, name, labels, sort_index);
}
static inline void tp_writer_thread(struct tp_writer *w, int64_t pid, int64_t tid,
				    const char *name, int64_t sort_index)
{
	w->ops->thread(w, pid, tid, name, sort_index);
}
static inline void tp_writer_frame(struct tp_writer *w, uint32_t id, uint32_t parent,
				   const char *name, const char *category)
{
	w->ops->frame(w, id, parent, name, category);
}
/* The footer a format's close writes: the trailer's members, then the
 * aggregate table, whose "covers" member says what it summarizes (the
 * sink's digest, format/digest.h, of every byte before the footer: call it
 * once they are all in the sink and none of the footer is).  Builds it in
 * out (tp_doc_init()ed; the caller frees it) and returns out, or returns
 * footer as it is when there is no table or no memory. */
const struct tp_doc *tp_writer_footer(struct tp_writer *w, const struct tp_doc *footer,
				      struct tp_doc *out);
/* The trailer's footer gets the aggregate table as its last member. */
int tp_writer_close(struct tp_writer *w, const struct tp_writer_trailer *t);
void tp_writer_discard(struct tp_writer *w);
static inline int tp_writer_flush(struct tp_writer *w)
{
	return w->ops->flush(w);
}
static inline uint64_t tp_writer_bytes(const struct tp_writer *w)
{
	return w->ops->bytes(w);
}
static inline int tp_writer_error(const struct tp_writer *w)
{
	return w->ops->error(w);
}

/* Convenience for sources: a slice, an instant, a counter with one value. */
void tp_writer_slice(struct tp_writer *w, const char *cat, const char *name, size_t nlen,
		     int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
		     const struct tp_arg *args, unsigned nargs);
/* One end of a flow arrow (kind TP_EV_FLOW_OUT or TP_EV_FLOW_IN) whose
 * category and name are cat, a literal that lives as long as the program
 * (launch -> kernel, forward -> backward). */
void tp_writer_flow(struct tp_writer *w, int kind, const char *cat, uint64_t id, int64_t pid,
		    int64_t tid, uint64_t ts_ns);
void tp_writer_instant(struct tp_writer *w, const char *cat, const char *name, size_t nlen,
		       int64_t pid, int64_t tid, uint64_t ts_ns, const struct tp_arg *args,
		       unsigned nargs);
void tp_writer_counter(struct tp_writer *w, const char *name, size_t nlen, const char *key,
		       size_t klen, int64_t pid, int64_t tid, uint64_t ts_ns, double value);

#endif
