/* The Perfetto writer's tracks (format/perfetto_internal.h): a process
 * track per pid, a thread track per (pid, tid), a counter track per (pid,
 * counter), each described (TrackDescriptor) before the first event on it
 * and again with its name when process()/thread() name it at the end (same
 * uuid).  uuids are counted from 1 in the order tracks are first used. */
#include <errno.h>
#include <string.h>

#include "format/perfetto_internal.h"

/* The track maps are common/hashmap.h's byte-string maps (keys copied),
 * hashed once per lookup with tp_hash_bytes(). */

/* The value of key, or NULL. */
static uint64_t *pft_map_get(const struct tp_smap *m, uint64_t h, const void *key, size_t len)
{
	struct tp_smap_ent *x = tp_smap_find(m, h, key, len);
	return x ? &x->val : NULL;
}

/* Adds key (not present) with val.  0 or -ENOMEM. */
static int pft_map_put(struct tp_smap *m, uint64_t h, const void *key, size_t len, uint64_t val)
{
	return tp_smap_add(m, h, key, len, val) ? 0 : -ENOMEM;
}

static int32_t pft_i32(int64_t v)
{
	return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* A track descriptor packet for uuid, with room for text bytes of names:
 * returns where its fields go (NULL when out of memory), *m and *t the
 * packet's and the descriptor's open lengths for pft_desc_close(). */
static uint8_t *pft_desc_open(struct tp_pf *pf, uint64_t uuid, size_t text, uint8_t **m,
			      uint8_t **t)
{
	uint8_t *d = tp_pb_reserve(&pf->pb, TP_PF_PACKET_ROOM + 128 + TP_PB_TEXT_ROOM(text));
	if (!d)
		return NULL;
	d = tp_pf_packet_open(pf, d, m, 0);
	d = tp_pb_open(d, TP_PF_PKT_TRACK_DESC, t);
	return tp_pb_put_uint(d, TP_PF_TD_UUID, uuid);
}

static void pft_desc_close(struct tp_pf *pf, uint8_t *m, uint8_t *t, uint8_t *d)
{
	d = tp_pb_close(t, d);
	tp_pb_commit(&pf->pb, tp_pb_close(m, d));
}

void tp_pf_put_process(struct tp_pf *pf, uint64_t uuid, int64_t pid, const char *name,
			   const char *labels, int have_sort, int64_t sort_index)
{
	size_t nl = tp_pf_strlen(name), ll = tp_pf_strlen(labels);
	uint8_t *m, *t, *p;
	uint8_t *d = pft_desc_open(pf, uuid, nl + ll, &m, &t);
	if (!d)
		return;
	d = tp_pb_open(d, TP_PF_TD_PROCESS, &p);
	d = tp_pb_put_int(d, TP_PF_PD_PID, pft_i32(pid));
	if (name)
		d = tp_pb_put_text(d, TP_PF_PD_NAME, name, nl);
	if (labels && ll)
		d = tp_pb_put_text(d, TP_PF_PD_LABELS, labels, ll);
	if (have_sort)
		d = tp_pb_put_int(d, TP_PF_PD_SORT, pft_i32(sort_index));
	pft_desc_close(pf, m, t, tp_pb_close(p, d));
}

void tp_pf_put_thread(struct tp_pf *pf, uint64_t uuid, int64_t pid, int64_t tid,
			  const char *name, int have_sort, int64_t sort_index)
{
	size_t nl = tp_pf_strlen(name);
	uint8_t *m, *t, *p;
	uint8_t *d = pft_desc_open(pf, uuid, nl, &m, &t);
	if (!d)
		return;
	d = tp_pb_open(d, TP_PF_TD_THREAD, &p);
	d = tp_pb_put_int(d, TP_PF_THD_PID, pft_i32(pid));
	d = tp_pb_put_int(d, TP_PF_THD_TID, tid);
	if (name)
		d = tp_pb_put_text(d, TP_PF_THD_NAME, name, nl);
	if (have_sort)
		d = tp_pb_put_int(d, TP_PF_THD_SORT, pft_i32(sort_index));
	pft_desc_close(pf, m, t, tp_pb_close(p, d));
}

static void pft_put_counter_track(struct tp_pf *pf, uint64_t uuid, uint64_t parent,
				  const char *name, size_t nl)
{
	uint8_t *m, *t, *c;
	uint8_t *d = pft_desc_open(pf, uuid, nl, &m, &t);
	if (!d)
		return;
	d = tp_pb_put_uint(d, TP_PF_TD_PARENT, parent);
	d = tp_pb_put_text(d, TP_PF_TD_NAME, name, nl);
	d = tp_pb_open(d, TP_PF_TD_COUNTER, &c);
	pft_desc_close(pf, m, t, tp_pb_close(c, d));
}

/* The uuid of pid's process track, described (without a name) on first use
 * when describe says so; 0 when out of memory. */
uint64_t tp_pf_process_track(struct tp_pf *pf, int64_t pid, int describe)
{
	uint64_t h = tp_hash_bytes(&pid, sizeof(pid));
	uint64_t *v = pft_map_get(&pf->procs, h, &pid, sizeof(pid));
	if (v)
		return *v;
	uint64_t uuid = ++pf->next_uuid;
	if (pft_map_put(&pf->procs, h, &pid, sizeof(pid), uuid)) {
		tp_pf_fail(pf, -ENOMEM);
		return 0;
	}
	if (describe)
		tp_pf_put_process(pf, uuid, pid, NULL, NULL, 0, 0);
	return uuid;
}

uint64_t tp_pf_thread_track(struct tp_pf *pf, int64_t pid, int64_t tid, int describe)
{
	if (pf->last_uuid && pid == pf->last_pid && tid == pf->last_tid)
		return pf->last_uuid;
	int64_t key[2] = { pid, tid };
	uint64_t h = tp_hash_bytes(key, sizeof(key));
	uint64_t *v = pft_map_get(&pf->tracks, h, key, sizeof(key));
	uint64_t uuid;
	if (v) {
		uuid = *v;
	} else {
		if (!tp_pf_process_track(pf, pid, 1))
			return 0;
		uuid = ++pf->next_uuid;
		if (pft_map_put(&pf->tracks, h, key, sizeof(key), uuid)) {
			tp_pf_fail(pf, -ENOMEM);
			return 0;
		}
		if (describe)
			tp_pf_put_thread(pf, uuid, pid, tid, NULL, 0, 0);
	}
	pf->last_pid = pid;
	pf->last_tid = tid;
	pf->last_uuid = uuid;
	return uuid;
}

/* A counter's track, a child of its process's: named as Perfetto names the
 * JSON's "C" events ("name key"), or just "name" for the usual key
 * "value". */
uint64_t tp_pf_counter_track(struct tp_pf *pf, int64_t pid, const char *name, size_t nlen,
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
	uint64_t *v = pft_map_get(&pf->tracks, h, buf, n);
	if (v)
		return *v;
	uint64_t parent = tp_pf_process_track(pf, pid, 1);
	if (!parent)
		return 0;
	uint64_t uuid = ++pf->next_uuid;
	if (pft_map_put(&pf->tracks, h, buf, n, uuid)) {
		tp_pf_fail(pf, -ENOMEM);
		return 0;
	}
	pft_put_counter_track(pf, uuid, parent, buf + 9, n - 9);
	return uuid;
}

void tp_pf_tracks_free(struct tp_pf *pf)
{
	tp_smap_free(&pf->tracks);
	tp_smap_free(&pf->procs);
}
