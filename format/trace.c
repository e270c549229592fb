#include "format/trace.h"

#include <string.h>

/* Kineto floors the wall clock to a fixed bucket so that every rank shares
 * the base; its bucket is about three months. */
#define TP_BASE_BUCKET_NS (90LL * 24 * 3600 * 1000000000LL)

int64_t tp_trace_base_time(int64_t wall_ns)
{
	return wall_ns - wall_ns % TP_BASE_BUCKET_NS;
}

void tp_trace_begin(struct tp_trace *t, const struct tp_trace_header *h)
{
	struct tp_json *j = &t->j;
	t->mono_base = h->base_wall_ns - h->wall_offset_ns;
	t->pid = h->pid;
	t->events = 0;
	t->nfirst = 0;
	tp_json_lit(j, "{\n  \"schemaVersion\": 1,\n  \"traceName\": ");
	tp_json_str(j, h->trace_name);
	tp_json_lit(j, ",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
	tp_json_i64(j, h->base_wall_ns);
	tp_json_lit(j, ",\n  \"distributedInfo\": {\"backend\": ");
	tp_json_str(j, h->launcher ? h->launcher : "none");
	tp_json_lit(j, ", \"rank\": ");
	tp_json_i64(j, h->rank);
	tp_json_lit(j, ", \"world_size\": ");
	tp_json_i64(j, h->world_size);
	tp_json_lit(j, ", \"local_rank\": ");
	tp_json_i64(j, h->local_rank);
	tp_json_lit(j, ", \"local_world_size\": ");
	tp_json_i64(j, h->local_world_size);
	tp_json_lit(j, ", \"node_rank\": ");
	tp_json_i64(j, h->node_rank);
	tp_json_lit(j, "},\n  \"deviceProperties\": ");
	tp_json_lit(j, h->device_properties_json ? h->device_properties_json : "[]");
	tp_json_lit(j, ",\n  \"traceEvents\": [\n");
}

void tp_trace_event_open(struct tp_trace *t)
{
	if (t->nfirst)
		tp_json_raw(&t->j, ",\n", 2);
	t->nfirst = 1;
	t->events++;
	tp_json_char(&t->j, '{');
}

void tp_trace_ts(struct tp_trace *t, uint64_t mono_ns)
{
	tp_json_raw(&t->j, "\"ts\":", 5);
	tp_json_us(&t->j, (int64_t)mono_ns - t->mono_base);
}

/* The fields every complete and instant event starts with, after its
 * "ph" (and "s") literal: "cat", "name", "pid", "tid", "ts". */
static void event_head(struct tp_trace *t, const char *ph, const char *cat, const char *name,
		       size_t nlen, int64_t pid, int64_t tid, uint64_t ts_ns)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, ph);
	tp_json_lit(j, cat);
	tp_json_raw(j, "\",\"name\":", 9);
	tp_json_strn(j, name, nlen);
	tp_json_raw(j, ",\"pid\":", 7);
	tp_json_i64(j, pid);
	tp_json_raw(j, ",\"tid\":", 7);
	tp_json_i64(j, tid);
	tp_json_char(j, ',');
	tp_trace_ts(t, ts_ns);
}

void tp_trace_complete_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns)
{
	event_head(t, "\"ph\":\"X\",\"cat\":\"", cat, name, nlen, pid, tid, start_ns);
	tp_json_raw(&t->j, ",\"dur\":", 7);
	tp_json_us(&t->j, end_ns >= start_ns ? (int64_t)(end_ns - start_ns) : 0);
}

void tp_trace_instant_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			   int64_t pid, int64_t tid, uint64_t ts_ns)
{
	event_head(t, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"", cat, name, nlen, pid, tid, ts_ns);
}

void tp_trace_instant(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		      int64_t pid, int64_t tid, uint64_t ts_ns)
{
	tp_trace_instant_open(t, cat, name, nlen, pid, tid, ts_ns);
	tp_trace_event_close(t);
}

void tp_trace_counter(struct tp_trace *t, const char *name, size_t nlen, const char *key,
		      size_t klen, int64_t pid, int64_t tid, uint64_t ts_ns, double value)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"C\",\"name\":");
	tp_json_strn(j, name, nlen);
	tp_json_raw(j, ",\"pid\":", 7);
	tp_json_i64(j, pid);
	tp_json_raw(j, ",\"tid\":", 7);
	tp_json_i64(j, tid);
	tp_json_char(j, ',');
	tp_trace_ts(t, ts_ns);
	tp_json_lit(j, ",\"args\":{");
	tp_json_strn(j, key, klen);
	tp_json_char(j, ':');
	tp_json_double(j, value);
	tp_json_lit(j, "}}");
}

void tp_trace_meta_name(struct tp_trace *t, const char *what, int64_t pid, int64_t tid,
			const char *name)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"");
	tp_json_lit(j, what);
	tp_json_lit(j, "\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":");
	tp_json_i64(j, tid);
	tp_json_lit(j, ",\"args\":{\"name\":");
	tp_json_str(j, name);
	tp_json_lit(j, "}}");
}

void tp_trace_meta_sort(struct tp_trace *t, const char *what, int64_t pid, int64_t tid,
			int64_t index)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"");
	tp_json_lit(j, what);
	tp_json_lit(j, "\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":");
	tp_json_i64(j, tid);
	tp_json_lit(j, ",\"args\":{\"sort_index\":");
	tp_json_i64(j, index);
	tp_json_lit(j, "}}");
}

void tp_trace_meta_labels(struct tp_trace *t, int64_t pid, const char *labels)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":0,\"args\":{\"labels\":");
	tp_json_str(j, labels);
	tp_json_lit(j, "}}");
}

void tp_trace_footer_open(struct tp_trace *t)
{
	tp_json_lit(&t->j, "\n  ],\n  \"traceprof\": {");
}

void tp_trace_footer_close(struct tp_trace *t)
{
	tp_json_char(&t->j, '}');
}

int tp_trace_end(struct tp_trace *t)
{
	tp_json_lit(&t->j, "\n}\n");
	return tp_json_flush(&t->j);
}
