/* The Perfetto writer's parts (format/perfetto_*.c), and the state they
 * share; no other file includes this.
 *
 *   perfetto_writer.c    the writer: tp_writer_ops, events, the file's life
 *                        cycle (open, documents, close)
 *   perfetto_packets.c   packets of the one sequence, and its clocks
 *   perfetto_intern.c    interning: strings as iids, InternedData
 *   perfetto_tracks.c    track descriptors and uuids: processes, threads,
 *                        counters
 *   perfetto_annos.c     debug annotations: an event's args, documents
 *
 * The field numbers and clock ids are common/layout.h's TP_PF_*, written
 * from scripts/layout.spec, which the readers in python/traceprof/traces/
 * use too. */
#ifndef TP_FORMAT_PERFETTO_INTERNAL_H
#define TP_FORMAT_PERFETTO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/hashmap.h"
#include "common/layout.h"
#include "format/pb.h"
#include "format/writer.h"

/* Strings are cut to these lengths, so that a nested message always fits
 * its 4-byte length (pb.h) and a worst case is cheap to compute. */
#define TP_PF_STR_MAX (64u * 1024)
#define TP_PF_ELEM_STR_MAX 4096u
#define TP_PF_ELEMS_MAX 4096u

/* Worst case of a packet's own fields besides its payload. */
#define TP_PF_PACKET_ROOM (TP_PB_TAG_MAX + 4 + 3 * (TP_PB_TAG_MAX + TP_PB_VARINT_MAX))

/* An interned string the packet being written introduces. */
struct tp_pf_new {
	uint64_t iid;
	const char *s;
	uint32_t len;
};

/* An interning table: the map of texts, and a cache by address in front of
 * it. */
#define TP_PF_PCACHE 64

struct tp_pf_pcache {
	const char *p;
	uint32_t len;
	uint64_t iid;
	const char *text; /* the map's copy */
};

struct tp_pf_strs {
	struct tp_smap map; /* text -> iid */
	uint64_t next;	    /* the last iid given */
	struct tp_pf_pcache cache[TP_PF_PCACHE];
};

struct tp_pf_frame {
	uint32_t id, parent;
	char *name, *category;
};

struct tp_pf {
	struct tp_writer w; /* first: the writer interface */
	struct tp_pb pb;
	int64_t pid;	  /* the header's: where the documents go */
	uint64_t inc_ts;  /* the incremental clock's value */
	uint64_t last_ts; /* the latest event time, for the documents */
	uint64_t next_uuid;
	struct tp_pf_strs names, cats, keys, vals;
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
	int have_devices;
	struct tp_pf_frame *frames;
	size_t nframes, cap_frames;
	/* This packet's new interned strings, by kind. */
	struct tp_pf_new new_names[1], new_cats[1], new_keys[TP_EV_MAX_ARGS + 1];
	struct tp_pf_new new_vals[TP_EV_MAX_ARGS];
	unsigned n_new_names, n_new_cats, n_new_keys, n_new_vals;
};

/* Records the first error (-errno); the writer then writes nothing more. */
static inline void tp_pf_fail(struct tp_pf *pf, int err)
{
	if (!pf->pb.error)
		pf->pb.error = err;
}

/* ---- perfetto_packets.c ---- */

/* Opens a packet of the sequence at time ts (0: no time, for descriptors). */
uint8_t *tp_pf_packet_open(struct tp_pf *pf, uint8_t *d, uint8_t **mark, uint64_t ts);
/* The sequence's first packet: state cleared, the clocks, the default
 * clock. */
void tp_pf_first_packet(struct tp_pf *pf, int64_t wall_offset_ns);

/* ---- perfetto_intern.c ---- */

/* The iid of s in t; a new one is also queued in q[*nq] (up to qmax) for
 * this packet's InternedData.  by_address: s is a literal, trusted by its
 * address.  0 when out of room or memory (the caller then writes the string
 * itself where the schema allows, or leaves the field out). */
uint64_t tp_pf_intern(struct tp_pf *pf, struct tp_pf_strs *t, const char *s, size_t len,
		      int by_address, struct tp_pf_new *q, unsigned *nq, unsigned qmax);
/* Worst case of the packet's InternedData. */
size_t tp_pf_interned_room(const struct tp_pf *pf);
/* The packet's InternedData (nothing when nothing is new); empties the
 * queues. */
uint8_t *tp_pf_put_interned(struct tp_pf *pf, uint8_t *d);
/* Forgets this packet's new strings (the packet is not written). */
void tp_pf_drop_new(struct tp_pf *pf);
void tp_pf_intern_free(struct tp_pf *pf);

/* ---- perfetto_tracks.c ---- */

/* The uuid of pid's process track, described (without a name) on first use
 * when describe says so; 0 when out of memory. */
uint64_t tp_pf_process_track(struct tp_pf *pf, int64_t pid, int describe);
/* The same for the thread (pid, tid) (its process's track described). */
uint64_t tp_pf_thread_track(struct tp_pf *pf, int64_t pid, int64_t tid, int describe);
/* A counter's track, a child of its process's. */
uint64_t tp_pf_counter_track(struct tp_pf *pf, int64_t pid, const char *name, size_t nlen,
			     const char *key, size_t klen);
/* Descriptors again, with a name (NULL: none) and a sort index. */
void tp_pf_put_process(struct tp_pf *pf, uint64_t uuid, int64_t pid, const char *name,
		       const char *labels, int have_sort, int64_t sort_index);
void tp_pf_put_thread(struct tp_pf *pf, uint64_t uuid, int64_t pid, int64_t tid,
		      const char *name, int have_sort, int64_t sort_index);
void tp_pf_tracks_free(struct tp_pf *pf);

/* ---- perfetto_annos.c ---- */

/* strlen(s) up to TP_PF_STR_MAX; 0 for NULL. */
size_t tp_pf_strlen(const char *s);
/* Worst case of one arg's annotation, besides its name. */
size_t tp_pf_arg_room(const struct tp_arg *a);
/* The value of an arg (the annotation's name already written). */
uint8_t *tp_pf_put_value(uint8_t *d, const struct tp_arg *a);
/* Worst case of a document's annotations. */
size_t tp_pf_doc_room(const struct tp_doc *doc);
/* The document's nodes as an event's annotations (a keyless node at the
 * top named `name`). */
uint8_t *tp_pf_put_doc(uint8_t *d, const struct tp_doc *doc, const char *name);

#endif
