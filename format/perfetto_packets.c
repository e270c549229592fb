/* The Perfetto writer's packets (format/perfetto_internal.h): the file is
 * one packet sequence (TP_PF_SEQ_ID) whose first packet clears its
 * incremental state and ties its clocks together:
 *   - CLOCK_MONOTONIC, the events' clock, to BOOTTIME, and to REALTIME as
 *     the header's wall_offset_ns says (so that the UI's wall-clock times
 *     are the JSON's);
 *   - to TP_PF_CLOCK_SEQ_INCREMENTAL, an incremental clock of this sequence
 *     that TracePacketDefaults makes the default: a packet's timestamp is
 *     then the nanoseconds since the previous one's, two or three bytes
 *     instead of eight.  A packet earlier than its predecessor (sources
 *     interleave) says its absolute MONOTONIC time instead. */
#include <string.h>
#include <time.h>

#include "format/perfetto_internal.h"
#include "format/writer.h"

uint8_t *tp_pf_packet_open(struct tp_pf *pf, uint8_t *d, uint8_t **mark, uint64_t ts)
{
	d = tp_pb_open(d, TP_PF_TRACE_PACKET, mark);
	if (ts) {
		if (ts >= pf->inc_ts) {
			d = tp_pb_put_uint(d, TP_PF_PKT_TIMESTAMP, ts - pf->inc_ts);
			pf->inc_ts = ts;
		} else {
			d = tp_pb_put_uint(d, TP_PF_PKT_TIMESTAMP, ts);
			d = tp_pb_put_uint(d, TP_PF_PKT_CLOCK_ID, TP_PF_CLOCK_MONOTONIC);
		}
		if (ts > pf->last_ts)
			pf->last_ts = ts;
	}
	return tp_pb_put_uint(d, TP_PF_PKT_SEQ_ID, TP_PF_SEQ_ID);
}

static uint8_t *pfp_clock(uint8_t *d, uint32_t id, uint64_t ts, int incremental)
{
	uint8_t *m;
	d = tp_pb_open(d, TP_PF_SNAP_CLOCKS, &m);
	d = tp_pb_put_uint(d, TP_PF_CLOCK_ID, id);
	d = tp_pb_put_uint(d, TP_PF_CLOCK_TS, ts);
	if (incremental)
		d = tp_pb_put_uint(d, TP_PF_CLOCK_INCREMENTAL, 1);
	return tp_pb_close(m, d);
}

static uint64_t pfp_clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tp_pf_first_packet(struct tp_pf *pf, int64_t wall_offset_ns)
{
	uint64_t mono = pfp_clock_ns(CLOCK_MONOTONIC);
	uint64_t boot = pfp_clock_ns(CLOCK_BOOTTIME);
	uint8_t *d = tp_pb_reserve(&pf->pb, 256), *m, *s;
	if (!d)
		return;
	d = tp_pb_open(d, TP_PF_TRACE_PACKET, &m);
	d = tp_pb_put_uint(d, TP_PF_PKT_SEQ_ID, TP_PF_SEQ_ID);
	d = tp_pb_put_uint(d, TP_PF_PKT_SEQ_FLAGS, TP_PF_SEQ_INCREMENTAL_STATE_CLEARED);
	d = tp_pb_open(d, TP_PF_PKT_DEFAULTS, &s);
	d = tp_pb_put_uint(d, TP_PF_DEFAULTS_CLOCK_ID, TP_PF_CLOCK_SEQ_INCREMENTAL);
	d = tp_pb_close(s, d);
	d = tp_pb_open(d, TP_PF_PKT_CLOCK_SNAPSHOT, &s);
	d = pfp_clock(d, TP_PF_CLOCK_MONOTONIC, mono, 0);
	d = pfp_clock(d, TP_PF_CLOCK_BOOTTIME, boot, 0);
	d = pfp_clock(d, TP_PF_CLOCK_REALTIME, (uint64_t)((int64_t)mono + wall_offset_ns), 0);
	d = pfp_clock(d, TP_PF_CLOCK_SEQ_INCREMENTAL, mono, 1);
	d = tp_pb_close(s, d);
	d = tp_pb_close(m, d);
	tp_pb_commit(&pf->pb, d);
	pf->inc_ts = mono;
}

size_t tp_perfetto_doc_packet(uint8_t *buf, size_t cap, uint64_t seq, uint64_t track,
			      const char *name, const struct tp_doc *doc)
{
	size_t nl = strlen(name);
	size_t need = tp_pf_doc_room(doc);
	if (need > TP_PB_NESTED_MAX - 4096 || need + TP_PF_PACKET_ROOM + 128 + nl > cap)
		return 0;
	uint8_t *d = buf, *pm, *tm;
	d = tp_pb_open(d, TP_PF_TRACE_PACKET, &pm);
	/* The previous packet's time: 0 on the sequence's incremental clock. */
	d = tp_pb_put_uint(d, TP_PF_PKT_TIMESTAMP, 0);
	d = tp_pb_put_uint(d, TP_PF_PKT_SEQ_ID, seq);
	d = tp_pb_open(d, TP_PF_PKT_TRACK_EVENT, &tm);
	d = tp_pb_put_uint(d, TP_PF_TE_TRACK_UUID, track);
	d = tp_pb_put_uint(d, TP_PF_TE_TYPE, TP_PF_TYPE_INSTANT);
	d = tp_pb_put_bytes(d, TP_PF_TE_NAME, name, nl);
	d = tp_pf_put_doc(d, doc, name);
	d = tp_pb_close(tm, d);
	d = tp_pb_close(pm, d);
	return (size_t)(d - buf);
}
