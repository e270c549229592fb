/* The one open-addressing hash map: linear probing over a power-of-two
 * array, grown (doubled) at half full so that probes stay short, deletion
 * by backward shift (no tombstones: a probe chain never passes a deleted
 * slot).  Indexed with common/hash.h.
 *
 *   struct tp_map: 64-bit key -> two 64-bit words, val and aux (an index,
 *   a size, a pointer; aux is for a second word many tables need, such as
 *   the time an entry was noted, so that it can expire).  Key 0 marks an
 *   empty slot and cannot be stored (callers' keys are pointers,
 *   correlation numbers and other non-zero values).
 *
 *   struct tp_smap: byte-string key (copied at insertion) -> 64-bit value,
 *   for interning; the caller passes the key's tp_hash_bytes() so that it
 *   hashes once for a lookup and the insertion after it.  No deletion.
 *
 * Not thread-safe: one thread owns a map (all of traceprof's maps belong to
 * the flush thread or to a writer).  A table that other threads read
 * without a lock keeps its own layout (see collector/cuda_kernels.c's note)
 * but still hashes with common/hash.h.
 *
 * Zero-initialised structs are empty maps; tp_*_free() returns them to
 * that state. */
#ifndef TP_COMMON_HASHMAP_H
#define TP_COMMON_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/hash.h"

struct tp_map_slot {
	uint64_t key; /* 0: empty */
	uint64_t val;
	uint64_t aux;
};

struct tp_map {
	struct tp_map_slot *slots;
	size_t cap;	/* a power of two, or 0 */
	size_t n;	/* keys stored */
	size_t max_cap; /* 0: no limit; else puts fail with -ENOSPC past it */
};

/* The slot of key (its val and aux may be changed, never its key), or
 * NULL.  The pointer is valid until the next put, delete or filter (each
 * may move slots). */
static inline struct tp_map_slot *tp_map_get(const struct tp_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = tp_hash_u64(key) & mask; m->slots[i].key; i = (i + 1) & mask)
		if (m->slots[i].key == key)
			return &m->slots[i];
	return NULL;
}

/* The slot of key, inserted with val and aux 0 if absent (*created says
 * which; created may be NULL).  NULL when key is 0, out of memory, or the
 * map is at max_cap (nothing changed then). */
struct tp_map_slot *tp_map_upsert(struct tp_map *m, uint64_t key, int *created);

/* Sets key to (val, aux).  Returns 0, -EINVAL (key 0), -ENOMEM or -ENOSPC
 * (at max_cap). */
int tp_map_put(struct tp_map *m, uint64_t key, uint64_t val, uint64_t aux);

/* Removes key; its slot is copied to *old when old is not NULL.  Returns 1
 * when it was there, else 0. */
int tp_map_del(struct tp_map *m, uint64_t key, struct tp_map_slot *old);

/* Iteration: `for (const struct tp_map_slot *s = NULL; (s = tp_map_next(m,
 * s));)` visits every key once, in no particular order.  The map must not
 * change during it (tp_map_filter() deletes while it walks). */
const struct tp_map_slot *tp_map_next(const struct tp_map *m, const struct tp_map_slot *prev);

/* Keeps the entries keep() returns non-zero for and deletes the others,
 * calling keep() exactly once per entry (it may free what a value points
 * to).  Then, when at most an eighth of the slots are used, moves what is
 * left into a smaller table (a window's tables shrink back after a burst);
 * if that allocation fails the larger table stays.  Cannot fail. */
void tp_map_filter(struct tp_map *m, int (*keep)(const struct tp_map_slot *s, void *ctx),
		   void *ctx);

/* Frees the slots: an empty map (max_cap is kept). */
void tp_map_free(struct tp_map *m);

/* ---- byte-string keys ---- */

struct tp_smap_ent {
	uint64_t h; /* the key's tp_hash_bytes(); 0: empty */
	char *key;  /* the map's copy (not NUL-terminated); stable until freed */
	uint32_t len;
	uint64_t val;
};

struct tp_smap {
	struct tp_smap_ent *e;
	uint32_t cap, n;
};

/* The entry of key (len bytes, hash h = tp_hash_bytes(key, len)), or NULL. */
struct tp_smap_ent *tp_smap_find(const struct tp_smap *m, uint64_t h, const void *key,
				 size_t len);

/* Adds key, which must not be present, with val.  Returns the new entry, or
 * NULL when out of memory (nothing changed then) or len is 4 GiB or more. */
struct tp_smap_ent *tp_smap_add(struct tp_smap *m, uint64_t h, const void *key, size_t len,
				uint64_t val);

/* Frees the entries and their keys: an empty map. */
void tp_smap_free(struct tp_smap *m);

#endif
