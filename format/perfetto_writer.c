/* The Perfetto writer: format-neutral events (format/event.h) as a
 * perfetto.protos.Trace stream (../shared/clients/perfetto_trace.proto),
 * the format Perfetto's UI and trace_processor read natively.  This file is
 * the writer itself (tp_perfetto_writer: events, names, frames) and the
 * file's life cycle; the packets, interning, tracks and annotations are its
 * parts (format/perfetto_internal.h lists them).
 *
 * The file is one packet sequence of TracePackets:
 *   - the first clears the sequence's incremental state and ties its clocks
 *     (perfetto_packets.c);
 *   - TrackDescriptors before the first event on each track, and again with
 *     names at the end (perfetto_tracks.c);
 *   - TrackEvents: slices as SLICE_BEGIN / SLICE_END pairs on their thread's
 *     track (a complete event has no TrackEvent form), instants, counters;
 *     names, categories, argument names and long-lived string values
 *     (kernel names) interned (perfetto_intern.c); args as DebugAnnotations
 *     (perfetto_annos.c); arrows as flow_ids on the launching slice and
 *     terminating_flow_ids on the GPU work (the FLOW_OUT / FLOW_IN events
 *     are not needed);
 *   - instants on the header process's track that carry the documents as
 *     nested debug annotations (common/layout.h's TP_DOC_*): the header
 *     first, then at the end "deviceProperties" (unless the header had
 *     them), "stackFrames" (the native frames the events' "sf" annotations
 *     name), "traceName" and last "traceprof" (the footer).  The UI shows
 *     them in the slice details. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/perfetto_internal.h"
#include "format/sink.h"

/* ---- events ---- */
static void pw_event(struct tp_writer *w, const struct tp_event *e)
{
	struct tp_pf *pf = (struct tp_pf *)w;
	if (e->kind == TP_EV_FLOW_OUT || e->kind == TP_EV_FLOW_IN)
		return; /* bound to the slices: flow_out / flow_in */
	if (pf->pb.error)
		return;
	unsigned nargs = e->nargs > TP_EV_MAX_ARGS ? TP_EV_MAX_ARGS : e->nargs;
	uint64_t track;
	double counter = 0;
	if (e->kind == TP_EV_COUNTER) {
		if (!nargs || e->args[0].type != TP_VAL_F64)
			return;
		counter = e->args[0].f;
		track = tp_pf_counter_track(pf, e->pid, e->name, e->name_len, e->args[0].key,
					 e->args[0].klen);
		nargs = 0;
	} else {
		track = tp_pf_thread_track(pf, e->pid, e->tid, 1);
	}
	if (!track)
		return;
	w->events++;

	size_t nlen = e->name_len > TP_PF_STR_MAX ? TP_PF_STR_MAX : e->name_len;
	uint64_t name_iid = 0, cat_iid = 0;
	uint64_t key_iids[TP_EV_MAX_ARGS + 1], val_iids[TP_EV_MAX_ARGS];
	if (e->kind != TP_EV_COUNTER) {
		name_iid = tp_pf_intern(pf, &pf->names, e->name, nlen, 0, pf->new_names,
					&pf->n_new_names, 1);
		if (e->cat && e->cat == pf->last_cat) {
			cat_iid = pf->last_cat_iid;
		} else if (e->cat) {
			cat_iid = tp_pf_intern(pf, &pf->cats, e->cat, strlen(e->cat), 1,
					       pf->new_cats, &pf->n_new_cats, 1);
			if (cat_iid && !pf->n_new_cats) {
				pf->last_cat = e->cat;
				pf->last_cat_iid = cat_iid;
			}
		}
	}
	size_t need = 2 * TP_PF_PACKET_ROOM + 8 * (TP_PB_TAG_MAX + TP_PB_VARINT_MAX) +
		      TP_PB_TEXT_ROOM(nlen);
	for (unsigned i = 0; i < nargs; i++) {
		const struct tp_arg *a = &e->args[i];
		key_iids[i] = tp_pf_intern(pf, &pf->keys, a->key, a->klen, 1, pf->new_keys,
					   &pf->n_new_keys, TP_EV_MAX_ARGS + 1);
		/* Long-lived strings (kernel names) recur: interned, by text.
		 * Others are written where they are used. */
		val_iids[i] = a->type == TP_VAL_STR && a->stable && a->n <= TP_PF_STR_MAX
				      ? tp_pf_intern(pf, &pf->vals, a->s, a->n, 0, pf->new_vals,
						     &pf->n_new_vals, TP_EV_MAX_ARGS)
				      : 0;
		need += tp_pf_arg_room(a) + a->klen;
	}
	if (e->sf)
		key_iids[nargs] = tp_pf_intern(pf, &pf->keys, "sf", 2, 1, pf->new_keys,
					       &pf->n_new_keys, TP_EV_MAX_ARGS + 1);
	need += tp_pf_interned_room(pf) + 64;

	uint8_t *d = tp_pb_reserve(&pf->pb, need), *pm, *tm;
	if (!d) {
		tp_pf_drop_new(pf);
		return;
	}
	d = tp_pf_packet_open(pf, d, &pm, e->ts);
	d = tp_pb_open(d, TP_PF_PKT_TRACK_EVENT, &tm);
	d = tp_pb_put_uint(d, TP_PF_TE_TRACK_UUID, track);
	switch (e->kind) {
	case TP_EV_SLICE:
		d = tp_pb_put_uint(d, TP_PF_TE_TYPE, TP_PF_TYPE_SLICE_BEGIN);
		break;
	case TP_EV_INSTANT:
		d = tp_pb_put_uint(d, TP_PF_TE_TYPE, TP_PF_TYPE_INSTANT);
		break;
	default:
		d = tp_pb_put_uint(d, TP_PF_TE_TYPE, TP_PF_TYPE_COUNTER);
		d = tp_pb_put_double(d, TP_PF_TE_DOUBLE_COUNTER, counter);
		break;
	}
	if (e->kind != TP_EV_COUNTER) {
		if (cat_iid)
			d = tp_pb_put_uint(d, TP_PF_TE_CATEGORY_IIDS, cat_iid);
		if (name_iid)
			d = tp_pb_put_uint(d, TP_PF_TE_NAME_IID, name_iid);
		else
			d = tp_pb_put_text(d, TP_PF_TE_NAME, e->name, nlen);
		if (e->flow_out)
			d = tp_pb_put_fixed64(d, TP_PF_TE_FLOW_IDS, e->flow_out);
		if (e->flow_in)
			d = tp_pb_put_fixed64(d, TP_PF_TE_TERMINATING_FLOW_IDS, e->flow_in);
	}
	for (unsigned i = 0; i < nargs + (e->sf != 0); i++) {
		uint8_t *am;
		d = tp_pb_open(d, TP_PF_TE_ANNOTATIONS, &am);
		if (i == nargs) {
			d = key_iids[i] ? tp_pb_put_uint(d, TP_PF_DA_NAME_IID, key_iids[i])
					: tp_pb_put_bytes(d, TP_PF_DA_NAME, "sf", 2);
			d = tp_pb_put_uint(d, TP_PF_DA_UINT, e->sf);
		} else {
			const struct tp_arg *a = &e->args[i];
			d = key_iids[i] ? tp_pb_put_uint(d, TP_PF_DA_NAME_IID, key_iids[i])
					: tp_pb_put_bytes(d, TP_PF_DA_NAME, a->key, a->klen);
			d = val_iids[i] ? tp_pb_put_uint(d, TP_PF_DA_STRING_IID, val_iids[i])
					: tp_pf_put_value(d, a);
		}
		d = tp_pb_close(am, d);
	}
	d = tp_pb_close(tm, d);
	d = tp_pf_put_interned(pf, d);
	d = tp_pb_close(pm, d);
	if (e->kind == TP_EV_SLICE) {
		d = tp_pf_packet_open(pf, d, &pm, e->end > e->ts ? e->end : e->ts);
		d = tp_pb_open(d, TP_PF_PKT_TRACK_EVENT, &tm);
		d = tp_pb_put_uint(d, TP_PF_TE_TRACK_UUID, track);
		d = tp_pb_put_uint(d, TP_PF_TE_TYPE, TP_PF_TYPE_SLICE_END);
		d = tp_pb_close(tm, d);
		d = tp_pb_close(pm, d);
	}
	tp_pb_commit(&pf->pb, d);
}

static void pw_process(struct tp_writer *w, int64_t pid, const char *name, const char *labels,
		       int64_t sort_index)
{
	struct tp_pf *pf = (struct tp_pf *)w;
	/* Described here, with its name: first use or again (same uuid). */
	uint64_t uuid = tp_pf_process_track(pf, pid, 0);
	if (uuid)
		tp_pf_put_process(pf, uuid, pid, name ? name : "", labels, 1, sort_index);
}

static void pw_thread(struct tp_writer *w, int64_t pid, int64_t tid, const char *name,
		      int64_t sort_index)
{
	struct tp_pf *pf = (struct tp_pf *)w;
	uint64_t uuid = tp_pf_thread_track(pf, pid, tid, 0);
	if (uuid)
		tp_pf_put_thread(pf, uuid, pid, tid, name ? name : "", 1, sort_index);
}

/* Frames are written as a document at close, as the JSON writer's
 * "stackFrames" object. */
static void pw_frame(struct tp_writer *w, uint32_t id, uint32_t parent, const char *name,
		     const char *category)
{
	struct tp_pf *pf = (struct tp_pf *)w;
	if (pf->nframes == pf->cap_frames) {
		size_t cap = pf->cap_frames ? pf->cap_frames * 2 : 256;
		struct tp_pf_frame *f = realloc(pf->frames, cap * sizeof(*f));
		if (!f)
			return; /* the events' "sf" then names no frame */
		pf->frames = f;
		pf->cap_frames = cap;
	}
	char *n = strdup(name ? name : ""), *c = strdup(category ? category : "");
	if (!n || !c) {
		free(n);
		free(c);
		return;
	}
	pf->frames[pf->nframes++] = (struct tp_pf_frame){ id, parent, n, c };
}

/* ---- documents ---- */

/* An instant named `name` on the header process's track at the latest time
 * seen, carrying doc. */
static void pw_doc_event(struct tp_pf *pf, const char *name, const struct tp_doc *doc)
{
	uint64_t track = tp_pf_process_track(pf, pf->pid, 1);
	if (!track || pf->pb.error)
		return;
	size_t need = tp_pf_doc_room(doc);
	if (need > TP_PB_NESTED_MAX - 4096)
		return; /* cannot be one packet: never near in practice */
	size_t nl = strlen(name);
	uint8_t *d = tp_pb_reserve(&pf->pb, need + TP_PF_PACKET_ROOM + 128 + nl), *pm, *tm;
	if (!d)
		return;
	d = tp_pf_packet_open(pf, d, &pm, pf->last_ts ? pf->last_ts : pf->inc_ts);
	d = tp_pb_open(d, TP_PF_PKT_TRACK_EVENT, &tm);
	d = tp_pb_put_uint(d, TP_PF_TE_TRACK_UUID, track);
	d = tp_pb_put_uint(d, TP_PF_TE_TYPE, TP_PF_TYPE_INSTANT);
	d = tp_pb_put_bytes(d, TP_PF_TE_NAME, name, nl);
	d = tp_pf_put_doc(d, doc, name);
	d = tp_pb_close(tm, d);
	tp_pb_commit(&pf->pb, tp_pb_close(pm, d));
	pf->w.events++;
}

static void pw_write_frames(struct tp_pf *pf)
{
	if (!pf->nframes)
		return;
	struct tp_doc doc;
	char id[16];
	tp_doc_init(&doc);
	for (size_t i = 0; i < pf->nframes; i++) {
		const struct tp_pf_frame *f = &pf->frames[i];
		snprintf(id, sizeof(id), "%u", f->id);
		tp_doc_object(&doc, id);
		tp_doc_str(&doc, "name", f->name);
		tp_doc_str(&doc, "category", f->category);
		if (f->parent)
			tp_doc_u64(&doc, "parent", f->parent);
		tp_doc_end(&doc);
	}
	if (!doc.error)
		pw_doc_event(pf, TP_DOC_STACK_FRAMES, &doc);
	tp_doc_free(&doc);
}

/* ---- the file ---- */

static void pw_free(struct tp_pf *pf)
{
	for (size_t i = 0; i < pf->nframes; i++) {
		free(pf->frames[i].name);
		free(pf->frames[i].category);
	}
	free(pf->frames);
	tp_pf_intern_free(pf);
	tp_pf_tracks_free(pf);
	tp_pb_free(&pf->pb);
	free(pf);
}

static struct tp_writer *pw_open(struct tp_sink *sink, const struct tp_writer_header *h)
{
	struct tp_pf *pf = calloc(1, sizeof(*pf));
	if (!pf)
		return NULL;
	pf->w.ops = &tp_perfetto_writer;
	if (tp_pb_init(&pf->pb, sink)) {
		free(pf);
		return NULL;
	}
	pf->pid = h->pid;
	tp_pf_first_packet(pf, h->wall_offset_ns);
	/* The header's facts the JSON writes at its top, and the devices when
	 * already known. */
	struct tp_doc doc;
	tp_doc_init(&doc);
	tp_doc_i64(&doc, TP_DOC_BASE_TIME, h->base_wall_ns);
	tp_doc_i64(&doc, TP_HEADER_WALL_OFFSET, h->wall_offset_ns);
	tp_doc_i64(&doc, TP_DI_RANK, h->rank);
	tp_doc_i64(&doc, TP_DI_LOCAL_RANK, h->local_rank);
	tp_doc_i64(&doc, TP_DI_WORLD_SIZE, h->world_size);
	tp_doc_i64(&doc, TP_DI_LOCAL_WORLD_SIZE, h->local_world_size);
	tp_doc_i64(&doc, TP_DI_NODE_RANK, h->node_rank);
	if (h->launcher)
		tp_doc_str(&doc, TP_HEADER_LAUNCHER, h->launcher);
	/* The window, as the JSON's DOC_WINDOW: what `traceprof recover`
	 * needs to finish the file of a process that died (its name, part,
	 * first step, host, pid and rotation), read from this first instant. */
	if (h->window_name) {
		tp_doc_object(&doc, TP_DOC_WINDOW);
		tp_doc_str(&doc, TP_WINDOW_NAME, h->window_name);
		tp_doc_i64(&doc, TP_WINDOW_PART, h->window_part);
		tp_doc_i64(&doc, TP_WINDOW_FIRST_STEP, h->window_first_step);
		tp_doc_str(&doc, TP_WINDOW_HOST, h->hostname ? h->hostname : "");
		tp_doc_i64(&doc, TP_WINDOW_PID, h->pid);
		tp_doc_i64(&doc, TP_WINDOW_KEEP, h->window_keep);
		tp_doc_end(&doc);
	}
	if (!doc.error)
		pw_doc_event(pf, TP_DOC_HEADER, &doc);
	tp_doc_free(&doc);
	if (h->devices && h->devices->n) {
		pw_doc_event(pf, TP_DOC_DEVICE_PROPERTIES, h->devices);
		pf->have_devices = 1;
	}
	if (pf->pb.error) {
		pw_free(pf);
		return NULL;
	}
	pf->w.events = 0;
	return &pf->w;
}

static int pw_close(struct tp_writer *w, const struct tp_writer_trailer *tr)
{
	struct tp_pf *pf = (struct tp_pf *)w;
	if (!pf->have_devices && tr->devices && tr->devices->n)
		pw_doc_event(pf, TP_DOC_DEVICE_PROPERTIES, tr->devices);
	pw_write_frames(pf);
	struct tp_doc name;
	tp_doc_init(&name);
	if (tr->trace_name) {
		tp_doc_str(&name, TP_DOC_TRACE_NAME, tr->trace_name);
		if (!name.error)
			pw_doc_event(pf, TP_DOC_TRACE_NAME, &name);
	}
	tp_doc_free(&name);
	/* Every packet before the footer in the sink, for the table's digest:
	 * the footer is the last packet. */
	tp_pb_flush(&pf->pb);
	struct tp_doc doc;
	tp_doc_init(&doc);
	const struct tp_doc *footer = tp_writer_footer(w, tr->footer, &doc);
	if (footer)
		pw_doc_event(pf, TP_DOC_FOOTER, footer);
	tp_doc_free(&doc);
	tp_pb_flush(&pf->pb);
	int rc = pf->pb.error;
	pw_free(pf);
	return rc;
}

static void pw_discard(struct tp_writer *w)
{
	pw_free((struct tp_pf *)w);
}

static int pw_flush(struct tp_writer *w)
{
	struct tp_pb *pb = &((struct tp_pf *)w)->pb;
	/* Between events, so between top-level packets: the buffer ends on
	 * a whole one. */
	int rc = tp_pb_flush(pb);
	return rc ? rc : pb->sink ? tp_sink_flush(pb->sink) : 0;
}

static uint64_t pw_bytes(const struct tp_writer *w)
{
	return tp_pb_bytes(&((const struct tp_pf *)w)->pb);
}

static int pw_error(const struct tp_writer *w)
{
	return ((const struct tp_pf *)w)->pb.error;
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
	.flush = pw_flush,
	.bytes = pw_bytes,
	.error = pw_error,
};
