/* Open-addressing hash maps; see common/hashmap.h. */
#include "common/hashmap.h"

#include <errno.h>
#include <stdlib.h>

#define HM_MIN_CAP 64

/* ---- 64-bit keys ---------------------------------------------------------- */

/* Moves every entry into a new table of cap slots (a power of two, more
 * than twice the entries). */
static int hm_resize(struct tp_map *m, size_t cap)
{
	struct tp_map_slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return -ENOMEM;
	size_t mask = cap - 1;
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t k = m->slots[i].key;
		if (!k)
			continue;
		size_t j = tp_hash_u64(k) & mask;
		while (s[j].key)
			j = (j + 1) & mask;
		s[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = s;
	m->cap = cap;
	return 0;
}

static int hm_grow(struct tp_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : HM_MIN_CAP;
	if (m->max_cap && cap > m->max_cap)
		return -ENOSPC;
	return hm_resize(m, cap);
}

/* The slot of key, or the empty slot where it belongs (m->cap > 0). */
static struct tp_map_slot *hm_slot(const struct tp_map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = tp_hash_u64(key) & mask;
	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & mask;
	return &m->slots[i];
}

static int hm_upsert(struct tp_map *m, uint64_t key, struct tp_map_slot **out)
{
	if (!key)
		return -EINVAL;
	if (m->cap) {
		struct tp_map_slot *s = hm_slot(m, key);
		if (s->key) {
			*out = s;
			return 0;
		}
	}
	/* Grow at half full: probes stay short, and a free slot always ends a
	 * probe. */
	if ((m->n + 1) * 2 > m->cap) {
		int rc = hm_grow(m);
		if (rc)
			return rc;
	}
	struct tp_map_slot *s = hm_slot(m, key);
	*s = (struct tp_map_slot){ key, 0, 0 };
	m->n++;
	*out = s;
	return 1;
}

struct tp_map_slot *tp_map_upsert(struct tp_map *m, uint64_t key, int *created)
{
	struct tp_map_slot *s;
	int rc = hm_upsert(m, key, &s);
	if (created)
		*created = rc == 1;
	return rc < 0 ? NULL : s;
}

int tp_map_put(struct tp_map *m, uint64_t key, uint64_t val, uint64_t aux)
{
	struct tp_map_slot *s;
	int rc = hm_upsert(m, key, &s);
	if (rc < 0)
		return rc;
	s->val = val;
	s->aux = aux;
	return 0;
}

/* Empties slot i, moving back the entries after it in its cluster that may
 * live there, so that every probe chain stays unbroken: an entry at j moves
 * into the hole unless its home lies cyclically in (hole, j]. */
static void hm_remove_at(struct tp_map *m, size_t i)
{
	size_t mask = m->cap - 1;
	for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		size_t home = tp_hash_u64(m->slots[j].key) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i] = (struct tp_map_slot){ 0, 0, 0 };
	m->n--;
}

int tp_map_del(struct tp_map *m, uint64_t key, struct tp_map_slot *old)
{
	if (!m->cap || !key)
		return 0;
	struct tp_map_slot *s = hm_slot(m, key);
	if (!s->key)
		return 0;
	if (old)
		*old = *s;
	hm_remove_at(m, (size_t)(s - m->slots));
	return 1;
}

const struct tp_map_slot *tp_map_next(const struct tp_map *m, const struct tp_map_slot *prev)
{
	for (size_t i = prev ? (size_t)(prev - m->slots) + 1 : 0; i < m->cap; i++)
		if (m->slots[i].key)
			return &m->slots[i];
	return NULL;
}

void tp_map_filter(struct tp_map *m, int (*keep)(const struct tp_map_slot *s, void *ctx),
		   void *ctx)
{
	if (!m->n)
		return;
	size_t mask = m->cap - 1;
	/* Walk from just after an empty slot (one exists: the map is at most
	 * half full), once around.  No cluster then spans the walk's end, so a
	 * backward shift only ever moves an entry not yet visited into the
	 * slot being looked at, which is looked at again: each entry is seen
	 * exactly once. */
	size_t start = 0;
	while (m->slots[start].key)
		start++;
	size_t i = (start + 1) & mask;
	for (size_t steps = 0; steps < m->cap;) {
		struct tp_map_slot *s = &m->slots[i];
		if (s->key && !keep(s, ctx)) {
			hm_remove_at(m, i);
			continue;
		}
		i = (i + 1) & mask;
		steps++;
	}
	size_t cap = m->cap;
	while (cap > HM_MIN_CAP && m->n * 8 <= cap)
		cap /= 2;
	if (cap < m->cap)
		(void)hm_resize(m, cap); /* on failure the larger table stays */
}

void tp_map_free(struct tp_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}

/* ---- byte-string keys ----------------------------------------------------- */

/* The entry of key, or the empty slot where it belongs (m->cap > 0). */
static struct tp_smap_ent *hm_sslot(const struct tp_smap *m, uint64_t h, const void *key,
				    size_t len)
{
	uint32_t mask = m->cap - 1;
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		struct tp_smap_ent *x = &m->e[i];
		if (!x->h || (x->h == h && x->len == len && !memcmp(x->key, key, len)))
			return x;
	}
}

struct tp_smap_ent *tp_smap_find(const struct tp_smap *m, uint64_t h, const void *key,
				 size_t len)
{
	if (!m->cap)
		return NULL;
	struct tp_smap_ent *x = hm_sslot(m, h, key, len);
	return x->h ? x : NULL;
}

static int hm_sgrow(struct tp_smap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : HM_MIN_CAP;
	if (cap < m->cap)
		return -ENOMEM;
	struct tp_smap_ent *e = calloc(cap, sizeof(*e));
	if (!e)
		return -ENOMEM;
	struct tp_smap g = { e, cap, m->n };
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->e[i].h)
			*hm_sslot(&g, m->e[i].h, m->e[i].key, m->e[i].len) = m->e[i];
	free(m->e);
	*m = g;
	return 0;
}

struct tp_smap_ent *tp_smap_add(struct tp_smap *m, uint64_t h, const void *key, size_t len,
				uint64_t val)
{
	if (len > UINT32_MAX - 1)
		return NULL;
	if ((m->n + 1) * 2 > m->cap && hm_sgrow(m))
		return NULL;
	char *k = malloc(len ? len : 1);
	if (!k)
		return NULL;
	memcpy(k, key, len);
	/* 0 marks an empty slot; tp_hash_bytes() never returns it, and a
	 * caller's other hash is mapped off it here. */
	h = h ? h : 1;
	struct tp_smap_ent *x = hm_sslot(m, h, key, len);
	*x = (struct tp_smap_ent){ h, k, (uint32_t)len, val };
	m->n++;
	return x;
}

void tp_smap_free(struct tp_smap *m)
{
	for (uint32_t i = 0; i < m->cap; i++)
		free(m->e[i].key);
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}
