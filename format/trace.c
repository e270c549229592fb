#include "format/trace.h"

#include <stdlib.h>
#include <string.h>

#include "common/layout.h"
#include "format/trace_dur.h"

/* "KEY": for a top-level member named in scripts/layout.spec. */
#define TR_KEY(k) "\"" k "\": "

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
	t->ids_len = 0;
	t->pre_ph = NULL;
	t->pre_cat = NULL;
	tp_json_lit(j, "{\n  " TR_KEY(TP_DOC_SCHEMA_VERSION) "1,\n");
	if (h->trace_name) {
		tp_json_lit(j, "  " TR_KEY(TP_DOC_TRACE_NAME));
		tp_json_str(j, h->trace_name);
		tp_json_lit(j, ",\n");
	}
	tp_json_lit(j, "  " TR_KEY(TP_DOC_DISPLAY_TIME_UNIT) "\"ms\",\n"
		       "  " TR_KEY(TP_DOC_BASE_TIME));
	tp_json_i64(j, h->base_wall_ns);
	tp_json_lit(j, ",\n  " TR_KEY(TP_DOC_DISTRIBUTED_INFO) "{" TR_KEY(TP_DI_BACKEND));
	tp_json_str(j, h->launcher ? h->launcher : TP_LAUNCHER_NONE);
	tp_json_lit(j, ", " TR_KEY(TP_DI_RANK));
	tp_json_i64(j, h->rank);
	tp_json_lit(j, ", " TR_KEY(TP_DI_WORLD_SIZE));
	tp_json_i64(j, h->world_size);
	tp_json_lit(j, ", " TR_KEY(TP_DI_LOCAL_RANK));
	tp_json_i64(j, h->local_rank);
	tp_json_lit(j, ", " TR_KEY(TP_DI_LOCAL_WORLD_SIZE));
	tp_json_i64(j, h->local_world_size);
	tp_json_lit(j, ", " TR_KEY(TP_DI_NODE_RANK));
	tp_json_i64(j, h->node_rank);
	tp_json_lit(j, "},\n  ");
	t->devprops_done = h->device_properties_json != NULL;
	if (t->devprops_done) {
		tp_json_lit(j, TR_KEY(TP_DOC_DEVICE_PROPERTIES));
		tp_json_lit(j, h->device_properties_json);
		tp_json_lit(j, ",\n  ");
	}
	if (h->window_name) {
		tp_json_lit(j, TR_KEY(TP_DOC_WINDOW) "{" TR_KEY(TP_WINDOW_NAME));
		tp_json_str(j, h->window_name);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_PART));
		tp_json_i64(j, h->window_part);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_FIRST_STEP));
		tp_json_i64(j, h->window_first_step);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_HOST));
		tp_json_str(j, h->hostname);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_PID));
		tp_json_i64(j, h->pid);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_KEEP));
		tp_json_i64(j, h->window_keep);
		tp_json_lit(j, "},\n  ");
	}
	tp_json_lit(j, TR_KEY(TP_DOC_TRACE_EVENTS) "[\n");
}

void tp_trace_device_properties(struct tp_trace *t, const char *json)
{
	if (t->devprops_done)
		return;
	t->devprops_done = 1;
	tp_json_lit(&t->j, ",\n  " TR_KEY(TP_DOC_DEVICE_PROPERTIES));
	tp_json_lit(&t->j, json ? json : "[]");
}

void tp_trace_name(struct tp_trace *t, const char *name)
{
	tp_json_lit(&t->j, ",\n  " TR_KEY(TP_DOC_TRACE_NAME));
	tp_json_str(&t->j, name);
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

/* ---- Event heads: one reservation per event ----------------------------
 *
 * A head is written with the tp_json_put_*() functions into room reserved
 * once (see format/json.h).  TR_HEAD_MAX bounds everything but the category
 * and the name: the separator and brace (3), the fixed keys and quotes of
 * the longest head (the API event's, under 64), the ids (TP_TRACE_IDS_MAX),
 * a time (22), a duration (41: tp_trace_put_dur(), format/trace_dur.c) and a result (20). */
#define TR_HEAD_MAX 220

/* Names longer than this go through tp_json_strn(), which escapes huge
 * strings in pieces instead of reserving six times their length at once. */
#define TR_NAME_INLINE_MAX 4096

/* Reserves room for a head of `need` bytes and writes the separator and the
 * opening brace; NULL after an error (nothing is written then). */
static char *tr_begin(struct tp_trace *t, size_t need)
{
	char *d = tp_json_reserve(&t->j, need);
	if (!d)
		return NULL;
	if (t->nfirst)
		d = tp_json_put_raw(d, ",\n", 2);
	t->nfirst = 1;
	t->events++;
	*d++ = '{';
	return d;
}

static void tr_end(struct tp_trace *t, char *d)
{
	tp_json_commit(&t->j, d);
}

/* ,"pid":P,"tid":T from the cached text when the pair repeats.  The whole
 * cache block is copied (the reservation covers it): a fixed-size copy is a
 * few moves, a variable one a call. */
static char *tr_ids(struct tp_trace *t, char *d, int64_t pid, int64_t tid)
{
	if (t->ids_len == 0 || pid != t->ids_pid || tid != t->ids_tid) {
		char *e = tp_json_put_raw(t->ids, ",\"pid\":", 7);
		e = tp_json_put_i64(e, pid);
		e = tp_json_put_raw(e, ",\"tid\":", 7);
		e = tp_json_put_i64(e, tid);
		t->ids_len = (size_t)(e - t->ids);
		t->ids_pid = pid;
		t->ids_tid = tid;
	}
	memcpy(d, t->ids, TP_TRACE_IDS_MAX);
	return d + t->ids_len;
}

static char *tr_ts(const struct tp_trace *t, char *d, uint64_t mono_ns)
{
	d = tp_json_put_raw(d, ",\"ts\":", 6);
	return tp_json_put_us(d, (int64_t)mono_ns - t->mono_base);
}


static char *tr_dur(const struct tp_trace *t, char *d, uint64_t start_ns, uint64_t end_ns)
{
	int64_t s = (int64_t)start_ns - t->mono_base;
	int64_t e = end_ns >= start_ns ? (int64_t)end_ns - t->mono_base : s;
	return tp_trace_put_dur(d, s, e);
}

/* Caches the prefix for ph and cat (see tp_trace.pre). */
static __attribute__((noinline)) void tr_prefix(struct tp_trace *t, const char *ph, size_t phlen,
						const char *cat)
{
	size_t clen = strlen(cat);
	t->pre_ph = ph;
	t->pre_cat = cat;
	t->pre_clen = clen;
	t->pre_len = 0;
	if (phlen + clen + 9 > TP_TRACE_PRE_MAX)
		return;
	char *d = tp_json_put_raw(t->pre, ph, phlen);
	d = tp_json_put_raw(d, cat, clen);
	d = tp_json_put_raw(d, "\",\"name\":", 9);
	t->pre_len = (size_t)(d - t->pre);
}

/* {PH CAT","name":NAME,"pid":P,"tid":T,"ts":TS where ph is the literal
 * opening the event up to the category's opening quote.  Returns where the
 * head ends, with `extra` more bytes reserved after it; NULL after an error.
 * Inlined into each caller: a call with ten arguments costs about as much as
 * the head's fixed text. */
static inline __attribute__((always_inline)) char *
tr_head(struct tp_trace *t, const char *ph, size_t phlen, const char *cat, const char *name,
	size_t nlen, int64_t pid, int64_t tid, uint64_t ts_ns, size_t extra)
{
	if (ph != t->pre_ph || cat != t->pre_cat)
		tr_prefix(t, ph, phlen, cat);
	/* pre_len 0: the prefix did not fit the block. */
	size_t pre_room = t->pre_len ? TP_TRACE_PRE_MAX : phlen + t->pre_clen + 9;
	int inline_name = nlen <= TR_NAME_INLINE_MAX;
	char *d = tr_begin(t, TR_HEAD_MAX + pre_room + extra +
				      (inline_name ? tp_json_strn_max(nlen) : 0));
	if (!d)
		return NULL;
	if (__builtin_expect(t->pre_len != 0, 1)) {
		memcpy(d, t->pre, TP_TRACE_PRE_MAX);
		d += t->pre_len;
	} else {
		d = tp_json_put_raw(d, ph, phlen);
		d = tp_json_put_raw(d, cat, t->pre_clen);
		d = tp_json_put_raw(d, "\",\"name\":", 9);
	}
	if (inline_name) {
		d = tp_json_put_strn(d, name, nlen);
	} else {
		tr_end(t, d);
		tp_json_strn(&t->j, name, nlen);
		d = tp_json_reserve(&t->j, TR_HEAD_MAX + extra);
		if (!d)
			return NULL;
	}
	d = tr_ids(t, d, pid, tid);
	return tr_ts(t, d, ts_ns);
}

static const char tr_ph_x[] = "\"ph\":\"X\",\"cat\":\"";
static const char tr_ph_i[] = "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"";

char *tp_trace_complete_head(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			     int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
			     size_t extra)
{
	char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, cat, name, nlen, pid, tid, start_ns,
			  extra);
	return d ? tr_dur(t, d, start_ns, end_ns) : NULL;
}

char *tp_trace_instant_head(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t ts_ns, size_t extra)
{
	return tr_head(t, tr_ph_i, sizeof(tr_ph_i) - 1, cat, name, nlen, pid, tid, ts_ns, extra);
}

char *tp_trace_event_head(struct tp_trace *t, const struct tp_event *e, size_t extra)
{
	if (e->kind == TP_EV_SLICE) {
		char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, e->cat, e->name, e->name_len,
				  e->pid, e->tid, e->ts, extra);
		return d ? tr_dur(t, d, e->ts, e->end) : NULL;
	}
	return tr_head(t, tr_ph_i, sizeof(tr_ph_i) - 1, e->cat, e->name, e->name_len, e->pid,
		       e->tid, e->ts, extra);
}

void tp_trace_complete_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns)
{
	char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, cat, name, nlen, pid, tid, start_ns,
			  0);
	if (d)
		tr_end(t, tr_dur(t, d, start_ns, end_ns));
}

void tp_trace_api_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		       int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
		       int64_t result)
{
	static const char args[] = ",\"args\":{\"result\":";
	char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, cat, name, nlen, pid, tid, start_ns,
			  sizeof(args) - 1);
	if (!d)
		return;
	d = tr_dur(t, d, start_ns, end_ns);
	d = tp_json_put_raw(d, args, sizeof(args) - 1);
	tr_end(t, tp_json_put_i64(d, result));
}

void tp_trace_api_corr(struct tp_trace *t, uint64_t corr)
{
	if (!corr)
		return;
	tp_json_lit(&t->j, ",\"correlation\":");
	tp_json_u64(&t->j, corr);
}

void tp_trace_instant_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			   int64_t pid, int64_t tid, uint64_t ts_ns)
{
	char *d = tr_head(t, tr_ph_i, sizeof(tr_ph_i) - 1, cat, name, nlen, pid, tid, ts_ns, 0);
	if (d)
		tr_end(t, d);
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
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"" TP_META_PROCESS_LABELS "\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":0,\"args\":{\"labels\":");
	tp_json_str(j, labels);
	tp_json_lit(j, "}}");
}

void tp_trace_footer_open(struct tp_trace *t)
{
	tp_json_lit(&t->j, "\n  ],\n  " TR_KEY(TP_DOC_FOOTER) "{");
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
