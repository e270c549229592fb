/* The list of output formats, and the helpers sources use to build the
 * common events. */
#include "format/writer.h"

#include <string.h>

#include "common/layout.h"
#include "format/aggregate.h"
#include "format/digest.h"
#include "format/sink.h"

static const struct tp_writer_ops *const tp_writer_formats[] = {
	&tp_json_writer,
	&tp_perfetto_writer,
};

const struct tp_writer_ops *tp_writer_find(const char *name)
{
	for (size_t i = 0; i < sizeof(tp_writer_formats) / sizeof(tp_writer_formats[0]); i++)
		if (!strcmp(tp_writer_formats[i]->name, name))
			return tp_writer_formats[i];
	return NULL;
}

struct tp_writer *tp_writer_open(const struct tp_writer_ops *ops, struct tp_sink *sink,
				 const struct tp_writer_header *h)
{
	struct tp_writer *w = ops->open(sink, h);
	/* Without memory for the table the file is written without one:
	 * summary then reads its events. */
	if (w) {
		w->agg = tp_agg_new(h->rank);
		w->sink = sink;
	}
	return w;
}

const struct tp_doc *tp_writer_footer(struct tp_writer *w, const struct tp_doc *footer,
				      struct tp_doc *out)
{
	if (!w->agg || !footer)
		return footer;
	/* The footer's members, then the table: the last thing before the
	 * footer closes, which a reader finds from the file's end. */
	tp_doc_append(out, footer);
	tp_doc_object(out, "aggregate");
	tp_agg_doc(w->agg, out);
	/* A writer without a sink (kept in memory: tests) has no digest; a
	 * reader does not use a table without one. */
	if (w->sink) {
		const struct tp_digest *dg = tp_sink_digest(w->sink);
		tp_doc_object(out, "covers");
		tp_doc_u64(out, "bytes", dg->len);
		tp_doc_u64(out, "events", w->events);
		tp_doc_u64(out, "stride", dg->stride);
		tp_doc_u64(out, "samples", dg->n);
		tp_doc_u64(out, "crc", tp_digest_value(dg));
		tp_doc_end(out);
	}
	tp_doc_end(out);
	return out->error ? footer : out;
}

int tp_writer_close(struct tp_writer *w, const struct tp_writer_trailer *t)
{
	/* The format's close writes the table (tp_writer_footer()) and frees
	 * w, not the table. */
	struct tp_agg *agg = w->agg;
	int rc = w->ops->close(w, t);
	tp_agg_free(agg);
	return rc;
}

void tp_writer_discard(struct tp_writer *w)
{
	tp_agg_free(w->agg);
	w->agg = NULL;
	w->ops->discard(w);
}

void tp_writer_slice(struct tp_writer *w, const char *cat, const char *name, size_t nlen,
		     int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
		     const struct tp_arg *args, unsigned nargs)
{
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.nargs = (uint16_t)nargs,
		.name_len = (uint32_t)nlen,
		.cat = cat,
		.name = name,
		.pid = pid,
		.tid = tid,
		.ts = start_ns,
		.end = end_ns,
		.args = args,
		.name_stable = 0,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
}

void tp_writer_instant(struct tp_writer *w, const char *cat, const char *name, size_t nlen,
		       int64_t pid, int64_t tid, uint64_t ts_ns, const struct tp_arg *args,
		       unsigned nargs)
{
	struct tp_event e = {
		.kind = TP_EV_INSTANT,
		.nargs = (uint16_t)nargs,
		.name_len = (uint32_t)nlen,
		.cat = cat,
		.name = name,
		.pid = pid,
		.tid = tid,
		.ts = ts_ns,
		.end = ts_ns,
		.args = args,
		.name_stable = 0,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
}

void tp_writer_flow(struct tp_writer *w, int kind, const char *cat, uint64_t id, int64_t pid,
		    int64_t tid, uint64_t ts_ns)
{
	struct tp_event e = {
		.kind = (uint8_t)kind,
		.name_stable = 1,
		.nargs = 0,
		.name_len = (uint32_t)strlen(cat),
		.cat = cat,
		.name = cat,
		.pid = pid,
		.tid = tid,
		.ts = ts_ns,
		.end = ts_ns,
		.id = id,
		/* Every field named: no `rep stos` (format/event.h). */
		.flow_out = 0,
		.flow_in = 0,
		.sf = 0,
		.args = NULL,
	};
	tp_writer_event(w, &e);
}

void tp_writer_counter(struct tp_writer *w, const char *name, size_t nlen, const char *key,
		       size_t klen, int64_t pid, int64_t tid, uint64_t ts_ns, double value)
{
	struct tp_arg a = tp_arg_f64(key, klen, value);
	struct tp_event e = {
		.kind = TP_EV_COUNTER,
		.nargs = 1,
		.name_len = (uint32_t)nlen,
		.cat = TP_CAT_COUNTER,
		.name = name,
		.pid = pid,
		.tid = tid,
		.ts = ts_ns,
		.end = ts_ns,
		.args = &a,
		.name_stable = 0,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
}
