/* The Perfetto writer: format-neutral events (format/event.h) as a
 * perfetto.protos.Trace stream (../shared/clients/perfetto_trace.proto),
 * the format Perfetto's UI and trace_processor read natively.
 *
 * The file is one packet sequence (trusted_packet_sequence_id 1) of
 * TracePackets:
 *   - the first clears the sequence's incremental state and sets it up: a
 *     ClockSnapshot that ties CLOCK_MONOTONIC (the events' clock) to
 *     BOOTTIME, to REALTIME as the header's wall_offset_ns says (so that the
 *     UI's wall-clock times are the JSON's), and to clock 64, an
 *     incremental clock of this sequence that TracePacketDefaults makes the
 *     default: a packet's timestamp is then the nanoseconds since the
 *     previous one's, two or three bytes instead of eight.  A packet earlier
 *     than its predecessor (sources interleave) says its absolute
 *     MONOTONIC time instead, with timestamp_clock_id 3;
 *   - TrackDescriptors: a process track per pid, a thread track per (pid,
 *     tid), a counter track per (pid, counter), each written before the
 *     first event on it and written again with its name when
 *     process()/thread() name it at the end (same uuid);
 *   - TrackEvents: slices as SLICE_BEGIN / SLICE_END pairs on their thread's
 *     track (a complete event has no TrackEvent form), instants, counters;
 *     names, categories, argument names and long-lived string values
 *     (kernel names) interned (InternedData in the packet that first uses
 *     them); args as DebugAnnotations; arrows as
 *     flow_ids on the launching slice and terminating_flow_ids on the GPU
 *     work (the FLOW_OUT / FLOW_IN events are not needed);
 *   - at the end, instants on the process's track that carry the documents
 *     as nested debug annotations: "traceprof" (the footer),
 *     "deviceProperties" and "stackFrames" (the native frames the events'
 *     "sf" annotations name).  The UI shows them in the slice details. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hashmap.h"
#include "format/pb.h"
#include "format/writer.h"

/* ---- field numbers (perfetto_trace.proto) ---------------------------------- */

enum {
	F_TRACE_PACKET = 1,

	F_PKT_CLOCK_SNAPSHOT = 6,
	F_PKT_TIMESTAMP = 8,
	F_PKT_SEQ_ID = 10,
	F_PKT_TRACK_EVENT = 11,
	F_PKT_INTERNED = 12,
	F_PKT_SEQ_FLAGS = 13,
	F_PKT_CLOCK_ID = 58,
	F_PKT_DEFAULTS = 59,
	F_PKT_TRACK_DESC = 60,

	F_DEFAULTS_CLOCK_ID = 58,

	F_SNAP_CLOCKS = 1,
	F_CLOCK_ID = 1,
	F_CLOCK_TS = 2,
	F_CLOCK_INCREMENTAL = 3,

	F_TE_ANNOTATIONS = 4,
	F_TE_CATEGORY_IIDS = 3,
	F_TE_TYPE = 9,
	F_TE_NAME_IID = 10,
	F_TE_TRACK_UUID = 11,
	F_TE_NAME = 23,
	F_TE_DOUBLE_COUNTER = 44,
	F_TE_FLOW_IDS = 47,
	F_TE_TERMINATING_FLOW_IDS = 48,

	F_DA_NAME_IID = 1,
	F_DA_BOOL = 2,
	F_DA_UINT = 3,
	F_DA_INT = 4,
	F_DA_DOUBLE = 5,
	F_DA_STRING = 6,
	F_DA_NAME = 10,
	F_DA_DICT = 11,
	F_DA_ARRAY = 12,
	F_DA_STRING_IID = 17,

	F_ID_CATEGORIES = 1,
	F_ID_NAMES = 2,
	F_ID_ANNOTATION_NAMES = 3,
	F_ID_STRING_VALUES = 29,
	F_INTERNED_IID = 1,
	F_INTERNED_NAME = 2,

	F_TD_UUID = 1,
	F_TD_NAME = 2,
	F_TD_PROCESS = 3,
	F_TD_THREAD = 4,
	F_TD_PARENT = 5,
	F_TD_COUNTER = 8,

	F_PD_PID = 1,
	F_PD_SORT = 3,
	F_PD_NAME = 6,
	F_PD_LABELS = 8,

	F_THD_PID = 1,
	F_THD_TID = 2,
	F_THD_SORT = 3,
	F_THD_NAME = 5,
};

enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3, TE_COUNTER = 4 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_MONOTONIC_ID = 3, CLOCK_BOOTTIME_ID = 6 };
/* Sequence-scoped clock ids are 64..127. */
#define PW_CLOCK_INCREMENTAL 64
#define PW_SEQ_ID 1
#define PW_SEQ_INCREMENTAL_STATE_CLEARED 1

/* Strings are cut to these lengths, so that a nested message always fits
 * its 4-byte length (pb.h) and a worst case is cheap to compute. */
#define PW_STR_MAX (64u * 1024)
#define PW_ELEM_STR_MAX 4096u
#define PW_ELEMS_MAX 4096u

/* Interning tables and track uuids are common/hashmap.h's byte-string maps
 * (keys copied), hashed once per lookup with tp_hash_bytes(). */

/* The value of key, or NULL. */
static uint64_t *pw_map_get(const struct tp_smap *m, uint64_t h, const void *key, size_t len)
{
	struct tp_smap_ent *x = tp_smap_find(m, h, key, len);
	return x ? &x->val : NULL;
}

/* Adds key (not present) with val.  0 or -ENOMEM. */
static int pw_map_put(struct tp_smap *m, uint64_t h, const void *key, size_t len, uint64_t val)
{
	return tp_smap_add(m, h, key, len, val) ? 0 : -ENOMEM;
}

/* ---- the writer's state ---------------------------------------------------- */

/* Interned strings the packet being written introduces. */
struct pw_new {
	uint64_t iid;
	const char *s;
	uint32_t len;
};

#define PW_NEW_MAX (2 + TP_EV_MAX_ARGS + 1)

/* An interning table: the map of texts, and a cache by address in front of
 * it. */
#define PW_PCACHE 64

struct pw_pcache {
	const char *p;
	uint32_t len;
	uint64_t iid;
	const char *text; /* the map's copy */
};

struct pw_strs {
	struct tp_smap map; /* text -> iid */
	uint64_t next;	   /* the last iid given */
	struct pw_pcache cache[PW_PCACHE];
};

struct pw_frame {
	uint32_t id, parent;
	char *name, *category;
};

struct pw {
	struct tp_writer w; /* first: the writer interface */
	struct tp_pb pb;
	int64_t pid;	      /* the header's: where the documents go */
	uint64_t inc_ts;      /* the incremental clock's value */
	uint64_t last_ts;     /* the latest event time, for the documents */
	uint64_t next_uuid;
	struct pw_strs names, cats, keys, vals;
	struct tp_smap tracks; /* (pid, tid) / (pid, 0, "counter") -> uuid */
	struct tp_smap procs;  /* pid -> uuid */
	/* The last thread track looked up: sources write runs of one thread. */
	int64_t last_pid, last_tid;
	uint64_t last_uuid;
	/* The last category looked up, once in the table (not new in the
	 * packet, which may yet be dropped): categories are literals, and most
	 * events repeat the last one, whose strlen and lookup this saves. */
	const char *last_cat;
	uint64_t last_cat_iid;
	const struct tp_doc *devices_done;
	int have_devices;
	struct pw_frame *frames;
	size_t nframes, cap_frames;
	/* This packet's new interned strings, by kind. */
	struct pw_new new_names[1], new_cats[1], new_keys[TP_EV_MAX_ARGS + 1];
	struct pw_new new_vals[TP_EV_MAX_ARGS];
	unsigned n_new_names, n_new_cats, n_new_keys, n_new_vals;
};

static void pw_fail(struct pw *pw, int err)
{
	if (!pw->pb.error)
		pw->pb.error = err;
}

/* ---- interning ---------------------------------------------------------------- */

/* The iid of s in m; a new one is also queued in *q for this packet's
 * InternedData.  0 when out of memory (the caller then writes the string
 * itself where the schema allows, or leaves the field out). */
static uint64_t pw_intern(struct pw *pw, struct pw_strs *t, const char *s, size_t len,
			  int by_address, struct pw_new *q, unsigned *nq, unsigned qmax)
{
	/* Most strings come back at the same address: a cache by address
	 * saves hashing them.  Literals (categories, keys) may be trusted by
	 * address; other text is compared with the map's copy, since a freed
	 * and reused buffer may hold another string. */
	struct pw_pcache *c = &t->cache[(((uintptr_t)s >> 3) ^ len) & (PW_PCACHE - 1)];
	if (c->p == s && c->len == len && (by_address || !memcmp(c->text, s, len)))
		return c->iid;
	uint64_t h = tp_hash_bytes(s, len);
	struct tp_smap_ent *x = tp_smap_find(&t->map, h, s, len);
	if (x) {
		*c = (struct pw_pcache){ s, (uint32_t)len, x->val, x->key };
		return x->val;
	}
	if (*nq >= qmax)
		return 0;
	uint64_t iid = ++t->next;
	if (pw_map_put(&t->map, h, s, len, iid)) {
		--t->next;
		pw_fail(pw, -ENOMEM);
		return 0;
	}
	q[(*nq)++] = (struct pw_new){ iid, s, (uint32_t)len };
	return iid;
}

static size_t pw_new_room(const struct pw_new *q, unsigned n)
{
	size_t r = 0;
	for (unsigned i = 0; i < n; i++)
		r += 2 * TP_PB_TAG_MAX + 4 + 2 * TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(q[i].len);
	return r;
}

static uint8_t *pw_put_new(uint8_t *d, uint32_t field, const struct pw_new *q, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t *m;
		d = tp_pb_open(d, field, &m);
		d = tp_pb_put_uint(d, F_INTERNED_IID, q[i].iid);
		d = tp_pb_put_text(d, F_INTERNED_NAME, q[i].s, q[i].len);
		d = tp_pb_close(m, d);
	}
	return d;
}

static int pw_any_new(const struct pw *pw)
{
	return pw->n_new_names || pw->n_new_cats || pw->n_new_keys || pw->n_new_vals;
}

static void pw_drop_new(struct pw *pw)
{
	pw->n_new_names = pw->n_new_cats = pw->n_new_keys = pw->n_new_vals = 0;
}

static size_t pw_interned_room(const struct pw *pw)
{
	if (!pw_any_new(pw))
		return 0;
	return TP_PB_TAG_MAX + 4 + pw_new_room(pw->new_names, pw->n_new_names) +
	       pw_new_room(pw->new_cats, pw->n_new_cats) +
	       pw_new_room(pw->new_keys, pw->n_new_keys) +
	       pw_new_room(pw->new_vals, pw->n_new_vals);
}

/* The packet's InternedData (nothing when nothing is new); empties the
 * queues. */
static uint8_t *pw_put_interned(struct pw *pw, uint8_t *d)
{
	if (!pw_any_new(pw))
		return d;
	uint8_t *m;
	d = tp_pb_open(d, F_PKT_INTERNED, &m);
	d = pw_put_new(d, F_ID_CATEGORIES, pw->new_cats, pw->n_new_cats);
	d = pw_put_new(d, F_ID_NAMES, pw->new_names, pw->n_new_names);
	d = pw_put_new(d, F_ID_ANNOTATION_NAMES, pw->new_keys, pw->n_new_keys);
	/* InternedString's text is field 2 too (str). */
	d = pw_put_new(d, F_ID_STRING_VALUES, pw->new_vals, pw->n_new_vals);
	pw_drop_new(pw);
	return tp_pb_close(m, d);
}

/* ---- packets ----------------------------------------------------------------- */

/* Worst case of a packet's own fields besides its payload. */
#define PW_PACKET_ROOM (TP_PB_TAG_MAX + 4 + 3 * (TP_PB_TAG_MAX + TP_PB_VARINT_MAX))

/* Opens a packet of the sequence at time ts (0: no time, for descriptors). */
static uint8_t *pw_packet_open(struct pw *pw, uint8_t *d, uint8_t **mark, uint64_t ts)
{
	d = tp_pb_open(d, F_TRACE_PACKET, mark);
	if (ts) {
		if (ts >= pw->inc_ts) {
			d = tp_pb_put_uint(d, F_PKT_TIMESTAMP, ts - pw->inc_ts);
			pw->inc_ts = ts;
		} else {
			d = tp_pb_put_uint(d, F_PKT_TIMESTAMP, ts);
			d = tp_pb_put_uint(d, F_PKT_CLOCK_ID, CLOCK_MONOTONIC_ID);
		}
		if (ts > pw->last_ts)
			pw->last_ts = ts;
	}
	return tp_pb_put_uint(d, F_PKT_SEQ_ID, PW_SEQ_ID);
}

static uint8_t *pw_clock(uint8_t *d, uint32_t id, uint64_t ts, int incremental)
{
	uint8_t *m;
	d = tp_pb_open(d, F_SNAP_CLOCKS, &m);
	d = tp_pb_put_uint(d, F_CLOCK_ID, id);
	d = tp_pb_put_uint(d, F_CLOCK_TS, ts);
	if (incremental)
		d = tp_pb_put_uint(d, F_CLOCK_INCREMENTAL, 1);
	return tp_pb_close(m, d);
}

static uint64_t pw_clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The sequence's first packet: state cleared, the clocks, the default clock. */
static void pw_first_packet(struct pw *pw, int64_t wall_offset_ns)
{
	uint64_t mono = pw_clock_ns(CLOCK_MONOTONIC);
	uint64_t boot = pw_clock_ns(CLOCK_BOOTTIME);
	uint8_t *d = tp_pb_reserve(&pw->pb, 256), *m, *s;
	if (!d)
		return;
	d = tp_pb_open(d, F_TRACE_PACKET, &m);
	d = tp_pb_put_uint(d, F_PKT_SEQ_ID, PW_SEQ_ID);
	d = tp_pb_put_uint(d, F_PKT_SEQ_FLAGS, PW_SEQ_INCREMENTAL_STATE_CLEARED);
	d = tp_pb_open(d, F_PKT_DEFAULTS, &s);
	d = tp_pb_put_uint(d, F_DEFAULTS_CLOCK_ID, PW_CLOCK_INCREMENTAL);
	d = tp_pb_close(s, d);
	d = tp_pb_open(d, F_PKT_CLOCK_SNAPSHOT, &s);
	d = pw_clock(d, CLOCK_MONOTONIC_ID, mono, 0);
	d = pw_clock(d, CLOCK_BOOTTIME_ID, boot, 0);
	d = pw_clock(d, CLOCK_REALTIME_ID, (uint64_t)((int64_t)mono + wall_offset_ns), 0);
	d = pw_clock(d, PW_CLOCK_INCREMENTAL, mono, 1);
	d = tp_pb_close(s, d);
	d = tp_pb_close(m, d);
	tp_pb_commit(&pw->pb, d);
	pw->inc_ts = mono;
}

/* ---- tracks ------------------------------------------------------------------ */

static int32_t pw_i32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

static size_t pw_strlen(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n > PW_STR_MAX ? PW_STR_MAX : n;
}

/* A process track's descriptor; name and labels may be NULL. */
static void pw_put_process(struct pw *pw, uint64_t uuid, int64_t pid, const char *name,
			   const char *labels, int have_sort, int64_t sort_index)
{
	size_t nl = pw_strlen(name), ll = pw_strlen(labels);
	uint8_t *d = tp_pb_reserve(&pw->pb, PW_PACKET_ROOM + 128 + TP_PB_TEXT_ROOM(nl + ll)), *m,
					   *t, *p;
	if (!d)
		return;
	d = pw_packet_open(pw, d, &m, 0);
	d = tp_pb_open(d, F_PKT_TRACK_DESC, &t);
	d = tp_pb_put_uint(d, F_TD_UUID, uuid);
	d = tp_pb_open(d, F_TD_PROCESS, &p);
	d = tp_pb_put_int(d, F_PD_PID, pw_i32(pid));
	if (name)
		d = tp_pb_put_text(d, F_PD_NAME, name, nl);
	if (labels && ll)
		d = tp_pb_put_text(d, F_PD_LABELS, labels, ll);
	if (have_sort)
		d = tp_pb_put_int(d, F_PD_SORT, pw_i32(sort_index));
	d = tp_pb_close(p, d);
	d = tp_pb_close(t, d);
	tp_pb_commit(&pw->pb, tp_pb_close(m, d));
}

static void pw_put_thread(struct pw *pw, uint64_t uuid, int64_t pid, int64_t tid,
			  const char *name, int have_sort, int64_t sort_index)
{
	size_t nl = pw_strlen(name);
	uint8_t *d = tp_pb_reserve(&pw->pb, PW_PACKET_ROOM + 128 + TP_PB_TEXT_ROOM(nl)), *m, *t, *p;
	if (!d)
		return;
	d = pw_packet_open(pw, d, &m, 0);
	d = tp_pb_open(d, F_PKT_TRACK_DESC, &t);
	d = tp_pb_put_uint(d, F_TD_UUID, uuid);
	d = tp_pb_open(d, F_TD_THREAD, &p);
	d = tp_pb_put_int(d, F_THD_PID, pw_i32(pid));
	d = tp_pb_put_int(d, F_THD_TID, tid);
	if (name)
		d = tp_pb_put_text(d, F_THD_NAME, name, nl);
	if (have_sort)
		d = tp_pb_put_int(d, F_THD_SORT, pw_i32(sort_index));
	d = tp_pb_close(p, d);
	d = tp_pb_close(t, d);
	tp_pb_commit(&pw->pb, tp_pb_close(m, d));
}

static void pw_put_counter_track(struct pw *pw, uint64_t uuid, uint64_t parent, const char *name,
				 size_t nl)
{
	uint8_t *d = tp_pb_reserve(&pw->pb, PW_PACKET_ROOM + 128 + TP_PB_TEXT_ROOM(nl)), *m, *t, *c;
	if (!d)
		return;
	d = pw_packet_open(pw, d, &m, 0);
	d = tp_pb_open(d, F_PKT_TRACK_DESC, &t);
	d = tp_pb_put_uint(d, F_TD_UUID, uuid);
	d = tp_pb_put_uint(d, F_TD_PARENT, parent);
	d = tp_pb_put_text(d, F_TD_NAME, name, nl);
	d = tp_pb_open(d, F_TD_COUNTER, &c);
	d = tp_pb_close(c, d);
	d = tp_pb_close(t, d);
	tp_pb_commit(&pw->pb, tp_pb_close(m, d));
}

/* The uuid of pid's process track, described (without a name) on first use
 * when describe says so; 0 when out of memory. */
static uint64_t pw_process_track(struct pw *pw, int64_t pid, int describe)
{
	uint64_t h = tp_hash_bytes(&pid, sizeof(pid));
	uint64_t *v = pw_map_get(&pw->procs, h, &pid, sizeof(pid));
	if (v)
		return *v;
	uint64_t uuid = ++pw->next_uuid;
	if (pw_map_put(&pw->procs, h, &pid, sizeof(pid), uuid)) {
		pw_fail(pw, -ENOMEM);
		return 0;
	}
	if (describe)
		pw_put_process(pw, uuid, pid, NULL, NULL, 0, 0);
	return uuid;
}

static uint64_t pw_thread_track(struct pw *pw, int64_t pid, int64_t tid, int describe)
{
	if (pw->last_uuid && pid == pw->last_pid && tid == pw->last_tid)
		return pw->last_uuid;
	int64_t key[2] = { pid, tid };
	uint64_t h = tp_hash_bytes(key, sizeof(key));
	uint64_t *v = pw_map_get(&pw->tracks, h, key, sizeof(key));
	uint64_t uuid;
	if (v) {
		uuid = *v;
	} else {
		if (!pw_process_track(pw, pid, 1))
			return 0;
		uuid = ++pw->next_uuid;
		if (pw_map_put(&pw->tracks, h, key, sizeof(key), uuid)) {
			pw_fail(pw, -ENOMEM);
			return 0;
		}
		if (describe)
			pw_put_thread(pw, uuid, pid, tid, NULL, 0, 0);
	}
	pw->last_pid = pid;
	pw->last_tid = tid;
	pw->last_uuid = uuid;
	return uuid;
}

/* A counter's track, a child of its process's: named as Perfetto names the
 * JSON's "C" events ("name key"), or just "name" for the usual key
 * "value". */
static uint64_t pw_counter_track(struct pw *pw, int64_t pid, const char *name, size_t nlen,
				 const char *key, size_t klen)
{
	char buf[512];
	size_t kl = klen == 5 && !memcmp(key, "value", 5) ? 0 : klen;
	if (nlen > 256)
		nlen = 256;
	if (kl > 200)
		kl = 200;
	/* The map's key: pid, a marker no (pid, tid) key has (those are 16
	 * bytes), then the track's name. */
	memcpy(buf, &pid, sizeof(pid));
	buf[8] = 'C';
	memcpy(buf + 9, name, nlen);
	size_t n = 9 + nlen;
	if (kl) {
		buf[n++] = ' ';
		memcpy(buf + n, key, kl);
		n += kl;
	}
	uint64_t h = tp_hash_bytes(buf, n);
	uint64_t *v = pw_map_get(&pw->tracks, h, buf, n);
	if (v)
		return *v;
	uint64_t parent = pw_process_track(pw, pid, 1);
	if (!parent)
		return 0;
	uint64_t uuid = ++pw->next_uuid;
	if (pw_map_put(&pw->tracks, h, buf, n, uuid)) {
		pw_fail(pw, -ENOMEM);
		return 0;
	}
	pw_put_counter_track(pw, uuid, parent, buf + 9, n - 9);
	return uuid;
}

/* ---- debug annotations ---------------------------------------------------------- */

/* Worst case of one arg's annotation. */
static size_t pw_arg_room(const struct tp_arg *a)
{
	size_t r = 2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX + TP_PB_TAG_MAX + TP_PB_VARINT_MAX;
	switch (a->type) {
	case TP_VAL_STR:
		return r + TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(a->n > PW_STR_MAX ? PW_STR_MAX : a->n);
	case TP_VAL_HEX:
		return r + 20;
	case TP_VAL_STRS: {
		uint32_t n = a->n > PW_ELEMS_MAX ? PW_ELEMS_MAX : a->n;
		for (uint32_t i = 0; i < n; i++) {
			size_t l = a->strs[i] ? strlen(a->strs[i]) : 0;
			r += 2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX +
			     TP_PB_TEXT_ROOM(l > PW_ELEM_STR_MAX ? PW_ELEM_STR_MAX : l);
		}
		return r;
	}
	case TP_VAL_I64S:
		return r + (size_t)(a->n > PW_ELEMS_MAX ? PW_ELEMS_MAX : a->n) *
				   (2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX);
	case TP_VAL_DIM3:
		return r + 3 * (2 * TP_PB_TAG_MAX + 4 + TP_PB_VARINT_MAX);
	default:
		return r;
	}
}

static uint8_t *pw_put_hex(uint8_t *d, uint32_t field, uint64_t v)
{
	static const char hex[16] = "0123456789abcdef";
	char s[18];
	int n = 0;
	s[n++] = '0';
	s[n++] = 'x';
	int shift = 60;
	while (shift > 0 && !((v >> shift) & 0xf))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		s[n++] = hex[(v >> shift) & 0xf];
	return tp_pb_put_bytes(d, field, s, (size_t)n);
}

/* An element of an array annotation: a nameless annotation of one value. */
static uint8_t *pw_put_elem_int(uint8_t *d, int64_t v)
{
	uint8_t *m;
	d = tp_pb_open(d, F_DA_ARRAY, &m);
	d = tp_pb_put_int(d, F_DA_INT, v);
	return tp_pb_close(m, d);
}

/* The value of an arg (the annotation's name already written). */
static uint8_t *pw_put_value(uint8_t *d, const struct tp_arg *a)
{
	switch (a->type) {
	case TP_VAL_U64:
		return tp_pb_put_uint(d, F_DA_UINT, a->u);
	case TP_VAL_I64:
		return tp_pb_put_int(d, F_DA_INT, a->i);
	case TP_VAL_HEX:
		return pw_put_hex(d, F_DA_STRING, a->u);
	case TP_VAL_F64:
		return tp_pb_put_double(d, F_DA_DOUBLE, a->f);
	case TP_VAL_BOOL:
		return tp_pb_put_uint(d, F_DA_BOOL, a->u != 0);
	case TP_VAL_STR:
		return tp_pb_put_text(d, F_DA_STRING, a->s, a->n > PW_STR_MAX ? PW_STR_MAX : a->n);
	case TP_VAL_STRS: {
		uint32_t n = a->n > PW_ELEMS_MAX ? PW_ELEMS_MAX : a->n;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *m;
			const char *s = a->strs[i] ? a->strs[i] : "";
			size_t l = strlen(s);
			d = tp_pb_open(d, F_DA_ARRAY, &m);
			d = tp_pb_put_text(d, F_DA_STRING, s, l > PW_ELEM_STR_MAX ? PW_ELEM_STR_MAX : l);
			d = tp_pb_close(m, d);
		}
		return d;
	}
	case TP_VAL_I64S: {
		uint32_t n = a->n > PW_ELEMS_MAX ? PW_ELEMS_MAX : a->n;
		for (uint32_t i = 0; i < n; i++)
			d = pw_put_elem_int(d, a->is[i]);
		return d;
	}
	case TP_VAL_DIM3:
		for (int i = 0; i < 3; i++)
			d = pw_put_elem_int(d, a->v3[i]);
		return d;
	default:
		return d;
	}
}

/* ---- events -------------------------------------------------------------------- */

static void pw_event(struct tp_writer *w, const struct tp_event *e)
{
	struct pw *pw = (struct pw *)w;
	if (e->kind == TP_EV_FLOW_OUT || e->kind == TP_EV_FLOW_IN)
		return; /* bound to the slices: flow_out / flow_in */
	if (pw->pb.error)
		return;
	unsigned nargs = e->nargs > TP_EV_MAX_ARGS ? TP_EV_MAX_ARGS : e->nargs;
	uint64_t track;
	double counter = 0;
	if (e->kind == TP_EV_COUNTER) {
		if (!nargs || e->args[0].type != TP_VAL_F64)
			return;
		counter = e->args[0].f;
		track = pw_counter_track(pw, e->pid, e->name, e->name_len, e->args[0].key,
					 e->args[0].klen);
		nargs = 0;
	} else {
		track = pw_thread_track(pw, e->pid, e->tid, 1);
	}
	if (!track)
		return;
	w->events++;

	size_t nlen = e->name_len > PW_STR_MAX ? PW_STR_MAX : e->name_len;
	uint64_t name_iid = 0, cat_iid = 0;
	uint64_t key_iids[TP_EV_MAX_ARGS + 1], val_iids[TP_EV_MAX_ARGS];
	if (e->kind != TP_EV_COUNTER) {
		name_iid = pw_intern(pw, &pw->names, e->name, nlen, 0, pw->new_names,
				     &pw->n_new_names, 1);
		if (e->cat && e->cat == pw->last_cat) {
			cat_iid = pw->last_cat_iid;
		} else if (e->cat) {
			cat_iid = pw_intern(pw, &pw->cats, e->cat, strlen(e->cat), 1, pw->new_cats,
					    &pw->n_new_cats, 1);
			if (cat_iid && !pw->n_new_cats) {
				pw->last_cat = e->cat;
				pw->last_cat_iid = cat_iid;
			}
		}
	}
	size_t need = 2 * PW_PACKET_ROOM + 8 * (TP_PB_TAG_MAX + TP_PB_VARINT_MAX) +
		      TP_PB_TEXT_ROOM(nlen);
	for (unsigned i = 0; i < nargs; i++) {
		const struct tp_arg *a = &e->args[i];
		key_iids[i] = pw_intern(pw, &pw->keys, a->key, a->klen, 1, pw->new_keys,
					&pw->n_new_keys, TP_EV_MAX_ARGS + 1);
		/* Long-lived strings (kernel names) recur: interned, by text.
		 * Others are written where they are used. */
		val_iids[i] = a->type == TP_VAL_STR && a->stable && a->n <= PW_STR_MAX
				      ? pw_intern(pw, &pw->vals, a->s, a->n, 0, pw->new_vals,
						  &pw->n_new_vals, TP_EV_MAX_ARGS)
				      : 0;
		need += pw_arg_room(a) + a->klen;
	}
	if (e->sf)
		key_iids[nargs] = pw_intern(pw, &pw->keys, "sf", 2, 1, pw->new_keys,
					    &pw->n_new_keys, TP_EV_MAX_ARGS + 1);
	need += pw_interned_room(pw) + 64;

	uint8_t *d = tp_pb_reserve(&pw->pb, need), *pm, *tm;
	if (!d) {
		pw_drop_new(pw);
		return;
	}
	d = pw_packet_open(pw, d, &pm, e->ts);
	d = tp_pb_open(d, F_PKT_TRACK_EVENT, &tm);
	d = tp_pb_put_uint(d, F_TE_TRACK_UUID, track);
	switch (e->kind) {
	case TP_EV_SLICE:
		d = tp_pb_put_uint(d, F_TE_TYPE, TE_SLICE_BEGIN);
		break;
	case TP_EV_INSTANT:
		d = tp_pb_put_uint(d, F_TE_TYPE, TE_INSTANT);
		break;
	default:
		d = tp_pb_put_uint(d, F_TE_TYPE, TE_COUNTER);
		d = tp_pb_put_double(d, F_TE_DOUBLE_COUNTER, counter);
		break;
	}
	if (e->kind != TP_EV_COUNTER) {
		if (cat_iid)
			d = tp_pb_put_uint(d, F_TE_CATEGORY_IIDS, cat_iid);
		if (name_iid)
			d = tp_pb_put_uint(d, F_TE_NAME_IID, name_iid);
		else
			d = tp_pb_put_text(d, F_TE_NAME, e->name, nlen);
		if (e->flow_out)
			d = tp_pb_put_fixed64(d, F_TE_FLOW_IDS, e->flow_out);
		if (e->flow_in)
			d = tp_pb_put_fixed64(d, F_TE_TERMINATING_FLOW_IDS, e->flow_in);
	}
	for (unsigned i = 0; i < nargs + (e->sf != 0); i++) {
		uint8_t *am;
		d = tp_pb_open(d, F_TE_ANNOTATIONS, &am);
		if (i == nargs) {
			d = key_iids[i] ? tp_pb_put_uint(d, F_DA_NAME_IID, key_iids[i])
					: tp_pb_put_bytes(d, F_DA_NAME, "sf", 2);
			d = tp_pb_put_uint(d, F_DA_UINT, e->sf);
		} else {
			const struct tp_arg *a = &e->args[i];
			d = key_iids[i] ? tp_pb_put_uint(d, F_DA_NAME_IID, key_iids[i])
					: tp_pb_put_bytes(d, F_DA_NAME, a->key, a->klen);
			d = val_iids[i] ? tp_pb_put_uint(d, F_DA_STRING_IID, val_iids[i])
					: pw_put_value(d, a);
		}
		d = tp_pb_close(am, d);
	}
	d = tp_pb_close(tm, d);
	d = pw_put_interned(pw, d);
	d = tp_pb_close(pm, d);
	if (e->kind == TP_EV_SLICE) {
		d = pw_packet_open(pw, d, &pm, e->end > e->ts ? e->end : e->ts);
		d = tp_pb_open(d, F_PKT_TRACK_EVENT, &tm);
		d = tp_pb_put_uint(d, F_TE_TRACK_UUID, track);
		d = tp_pb_put_uint(d, F_TE_TYPE, TE_SLICE_END);
		d = tp_pb_close(tm, d);
		d = tp_pb_close(pm, d);
	}
	tp_pb_commit(&pw->pb, d);
}

static void pw_process(struct tp_writer *w, int64_t pid, const char *name, const char *labels,
		       int64_t sort_index)
{
	struct pw *pw = (struct pw *)w;
	/* Described here, with its name: first use or again (same uuid). */
	uint64_t uuid = pw_process_track(pw, pid, 0);
	if (uuid)
		pw_put_process(pw, uuid, pid, name ? name : "", labels, 1, sort_index);
}

static void pw_thread(struct tp_writer *w, int64_t pid, int64_t tid, const char *name,
		      int64_t sort_index)
{
	struct pw *pw = (struct pw *)w;
	uint64_t uuid = pw_thread_track(pw, pid, tid, 0);
	if (uuid)
		pw_put_thread(pw, uuid, pid, tid, name ? name : "", 1, sort_index);
}

/* Frames are written as a document at close, as the JSON writer's
 * "stackFrames" object. */
static void pw_frame(struct tp_writer *w, uint32_t id, uint32_t parent, const char *name,
		     const char *category)
{
	struct pw *pw = (struct pw *)w;
	if (pw->nframes == pw->cap_frames) {
		size_t cap = pw->cap_frames ? pw->cap_frames * 2 : 256;
		struct pw_frame *f = realloc(pw->frames, cap * sizeof(*f));
		if (!f)
			return; /* the events' "sf" then names no frame */
		pw->frames = f;
		pw->cap_frames = cap;
	}
	char *n = strdup(name ? name : ""), *c = strdup(category ? category : "");
	if (!n || !c) {
		free(n);
		free(c);
		return;
	}
	pw->frames[pw->nframes++] = (struct pw_frame){ id, parent, n, c };
}

/* ---- documents ------------------------------------------------------------------- */

#define PW_DOC_DEPTH 32

static size_t pw_doc_room(const struct tp_doc *doc)
{
	size_t r = 0;
	for (size_t i = 0; i < doc->n; i++) {
		const struct tp_doc_node *x = &doc->nodes[i];
		const char *k = tp_doc_key(doc, x);
		r += 3 * TP_PB_TAG_MAX + 4 + 2 * TP_PB_VARINT_MAX + 8 +
		     TP_PB_TEXT_ROOM((k ? pw_strlen(k) : 0) +
				     (x->kind == TP_DOC_VALUE && x->type == TP_VAL_STR ? x->len : 0));
	}
	return r;
}

/* The document's nodes as annotations of field `field` (an event's
 * debug_annotations at the top): each node one annotation named by its key
 * (or `name` for a keyless node at the top), objects as dict_entries,
 * arrays as array_values. */
static uint8_t *pw_put_doc(uint8_t *d, const struct tp_doc *doc, const char *name)
{
	uint8_t *marks[PW_DOC_DEPTH];
	uint32_t fields[PW_DOC_DEPTH + 1];
	int depth = 0, skipped = 0;
	fields[0] = F_TE_ANNOTATIONS;
	for (size_t i = 0; i < doc->n; i++) {
		const struct tp_doc_node *x = &doc->nodes[i];
		if (x->kind == TP_DOC_END) {
			if (skipped)
				skipped--;
			else if (depth > 0)
				d = tp_pb_close(marks[--depth], d);
			continue;
		}
		if (skipped || (x->kind != TP_DOC_VALUE && depth == PW_DOC_DEPTH)) {
			/* Too deep: left out, with what it holds. */
			if (x->kind != TP_DOC_VALUE)
				skipped++;
			continue;
		}
		uint8_t *m;
		const char *k = tp_doc_key(doc, x);
		if (!k && depth == 0)
			k = name;
		d = tp_pb_open(d, fields[depth], &m);
		if (k)
			d = tp_pb_put_text(d, F_DA_NAME, k, pw_strlen(k));
		switch (x->kind) {
		case TP_DOC_VALUE:
			switch (x->type) {
			case TP_VAL_U64:
				d = tp_pb_put_uint(d, F_DA_UINT, x->u);
				break;
			case TP_VAL_I64:
				d = tp_pb_put_int(d, F_DA_INT, x->i);
				break;
			case TP_VAL_F64:
				d = tp_pb_put_double(d, F_DA_DOUBLE, x->f);
				break;
			case TP_VAL_BOOL:
				d = tp_pb_put_uint(d, F_DA_BOOL, x->u != 0);
				break;
			default:
				d = tp_pb_put_text(d, F_DA_STRING, tp_doc_text(doc, x), x->len);
				break;
			}
			d = tp_pb_close(m, d);
			break;
		default:
			marks[depth++] = m;
			fields[depth] = x->kind == TP_DOC_OBJECT ? F_DA_DICT : F_DA_ARRAY;
			break;
		}
	}
	while (depth > 0)
		d = tp_pb_close(marks[--depth], d);
	return d;
}

/* An instant named `name` on the header process's track at the latest time
 * seen, carrying doc. */
static void pw_doc_event(struct pw *pw, const char *name, const struct tp_doc *doc)
{
	uint64_t track = pw_process_track(pw, pw->pid, 1);
	if (!track || pw->pb.error)
		return;
	size_t need = pw_doc_room(doc);
	if (need > TP_PB_NESTED_MAX - 4096)
		return; /* cannot be one packet: never near in practice */
	size_t nl = strlen(name);
	uint8_t *d = tp_pb_reserve(&pw->pb, need + PW_PACKET_ROOM + 128 + nl), *pm, *tm;
	if (!d)
		return;
	d = pw_packet_open(pw, d, &pm, pw->last_ts ? pw->last_ts : pw->inc_ts);
	d = tp_pb_open(d, F_PKT_TRACK_EVENT, &tm);
	d = tp_pb_put_uint(d, F_TE_TRACK_UUID, track);
	d = tp_pb_put_uint(d, F_TE_TYPE, TE_INSTANT);
	d = tp_pb_put_bytes(d, F_TE_NAME, name, nl);
	d = pw_put_doc(d, doc, name);
	d = tp_pb_close(tm, d);
	tp_pb_commit(&pw->pb, tp_pb_close(pm, d));
	pw->w.events++;
}

static void pw_write_frames(struct pw *pw)
{
	if (!pw->nframes)
		return;
	struct tp_doc doc;
	char id[16];
	tp_doc_init(&doc);
	for (size_t i = 0; i < pw->nframes; i++) {
		const struct pw_frame *f = &pw->frames[i];
		snprintf(id, sizeof(id), "%u", f->id);
		tp_doc_object(&doc, id);
		tp_doc_str(&doc, "name", f->name);
		tp_doc_str(&doc, "category", f->category);
		if (f->parent)
			tp_doc_u64(&doc, "parent", f->parent);
		tp_doc_end(&doc);
	}
	if (!doc.error)
		pw_doc_event(pw, "stackFrames", &doc);
	tp_doc_free(&doc);
}

/* ---- the file ----------------------------------------------------------------------- */

static void pw_free(struct pw *pw)
{
	for (size_t i = 0; i < pw->nframes; i++) {
		free(pw->frames[i].name);
		free(pw->frames[i].category);
	}
	free(pw->frames);
	tp_smap_free(&pw->names.map);
	tp_smap_free(&pw->cats.map);
	tp_smap_free(&pw->keys.map);
	tp_smap_free(&pw->vals.map);
	tp_smap_free(&pw->tracks);
	tp_smap_free(&pw->procs);
	tp_pb_free(&pw->pb);
	free(pw);
}

static struct tp_writer *pw_open(struct tp_sink *sink, const struct tp_writer_header *h)
{
	struct pw *pw = calloc(1, sizeof(*pw));
	if (!pw)
		return NULL;
	pw->w.ops = &tp_perfetto_writer;
	if (tp_pb_init(&pw->pb, sink)) {
		free(pw);
		return NULL;
	}
	pw->pid = h->pid;
	pw_first_packet(pw, h->wall_offset_ns);
	/* The header's facts the JSON writes at its top, and the devices when
	 * already known. */
	struct tp_doc doc;
	tp_doc_init(&doc);
	tp_doc_i64(&doc, "baseTimeNanoseconds", h->base_wall_ns);
	tp_doc_i64(&doc, "wall_offset_ns", h->wall_offset_ns);
	tp_doc_i64(&doc, "rank", h->rank);
	tp_doc_i64(&doc, "local_rank", h->local_rank);
	tp_doc_i64(&doc, "world_size", h->world_size);
	tp_doc_i64(&doc, "local_world_size", h->local_world_size);
	tp_doc_i64(&doc, "node_rank", h->node_rank);
	if (h->launcher)
		tp_doc_str(&doc, "launcher", h->launcher);
	if (!doc.error)
		pw_doc_event(pw, "traceprof header", &doc);
	tp_doc_free(&doc);
	if (h->devices && h->devices->n) {
		pw_doc_event(pw, "deviceProperties", h->devices);
		pw->have_devices = 1;
	}
	if (pw->pb.error) {
		pw_free(pw);
		return NULL;
	}
	pw->w.events = 0;
	return &pw->w;
}

static int pw_close(struct tp_writer *w, const struct tp_writer_trailer *tr)
{
	struct pw *pw = (struct pw *)w;
	if (!pw->have_devices && tr->devices && tr->devices->n)
		pw_doc_event(pw, "deviceProperties", tr->devices);
	pw_write_frames(pw);
	struct tp_doc name;
	tp_doc_init(&name);
	if (tr->trace_name) {
		tp_doc_str(&name, "traceName", tr->trace_name);
		if (!name.error)
			pw_doc_event(pw, "traceName", &name);
	}
	tp_doc_free(&name);
	if (tr->footer)
		pw_doc_event(pw, "traceprof", tr->footer);
	tp_pb_flush(&pw->pb);
	int rc = pw->pb.error;
	pw_free(pw);
	return rc;
}

static void pw_discard(struct tp_writer *w)
{
	pw_free((struct pw *)w);
}

static uint64_t pw_bytes(const struct tp_writer *w)
{
	return tp_pb_bytes(&((const struct pw *)w)->pb);
}

static int pw_error(const struct tp_writer *w)
{
	return ((const struct pw *)w)->pb.error;
}

const struct tp_writer_ops tp_perfetto_writer = {
	.name = "perfetto",
	.ext = ".pftrace",
	.open = pw_open,
	.event = pw_event,
	.process = pw_process,
	.thread = pw_thread,
	.frame = pw_frame,
	.close = pw_close,
	.discard = pw_discard,
	.bytes = pw_bytes,
	.error = pw_error,
};
