/* The JSON writer: format-neutral events (format/event.h) as the Chrome /
 * Kineto trace layout that format/trace.c writes (key order, durations,
 * metadata events, the "traceprof" footer, stackFrames).  See
 * ../shared/reference/trace-format.md and docs/trace-format.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/layout.h"
#include "format/json.h"
#include "format/sink.h"
#include "format/trace.h"
#include "format/writer.h"

struct jw_frame {
	uint32_t id, parent;
	char *name, *category;
};

/* Keys up to this many bytes are counted in JW_ARG_MAX (all the sources'
 * keys are); a longer key checks the room for itself. */
#define JW_KEY_MAX 28

struct jw {
	struct tp_writer w; /* first: the writer interface */
	struct tp_trace t;
	int devices_done;
	struct jw_frame *frames;
	size_t nframes, cap_frames;
};

/* Strings the sources mark stable (kernel names, above all) are escaped once
 * for every file: found by address, checked with one strcmp.  The flush
 * thread writes every file, so one cache serves them all. */
static struct tp_json_strcache jw_names;

/* Stable strings up to this length are escaped each time, not cached. */
#define JW_INLINE_STR 48

/* ---- typed values --------------------------------------------------------- */

/* The most a bounded value takes: a 64-bit number or handle (20), a bool
 * (5), three 32-bit numbers in brackets (34). */
#define JW_VAL_MAX 34

/* ,"args":{ and },"sf":N}: what a slice or instant adds after its head
 * besides its args (sf: 7 bytes of key, at most 10 digits). */
#define JW_TAIL_ROOM 32

/* Strings up to this length are escaped into the event's room; longer ones
 * by tp_json_strn(), which escapes huge strings in pieces. */
#define JW_STR_INLINE_MAX 4096

/* Copies a key of n bytes (n < 256) without a call: most keys are 3 to 16
 * bytes, and a variable-length memcpy() is a libc call of about 15
 * instructions.  Two overlapping fixed-size copies never read past the
 * key. */
static inline __attribute__((always_inline)) char *jw_put_key_text(char *d, const char *s,
								   size_t n)
{
	if (n >= 8) {
		if (n > 16)
			return tp_json_put_raw(d, s, n);
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
	return d + n;
}

/* sep"key": where sep is '{' before the first arg and ',' before the
 * others. */
static inline __attribute__((always_inline)) char *jw_put_key(char *d, const struct tp_arg *a,
							      char sep)
{
	d[0] = sep;
	d[1] = '"';
	d = jw_put_key_text(d + 2, a->key, a->klen);
	d[0] = '"';
	d[1] = ':';
	return d + 2;
}

/* The general path, for values of unbounded size (the key is written). */
static void jw_write_value_slow(struct tp_json *j, const struct tp_arg *a)
{
	switch (a->type) {
	case TP_VAL_F64:
		tp_json_double(j, a->f);
		break;
	case TP_VAL_STR:
		tp_json_strn(j, a->s, a->n);
		break;
	case TP_VAL_JSON:
		tp_json_raw(j, a->s, a->n);
		break;
	case TP_VAL_STRS:
		tp_json_char(j, '[');
		for (uint32_t i = 0; i < a->n; i++) {
			if (i)
				tp_json_char(j, ',');
			tp_json_str(j, a->strs[i]);
		}
		tp_json_char(j, ']');
		break;
	case TP_VAL_I64S:
		tp_json_char(j, '[');
		for (uint32_t i = 0; i < a->n; i++) {
			if (i)
				tp_json_char(j, ',');
			tp_json_i64(j, a->is[i]);
		}
		tp_json_char(j, ']');
		break;
	default:
		break;
	}
}

/* ---- events ---------------------------------------------------------------- */

static void jw_flow(struct jw *jw, const struct tp_event *e)
{
	struct tp_json *j = &jw->t.j;
	tp_trace_event_open(&jw->t);
	tp_json_lit(j, e->kind == TP_EV_FLOW_OUT ? "\"ph\":\"s\"" : "\"ph\":\"f\",\"bp\":\"e\"");
	tp_json_lit(j, ",\"cat\":\"");
	tp_json_lit(j, e->cat);
	tp_json_lit(j, "\",\"name\":");
	tp_json_strn(j, e->name, e->name_len);
	tp_json_lit(j, ",\"id\":");
	tp_json_u64(j, e->id);
	tp_json_lit(j, ",\"pid\":");
	tp_json_i64(j, e->pid);
	tp_json_lit(j, ",\"tid\":");
	tp_json_i64(j, e->tid);
	tp_json_char(j, ',');
	tp_trace_ts(&jw->t, e->ts);
	tp_json_char(j, '}');
}

/* Commits what was written up to d and makes room for `need` more bytes;
 * *lim is then the end of the buffer.  NULL after an error. */
static __attribute__((noinline)) char *jw_more(struct tp_json *j, char *d, size_t need,
					       char **lim)
{
	tp_json_commit(j, d);
	d = tp_json_reserve(j, need);
	*lim = d ? j->buf + j->cap : NULL;
	return d;
}

/* Writes a value of unbounded size (its key written up to d) by the general
 * functions, then makes room for `rest` more bytes. */
static __attribute__((noinline)) char *jw_value_slow(struct tp_json *j, char *d,
						     const struct tp_arg *a, size_t rest,
						     char **lim)
{
	tp_json_commit(j, d);
	jw_write_value_slow(j, a);
	return jw_more(j, j->buf + j->len, rest, lim);
}

/* The most one arg with a key of up to JW_KEY_MAX bytes and a bounded value
 * takes: sep"key":value. */
#define JW_ARG_MAX (JW_KEY_MAX + 4 + JW_VAL_MAX)

/* A slice or an instant, written in one pass: the head with room for all its
 * args of bounded size (JW_ARG_MAX each), then each arg's key copied and its
 * value formatted in place.  Only strings, values of unbounded size and long
 * keys check the room left (and then make room for every arg after them):
 * most events make one reservation and no check per arg.  This is the event
 * a trace has most of. */
static void jw_span(struct jw *jw, const struct tp_event *e)
{
	struct tp_trace *t = &jw->t;
	struct tp_json *j = &t->j;
	unsigned n = e->nargs < TP_EV_MAX_ARGS ? e->nargs : TP_EV_MAX_ARGS;
	/* 8: ,"args": */
	char *d = tp_trace_event_head(t, e, JW_TAIL_ROOM + (n ? 8 + n * JW_ARG_MAX : 0));
	if (!d)
		return;
	if (n) {
		char *lim = j->buf + j->cap;
		char sep = '{';
		d = tp_json_put_raw(d, ",\"args\":", 8);
		/* Here: room for JW_ARG_MAX for each arg from i on, and the tail. */
		for (unsigned i = 0; i < n; i++, sep = ',') {
			const struct tp_arg *a = &e->args[i];
			if (__builtin_expect(a->klen > JW_KEY_MAX, 0)) {
				size_t need = (size_t)a->klen + 4 + (size_t)(n - i) * JW_ARG_MAX +
					      JW_TAIL_ROOM;
				if ((size_t)(lim - d) < need && !(d = jw_more(j, d, need, &lim)))
					return;
			}
			d = jw_put_key(d, a, sep);
			switch (a->type) {
			case TP_VAL_U64:
				d = tp_json_put_u64(d, a->u);
				break;
			case TP_VAL_I64:
				d = tp_json_put_i64(d, a->i);
				break;
			case TP_VAL_HEX:
				d = tp_json_put_hex(d, a->u);
				break;
			case TP_VAL_BOOL:
				d = a->u ? tp_json_put_raw(d, "true", 4) : tp_json_put_raw(d, "false", 5);
				break;
			case TP_VAL_DIM3:
				*d++ = '[';
				d = tp_json_put_u64(d, a->v3[0]);
				*d++ = ',';
				d = tp_json_put_u64(d, a->v3[1]);
				*d++ = ',';
				d = tp_json_put_u64(d, a->v3[2]);
				*d++ = ']';
				break;
			case TP_VAL_STR: {
				/* Long stable strings (kernel names) are escaped once;
				 * short ones ("HtoD") are escaped faster than looked up. */
				const struct tp_json_cached *c =
					a->stable && a->n > JW_INLINE_STR
						? tp_json_strcache_getn(&jw_names, a->s, a->n)
						: NULL;
				size_t rest = (size_t)(n - i - 1) * JW_ARG_MAX + JW_TAIL_ROOM;
				if (!c && a->n > JW_STR_INLINE_MAX) {
					if (!(d = jw_value_slow(j, d, a, rest, &lim)))
						return;
					break;
				}
				size_t need = (c ? c->len : tp_json_strn_max(a->n)) + rest;
				if ((size_t)(lim - d) < need && !(d = jw_more(j, d, need, &lim)))
					return;
				d = c ? tp_json_put_raw(d, c->json, c->len) : tp_json_put_strn(d, a->s, a->n);
				break;
			}
			default: /* doubles, arrays and JSON text */
				if (!(d = jw_value_slow(j, d, a,
							(size_t)(n - i - 1) * JW_ARG_MAX + JW_TAIL_ROOM,
							&lim)))
					return;
				break;
			}
		}
		*d++ = '}';
	}
	if (e->sf) {
		d = tp_json_put_raw(d, ",\"sf\":", 6);
		d = tp_json_put_u64(d, e->sf);
	}
	*d++ = '}';
	tp_json_commit(j, d);
}

static void jw_event(struct tp_writer *w, const struct tp_event *e)
{
	struct jw *jw = (struct jw *)w;
	/* Counts the events written: the table's covers says how many. */
	w->events++;
	switch (e->kind) {
	case TP_EV_SLICE:
	case TP_EV_INSTANT:
		jw_span(jw, e);
		return;
	case TP_EV_COUNTER:
		if (e->nargs && e->args[0].type == TP_VAL_F64)
			tp_trace_counter(&jw->t, e->name, e->name_len, e->args[0].key,
					 e->args[0].klen, e->pid, e->tid, e->ts, e->args[0].f);
		else
			w->events--; /* a counter without its value is not written */
		return;
	default:
		jw_flow(jw, e);
		return;
	}
}

static void jw_process(struct tp_writer *w, int64_t pid, const char *name, const char *labels,
		       int64_t sort_index)
{
	struct jw *jw = (struct jw *)w;
	tp_trace_meta_name(&jw->t, TP_META_PROCESS_NAME, pid, 0, name);
	if (labels)
		tp_trace_meta_labels(&jw->t, pid, labels);
	tp_trace_meta_sort(&jw->t, TP_META_PROCESS_SORT_INDEX, pid, 0, sort_index);
	w->events += labels ? 3 : 2;
}

static void jw_thread(struct tp_writer *w, int64_t pid, int64_t tid, const char *name,
		      int64_t sort_index)
{
	struct jw *jw = (struct jw *)w;
	tp_trace_meta_name(&jw->t, TP_META_THREAD_NAME, pid, tid, name);
	tp_trace_meta_sort(&jw->t, TP_META_THREAD_SORT_INDEX, pid, tid, sort_index);
	w->events += 2;
}

/* Frames are a top-level object after the footer: kept until close. */
static void jw_frame(struct tp_writer *w, uint32_t id, uint32_t parent, const char *name,
		     const char *category)
{
	struct jw *jw = (struct jw *)w;
	if (jw->nframes == jw->cap_frames) {
		size_t cap = jw->cap_frames ? jw->cap_frames * 2 : 256;
		struct jw_frame *f = realloc(jw->frames, cap * sizeof(*f));
		if (!f)
			return; /* the event's "sf" then names no frame: readers skip it */
		jw->frames = f;
		jw->cap_frames = cap;
	}
	char *n = strdup(name ? name : ""), *c = strdup(category ? category : "");
	if (!n || !c) {
		free(n);
		free(c);
		return;
	}
	jw->frames[jw->nframes++] = (struct jw_frame){ id, parent, n, c };
}

/* ---- documents ------------------------------------------------------------- */

#define JW_DOC_DEPTH 32

static void jw_doc_value(struct tp_json *j, const struct tp_doc *d, const struct tp_doc_node *x)
{
	switch (x->type) {
	case TP_VAL_U64:
		tp_json_u64(j, x->u);
		break;
	case TP_VAL_I64:
		tp_json_i64(j, x->i);
		break;
	case TP_VAL_F64:
		tp_json_double(j, x->f);
		break;
	case TP_VAL_BOOL:
		tp_json_lit(j, x->u ? "true" : "false");
		break;
	default:
		tp_json_strn(j, tp_doc_text(d, x), x->len);
		break;
	}
}

/* The members of an object document (its outer braces not written): the
 * footer's body.  A document whose first node opens an array or object is
 * written whole. */
static void jw_doc_members(struct tp_json *j, const struct tp_doc *d)
{
	/* Closers of the open containers: '}' or ']'. */
	char close[JW_DOC_DEPTH];
	int n_in[JW_DOC_DEPTH + 1] = { 0 };
	int depth = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct tp_doc_node *x = &d->nodes[i];
		if (x->kind == TP_DOC_END) {
			if (depth > 0)
				tp_json_char(j, close[--depth]);
			continue;
		}
		if (n_in[depth]++)
			tp_json_char(j, ',');
		const char *key = tp_doc_key(d, x);
		if (key) {
			tp_json_str(j, key);
			tp_json_char(j, ':');
		}
		if (x->kind == TP_DOC_VALUE) {
			jw_doc_value(j, d, x);
		} else if (depth < JW_DOC_DEPTH) {
			int obj = x->kind == TP_DOC_OBJECT;
			tp_json_char(j, obj ? '{' : '[');
			close[depth++] = obj ? '}' : ']';
			n_in[depth] = 0;
		}
	}
	while (depth > 0)
		tp_json_char(j, close[--depth]);
}

/* ---- the file --------------------------------------------------------------- */

static struct tp_writer *jw_open(struct tp_sink *sink, const struct tp_writer_header *h)
{
	struct jw *jw = calloc(1, sizeof(*jw));
	if (!jw)
		return NULL;
	jw->w.ops = &tp_json_writer;
	if (tp_json_init(&jw->t.j, sink) < 0) {
		free(jw);
		return NULL;
	}
	/* The devices' JSON, written by the general document writer into a
	 * buffer of its own (the header wants it as text). */
	struct tp_json dj;
	const char *devices = NULL;
	int have_dj = 0;
	if (h->devices && h->devices->n && tp_json_init(&dj, NULL) == 0) {
		have_dj = 1;
		jw_doc_members(&dj, h->devices);
		tp_json_char(&dj, '\0');
		if (!tp_json_error(&dj))
			devices = dj.buf;
	}
	struct tp_trace_header th = {
		.trace_name = NULL,
		.base_wall_ns = h->base_wall_ns,
		.wall_offset_ns = h->wall_offset_ns,
		.pid = h->pid,
		.rank = h->rank,
		.local_rank = h->local_rank,
		.world_size = h->world_size,
		.local_world_size = h->local_world_size,
		.node_rank = h->node_rank,
		.launcher = h->launcher,
		.device_properties_json = devices,
		.window_name = h->window_name,
		.window_part = h->window_part,
		.window_first_step = h->window_first_step,
		.window_keep = h->window_keep,
		.hostname = h->hostname,
	};
	tp_trace_begin(&jw->t, &th);
	jw->devices_done = devices != NULL;
	if (have_dj)
		tp_json_free(&dj);
	return &jw->w;
}

static void jw_free(struct jw *jw)
{
	for (size_t i = 0; i < jw->nframes; i++) {
		free(jw->frames[i].name);
		free(jw->frames[i].category);
	}
	free(jw->frames);
	tp_json_free(&jw->t.j);
	free(jw);
}

static void jw_write_frames(struct jw *jw)
{
	struct tp_json *j = &jw->t.j;
	if (!jw->nframes)
		return;
	tp_json_lit(j, ",\n  \"" TP_DOC_STACK_FRAMES "\": {");
	for (size_t i = 0; i < jw->nframes; i++) {
		const struct jw_frame *f = &jw->frames[i];
		tp_json_lit(j, i ? ",\n    \"" : "\n    \"");
		tp_json_u64(j, f->id);
		tp_json_lit(j, "\":{\"name\":");
		tp_json_str(j, f->name);
		tp_json_lit(j, ",\"category\":");
		tp_json_str(j, f->category);
		if (f->parent) {
			tp_json_lit(j, ",\"parent\":");
			tp_json_u64(j, f->parent);
		}
		tp_json_char(j, '}');
	}
	tp_json_lit(j, "\n  }");
}

/* Kineto's traces give the CUDA versions at the top level: the footer's
 * own members of those names (collector/meta.c) are repeated there, as
 * before the event layer. */
static void jw_kineto_versions(struct tp_json *j, const struct tp_doc *d)
{
	int depth = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct tp_doc_node *x = &d->nodes[i];
		if (x->kind == TP_DOC_END) {
			depth--;
			continue;
		}
		if (x->kind != TP_DOC_VALUE) {
			depth++;
			continue;
		}
		const char *k = tp_doc_key(d, x);
		if (depth || !k || (x->type != TP_VAL_I64 && x->type != TP_VAL_U64) ||
		    (strcmp(k, "cuda_runtime_version") && strcmp(k, "cuda_driver_version")))
			continue;
		tp_json_lit(j, ",\n  ");
		tp_json_str(j, k);
		tp_json_char(j, ':');
		jw_doc_value(j, d, x);
	}
}

static int jw_close(struct tp_writer *w, const struct tp_writer_trailer *tr)
{
	struct jw *jw = (struct jw *)w;
	struct tp_json *j = &jw->t.j;
	/* Every byte before the footer in the sink, for the table's digest. */
	tp_json_flush(j);
	struct tp_doc doc;
	tp_doc_init(&doc);
	const struct tp_doc *footer = tp_writer_footer(w, tr->footer, &doc);
	tp_trace_footer_open(&jw->t);
	if (footer)
		jw_doc_members(j, footer);
	tp_trace_footer_close(&jw->t);
	tp_doc_free(&doc);
	if (!jw->devices_done) {
		tp_json_lit(j, ",\n  \"" TP_DOC_DEVICE_PROPERTIES "\": ");
		if (tr->devices && tr->devices->n)
			jw_doc_members(j, tr->devices);
		else
			tp_json_lit(j, "[]");
	}
	if (tr->footer)
		jw_kineto_versions(j, tr->footer);
	jw_write_frames(jw);
	if (tr->trace_name)
		tp_trace_name(&jw->t, tr->trace_name);
	int rc = tp_trace_end(&jw->t);
	if (!rc && tp_json_error(j))
		rc = tp_json_error(j);
	jw_free(jw);
	return rc;
}

static void jw_discard(struct tp_writer *w)
{
	jw_free((struct jw *)w);
}

static int jw_flush(struct tp_writer *w)
{
	struct tp_json *j = &((struct jw *)w)->t.j;
	int rc = tp_json_flush(j);
	return rc ? rc : j->sink ? tp_sink_flush(j->sink) : 0;
}

static uint64_t jw_bytes(const struct tp_writer *w)
{
	const struct jw *jw = (const struct jw *)w;
	return jw->t.j.total + jw->t.j.len;
}

static int jw_error(const struct tp_writer *w)
{
	return tp_json_error(&((const struct jw *)w)->t.j);
}

const struct tp_writer_ops tp_json_writer = {
	.name = "json",
	.ext = ".json",
	.open = jw_open,
	.event = jw_event,
	.process = jw_process,
	.thread = jw_thread,
	.frame = jw_frame,
	.close = jw_close,
	.discard = jw_discard,
	.flush = jw_flush,
	.bytes = jw_bytes,
	.error = jw_error,
};
