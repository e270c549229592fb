/* The next run finishes Perfetto cut windows (.pftrace, .pftrace.gz,
 * .pftrace.zst) of earlier ones (issue 44), as python/traceprof/cli/
 * recover_pf.py does for `traceprof recover`.
 *
 * The Perfetto writer hands the sink whole TracePackets at each drain
 * (format/perfetto_writer.c), so the file of a process that died is a Trace
 * message (length-delimited packets, field 1) up to its last drain, maybe a
 * packet cut short after it; compressed, its whole frames end on packets
 * (format/sink_codec.c).  This reads the packets as a stream (the codec's
 * through cut_codec.c), keeping what finishing needs: the header instant's
 * window and rank, its track and sequence, the events written (instants,
 * counters and ended slices, not the documents) and the last step whose
 * slice ended, by name or interned name.  The file is truncated after the
 * last whole packet (compressed: its last whole frame), and the packets the
 * writer's end would add are appended: the trace's name and the footer
 * instant, whose `cut` member says why, when and what may be missing
 * (format/'s tp_perfetto_doc_packet(), the writer's own documents). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/cut_int.h"
#include "collector/flush_int.h"
#include "common/layout.h"
#include "format/sink.h"
#include "format/writer.h"

#define PF_PACKET_MAX (16u << 20) /* a longer packet is no writer's */
#define PF_TRACKS 64		  /* tracks whose open slices are followed */
#define PF_DEPTH 32		  /* open slices followed per track */

struct pf_track {
	uint64_t uuid;
	int depth;
	long long step[PF_DEPTH]; /* each open slice's step, -1: not a step */
};

struct pf_iid {
	uint64_t iid;
	long long step;
};

struct cut_pf {
	struct tp_cut_head *hd;
	long pid;
	int plain; /* a packet's end is a place to cut (no frames) */
	unsigned char *buf; /* the packet being read, and what follows */
	size_t len, cap;
	size_t off; /* the stream's bytes before buf */
	int bad, have_head;
	unsigned long long events;
	long long last_step;
	struct pf_iid *iids; /* the step names' iids, ascending */
	size_t niids, capiids;
	struct pf_track tracks[PF_TRACKS];
	int ntracks;
	struct tp_cut_scan *at;
	int have;
};

/* The varint at *p (< e); -1 when cut short or too long. */
static int pf_varint(const unsigned char **p, const unsigned char *e, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; *p < e && shift < 70; shift += 7) {
		unsigned c = *(*p)++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (c < 0x80) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* One field of [*p, e): its number, and its value (varint, fixed) or its
 * bytes [*b, *b + *n) (length-delimited).  0, or -1 when malformed. */
static int pf_field(const unsigned char **p, const unsigned char *e, uint32_t *num, uint64_t *v,
		    const unsigned char **b, size_t *n)
{
	uint64_t key;
	if (pf_varint(p, e, &key))
		return -1;
	*num = (uint32_t)(key >> 3);
	*b = NULL;
	switch (key & 7) {
	case 0:
		return pf_varint(p, e, v);
	case 1:
	case 5: {
		size_t k = (key & 7) == 1 ? 8 : 4;
		if ((size_t)(e - *p) < k)
			return -1;
		*v = 0;
		memcpy(v, *p, k); /* little-endian, as x86-64 and the wire */
		*p += k;
		return 0;
	}
	case 2:
		if (pf_varint(p, e, v) || *v > (uint64_t)(e - *p))
			return -1;
		*b = *p;
		*n = (size_t)*v;
		*p += *n;
		return 0;
	default:
		return -1;
	}
}

#define PF_FIELDS(p, e, num, v, b, n) for (; p < e && !pf_field(&p, e, &num, &v, &b, &n);)

/* The step a name says (layout.STEP_PREFIX and its number), or -1. */
static long long pf_step(const unsigned char *s, size_t n)
{
	size_t k = strlen(TP_STEP_PREFIX);
	if (n <= k || n > k + 18 || memcmp(s, TP_STEP_PREFIX, k))
		return -1;
	long long v = 0;
	for (size_t i = k; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int pf_is(const unsigned char *s, size_t n, const char *name)
{
	return s && n == strlen(name) && !memcmp(s, name, n);
}

static long long pf_iid_step(const struct cut_pf *c, uint64_t iid)
{
	size_t lo = 0, hi = c->niids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->iids[mid].iid < iid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->niids && c->iids[lo].iid == iid ? c->iids[lo].step : -1;
}

/* An InternedData: the event names that are steps. */
static void pf_interned(struct cut_pf *c, const unsigned char *p, const unsigned char *e)
{
	uint32_t num, f;
	uint64_t v, w;
	const unsigned char *b, *q;
	size_t n, m;
	PF_FIELDS(p, e, num, v, b, n)
	{
		if (num != TP_PF_ID_NAMES || !b)
			continue;
		uint64_t iid = 0;
		long long step = -1;
		const unsigned char *qe = b + n;
		q = b;
		PF_FIELDS(q, qe, f, w, b, m)
		{
			if (f == TP_PF_INTERNED_IID && !b)
				iid = w;
			else if (f == TP_PF_INTERNED_NAME && b)
				step = pf_step(b, m);
		}
		/* iids ascend (format/perfetto_intern.c): kept in order. */
		if (step < 0 || (c->niids && c->iids[c->niids - 1].iid >= iid))
			continue;
		if (c->niids == c->capiids) {
			size_t cap = c->capiids ? c->capiids * 2 : 256;
			struct pf_iid *x = realloc(c->iids, cap * sizeof(*x));
			if (!x) {
				c->bad = 1;
				return;
			}
			c->iids = x;
			c->capiids = cap;
		}
		c->iids[c->niids++] = (struct pf_iid){ iid, step };
	}
}

/* A DebugAnnotation's name and value (int or string). */
struct pf_anno {
	const unsigned char *name, *str, *dict;
	size_t nlen, slen, dlen;
	long long i;
	int has_i;
};

static void pf_anno(const unsigned char *p, const unsigned char *e, struct pf_anno *a)
{
	uint32_t num;
	uint64_t v;
	const unsigned char *b;
	size_t n;
	memset(a, 0, sizeof(*a));
	a->dict = p; /* its dict entries are read from the whole message */
	a->dlen = (size_t)(e - p);
	PF_FIELDS(p, e, num, v, b, n)
	{
		if (num == TP_PF_DA_NAME && b) {
			a->name = b;
			a->nlen = n;
		} else if (num == TP_PF_DA_STRING && b) {
			a->str = b;
			a->slen = n;
		} else if ((num == TP_PF_DA_INT || num == TP_PF_DA_UINT) && !b) {
			a->i = (long long)v;
			a->has_i = 1;
		}
	}
}

/* The header instant's annotations: the window and the rank into hd.  0,
 * or -1 when they are not pid's window of this host. */
static int pf_header(struct cut_pf *c, const unsigned char **annos, const size_t *lens, int nannos)
{
	struct tp_cut_head *hd = c->hd;
	long long pid = -1;
	int have = 0;
	hd->rank = -1;
	hd->part = 1;
	for (int k = 0; k < nannos; k++) {
		struct pf_anno a, x;
		pf_anno(annos[k], annos[k] + lens[k], &a);
		if (pf_is(a.name, a.nlen, TP_DI_RANK) && a.has_i)
			hd->rank = a.i;
		if (!pf_is(a.name, a.nlen, TP_DOC_WINDOW))
			continue;
		const unsigned char *p = a.dict, *e = a.dict + a.dlen, *b;
		uint32_t num;
		uint64_t v;
		size_t n;
		PF_FIELDS(p, e, num, v, b, n)
		{
			if (num != TP_PF_DA_DICT || !b)
				continue;
			pf_anno(b, b + n, &x);
			if (pf_is(x.name, x.nlen, TP_WINDOW_NAME) && x.str && x.slen < sizeof(hd->pattern)) {
				memcpy(hd->pattern, x.str, x.slen);
				hd->pattern[x.slen] = '\0';
				have |= 1;
			} else if (pf_is(x.name, x.nlen, TP_WINDOW_HOST) && x.str &&
				   x.slen < sizeof(hd->host)) {
				memcpy(hd->host, x.str, x.slen);
				hd->host[x.slen] = '\0';
				have |= 2;
			} else if (pf_is(x.name, x.nlen, TP_WINDOW_PART) && x.has_i) {
				hd->part = x.i;
			} else if (pf_is(x.name, x.nlen, TP_WINDOW_FIRST_STEP) && x.has_i) {
				hd->first_step = x.i;
				have |= 4;
			} else if (pf_is(x.name, x.nlen, TP_WINDOW_PID) && x.has_i) {
				pid = x.i;
			}
		}
	}
	if (have != 7 || pid != c->pid || strchr(hd->pattern, '/') ||
	    strcmp(hd->host, tp_fl.vars.hostname))
		return -1;
	return 0;
}

static struct pf_track *pf_track(struct cut_pf *c, uint64_t uuid)
{
	for (int i = 0; i < c->ntracks; i++)
		if (c->tracks[i].uuid == uuid)
			return &c->tracks[i];
	if (c->ntracks == PF_TRACKS)
		return NULL; /* its slices are counted, its steps not followed */
	struct pf_track *t = &c->tracks[c->ntracks++];
	t->uuid = uuid;
	t->depth = 0;
	return t;
}

/* A TrackEvent of the packet of sequence seq (recover_pf.py's Scan). */
static void pf_event(struct cut_pf *c, const unsigned char *p, const unsigned char *e, uint64_t seq)
{
	uint32_t num;
	uint64_t v, type = 0, uuid = 0, iid = 0;
	const unsigned char *b, *name = NULL, *annos[64];
	size_t n, nlen = 0, lens[64];
	int nannos = 0, has_iid = 0;
	PF_FIELDS(p, e, num, v, b, n)
	{
		if (num == TP_PF_TE_TYPE && !b)
			type = v;
		else if (num == TP_PF_TE_NAME && b)
			name = b, nlen = n;
		else if (num == TP_PF_TE_NAME_IID && !b)
			iid = v, has_iid = 1;
		else if (num == TP_PF_TE_TRACK_UUID && !b)
			uuid = v;
		else if (num == TP_PF_TE_ANNOTATIONS && b && nannos < 64)
			annos[nannos] = b, lens[nannos++] = n;
	}
	if (p != e) {
		c->bad = 1;
		return;
	}
	if (type == TP_PF_TYPE_INSTANT && pf_is(name, nlen, TP_DOC_HEADER) && !c->have_head) {
		if (pf_header(c, annos, lens, nannos) < 0) {
			c->bad = 1;
			return;
		}
		c->hd->pf_seq = seq;
		c->hd->pf_track = uuid;
		c->have_head = 1;
		return;
	}
	if (type == TP_PF_TYPE_INSTANT && (pf_is(name, nlen, TP_DOC_DEVICE_PROPERTIES) ||
					   pf_is(name, nlen, TP_DOC_STACK_FRAMES)))
		return;
	if (type == TP_PF_TYPE_INSTANT || type == TP_PF_TYPE_COUNTER)
		c->events++;
	struct pf_track *t = type == TP_PF_TYPE_SLICE_BEGIN || type == TP_PF_TYPE_SLICE_END
				     ? pf_track(c, uuid) : NULL;
	if (type == TP_PF_TYPE_SLICE_BEGIN && t && t->depth < PF_DEPTH)
		t->step[t->depth++] = name ? pf_step(name, nlen) : has_iid ? pf_iid_step(c, iid) : -1;
	else if (type == TP_PF_TYPE_SLICE_END && t && t->depth) {
		/* A slice, whole once ended: as readers count it. */
		c->events++;
		long long step = t->step[--t->depth];
		if (step >= 0)
			c->last_step = step;
	}
}

/* One whole packet's payload. */
static void pf_packet(struct cut_pf *c, const unsigned char *p, const unsigned char *e)
{
	uint32_t num;
	uint64_t v, seq = 0;
	const unsigned char *b, *te = NULL, *ie[4];
	size_t n, tn = 0, in[4];
	int ni = 0;
	PF_FIELDS(p, e, num, v, b, n)
	{
		if (num == TP_PF_PKT_TRACK_EVENT && b)
			te = b, tn = n;
		else if (num == TP_PF_PKT_SEQ_ID && !b)
			seq = v;
		else if (num == TP_PF_PKT_INTERNED && b && ni < 4)
			ie[ni] = b, in[ni++] = n;
		else if (num == TP_PF_PKT_SEQ_FLAGS && !b && (v & TP_PF_SEQ_INCREMENTAL_STATE_CLEARED))
			c->niids = 0;
	}
	if (p != e) {
		c->bad = 1;
		return;
	}
	for (int k = 0; k < ni; k++)
		pf_interned(c, ie[k], ie[k] + in[k]);
	if (te)
		pf_event(c, te, te + tn, seq);
}

static void pf_commit(struct cut_pf *c, size_t off)
{
	if (!c->have_head || c->bad)
		return;
	c->at->keep = off;
	c->at->events = c->events;
	c->at->last_step = c->last_step;
	c->have = 1;
}

static void pf_feed(void *ctx, const char *p, size_t n)
{
	struct cut_pf *c = ctx;
	if (c->bad || !n)
		return;
	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : 1u << 20;
		while (cap < c->len + n)
			cap *= 2;
		unsigned char *b = cap <= 2 * PF_PACKET_MAX ? realloc(c->buf, cap) : NULL;
		if (!b) {
			c->bad = 1;
			return;
		}
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, p, n);
	c->len += n;
	const unsigned char *q = c->buf, *e = c->buf + c->len;
	while (q < e && !c->bad) {
		const unsigned char *r = q;
		uint64_t key, len;
		if (pf_varint(&r, e, &key) || pf_varint(&r, e, &len))
			break; /* cut short: more to come */
		if (key != (TP_PF_TRACE_PACKET << 3 | 2) || len > PF_PACKET_MAX) {
			c->bad = 1; /* no packet: the bytes a death left */
			break;
		}
		if (len > (uint64_t)(e - r))
			break;
		pf_packet(c, r, r + len);
		q = r + len;
		if (c->plain)
			pf_commit(c, c->off + (size_t)(q - c->buf));
	}
	size_t used = (size_t)(q - c->buf);
	memmove(c->buf, q, c->len - used);
	c->len -= used;
	c->off += used;
}

static int pf_frame_end(void *ctx, size_t off)
{
	struct cut_pf *c = ctx;
	/* A frame ends on a packet's end (the writer's flush). */
	if (c->bad || c->len)
		return -1;
	pf_commit(c, off);
	return 0;
}

int tp_cut_pf_scan(int fd, int codec, size_t size, long pid, struct tp_cut_head *hd,
		   struct tp_cut_scan *s)
{
	struct cut_pf c = { .hd = hd, .pid = pid, .plain = codec == TP_SINK_PLAIN,
			    .last_step = -1, .at = s };
	struct tp_cut_stream st = { pf_feed, pf_frame_end, &c };
	memset(hd, 0, sizeof(*hd));
	int rc = tp_cut_codec_read(fd, codec, size, &st);
	free(c.buf);
	free(c.iids);
	if (!rc && !c.have)
		rc = c.have_head ? -ENODATA : -EINVAL;
	return rc;
}

int tp_cut_pf_closing(unsigned char *buf, size_t size, const struct tp_cut_head *hd,
		      const struct tp_cut_scan *s, long pid, time_t mtime, const char *name)
{
	char when[64], reason[96], by[96];
	struct tm tm;
	gmtime_r(&mtime, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S.000+00:00", &tm);
	snprintf(reason, sizeof(reason), "the process (pid %ld) ended before the window did", pid);
	snprintf(by, sizeof(by), "the next run's library %s (pid %ld)", TRACEPROF_VERSION,
		 (long)tp_fl.pid);
	long long last = s->last_step >= 0 ? s->last_step : hd->first_step;
	struct tp_doc tn, ft;
	tp_doc_init(&tn);
	tp_doc_init(&ft);
	tp_doc_str(&tn, TP_DOC_TRACE_NAME, name);
	tp_doc_str(&ft, "version", TRACEPROF_VERSION);
	tp_doc_i64(&ft, "part", hd->part);
	tp_doc_i64(&ft, "parts", hd->part);
	tp_doc_array(&ft, "steps");
	tp_doc_i64(&ft, NULL, hd->first_step);
	tp_doc_i64(&ft, NULL, last);
	tp_doc_end(&ft);
	tp_doc_u64(&ft, "events_written", s->events);
	tp_doc_object(&ft, TP_FOOTER_CUT);
	tp_doc_str(&ft, "reason", reason);
	tp_doc_str(&ft, "last_write", when);
	tp_doc_str(&ft, "missing", "the events recorded after the file's last flush (every 0.5 s) "
				   "and the GPU records not yet handed over; not counted");
	tp_doc_str(&ft, "recovered_by", by);
	tp_doc_end(&ft);
	size_t a = tn.error ? 0 : tp_perfetto_doc_packet(buf, size, hd->pf_seq, hd->pf_track,
							 TP_DOC_TRACE_NAME, &tn);
	size_t b = a && !ft.error ? tp_perfetto_doc_packet(buf + a, size - a, hd->pf_seq,
							   hd->pf_track, TP_DOC_FOOTER, &ft)
				  : 0;
	tp_doc_free(&tn);
	tp_doc_free(&ft);
	return a && b ? (int)(a + b) : -ENAMETOOLONG;
}
