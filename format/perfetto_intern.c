/* The Perfetto writer's interning (format/perfetto_internal.h): names,
 * categories, argument names and long-lived string values (kernel names)
 * are written once each, as InternedData in the packet that first uses
 * them, and then as iids.  Each table is a common/hashmap.h byte-string map
 * (keys copied), hashed once per lookup with tp_hash_bytes(), with a cache
 * by address in front of it. */
#include <errno.h>
#include <string.h>

#include "format/perfetto_internal.h"

uint64_t tp_pf_intern(struct tp_pf *pf, struct tp_pf_strs *t, const char *s, size_t len,
		      int by_address, struct tp_pf_new *q, unsigned *nq, unsigned qmax)
{
	/* Most strings come back at the same address: a cache by address
	 * saves hashing them.  Literals (categories, keys) may be trusted by
	 * address; other text is compared with the map's copy, since a freed
	 * and reused buffer may hold another string. */
	struct tp_pf_pcache *c = &t->cache[(((uintptr_t)s >> 3) ^ len) & (TP_PF_PCACHE - 1)];
	if (c->p == s && c->len == len && (by_address || !memcmp(c->text, s, len)))
		return c->iid;
	uint64_t h = tp_hash_bytes(s, len);
	struct tp_smap_ent *x = tp_smap_find(&t->map, h, s, len);
	if (x) {
		*c = (struct tp_pf_pcache){ s, (uint32_t)len, x->val, x->key };
		return x->val;
	}
	if (*nq >= qmax)
		return 0;
	uint64_t iid = ++t->next;
	if (!tp_smap_add(&t->map, h, s, len, iid)) {
		--t->next;
		tp_pf_fail(pf, -ENOMEM);
		return 0;
	}
	q[(*nq)++] = (struct tp_pf_new){ iid, s, (uint32_t)len };
	return iid;
}

static size_t pfi_new_room(const struct tp_pf_new *q, unsigned n)
{
	size_t r = 0;
	for (unsigned i = 0; i < n; i++)
		r += 2 * TP_PB_TAG_MAX + 4 + 2 * TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(q[i].len);
	return r;
}

static uint8_t *pfi_put_new(uint8_t *d, uint32_t field, const struct tp_pf_new *q, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t *m;
		d = tp_pb_open(d, field, &m);
		d = tp_pb_put_uint(d, TP_PF_INTERNED_IID, q[i].iid);
		d = tp_pb_put_text(d, TP_PF_INTERNED_NAME, q[i].s, q[i].len);
		d = tp_pb_close(m, d);
	}
	return d;
}

static int pfi_any_new(const struct tp_pf *pf)
{
	return pf->n_new_names || pf->n_new_cats || pf->n_new_keys || pf->n_new_vals;
}

void tp_pf_drop_new(struct tp_pf *pf)
{
	pf->n_new_names = pf->n_new_cats = pf->n_new_keys = pf->n_new_vals = 0;
}

size_t tp_pf_interned_room(const struct tp_pf *pf)
{
	if (!pfi_any_new(pf))
		return 0;
	return TP_PB_TAG_MAX + 4 + pfi_new_room(pf->new_names, pf->n_new_names) +
	       pfi_new_room(pf->new_cats, pf->n_new_cats) +
	       pfi_new_room(pf->new_keys, pf->n_new_keys) +
	       pfi_new_room(pf->new_vals, pf->n_new_vals);
}

uint8_t *tp_pf_put_interned(struct tp_pf *pf, uint8_t *d)
{
	if (!pfi_any_new(pf))
		return d;
	uint8_t *m;
	d = tp_pb_open(d, TP_PF_PKT_INTERNED, &m);
	d = pfi_put_new(d, TP_PF_ID_CATEGORIES, pf->new_cats, pf->n_new_cats);
	d = pfi_put_new(d, TP_PF_ID_NAMES, pf->new_names, pf->n_new_names);
	d = pfi_put_new(d, TP_PF_ID_ANNOTATION_NAMES, pf->new_keys, pf->n_new_keys);
	/* InternedString's text is field 2 too (str). */
	d = pfi_put_new(d, TP_PF_ID_STRING_VALUES, pf->new_vals, pf->n_new_vals);
	tp_pf_drop_new(pf);
	return tp_pb_close(m, d);
}

void tp_pf_intern_free(struct tp_pf *pf)
{
	tp_smap_free(&pf->names.map);
	tp_smap_free(&pf->cats.map);
	tp_smap_free(&pf->keys.map);
	tp_smap_free(&pf->vals.map);
}
