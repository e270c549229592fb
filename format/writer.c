/* The list of output formats, and the helpers sources use to build the
 * common events. */
#include "format/writer.h"

#include <string.h>

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

void tp_writer_counter(struct tp_writer *w, const char *name, size_t nlen, const char *key,
		       size_t klen, int64_t pid, int64_t tid, uint64_t ts_ns, double value)
{
	struct tp_arg a = tp_arg_f64(key, klen, value);
	struct tp_event e = {
		.kind = TP_EV_COUNTER,
		.nargs = 1,
		.name_len = (uint32_t)nlen,
		.cat = "counter",
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
