/* An open-addressing map for the GPU timeline (collector/gpu_map.h). */
#include "collector/gpu_map.h"

#include <stdlib.h>
#include <string.h>

/* Caps memory if a program launches millions of kernels while flows can
 * never be matched (e.g. a window that is never saved). */
#define MAP_MAX_CAP (1u << 23)

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

void tp_gpu_map_free(struct tp_gpu_map *m)
{
	free(m->keys);
	free(m->val);
	free(m->aux);
	memset(m, 0, sizeof(*m));
}

static int map_grow(struct tp_gpu_map *m, size_t cap)
{
	struct tp_gpu_map g = { 0 };
	g.keys = calloc(cap, sizeof(uint64_t));
	g.val = malloc(cap * sizeof(uint64_t));
	g.aux = malloc(cap * sizeof(uint64_t));
	if (!g.keys || !g.val || !g.aux) {
		tp_gpu_map_free(&g);
		return -1;
	}
	g.cap = cap;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			tp_gpu_map_put(&g, m->keys[i], m->val[i], m->aux[i]);
	tp_gpu_map_free(m);
	*m = g;
	return 0;
}

int tp_gpu_map_put(struct tp_gpu_map *m, uint64_t k, uint64_t v, uint64_t a)
{
	if ((m->n + 1) * 2 > m->cap) {
		if (m->cap >= MAP_MAX_CAP || map_grow(m, m->cap ? m->cap * 2 : 1024) < 0)
			return -1;
	}
	size_t mask = m->cap - 1;
	for (size_t i = hash64(k) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == k || !m->keys[i]) {
			if (!m->keys[i])
				m->n++;
			m->keys[i] = k;
			m->val[i] = v;
			m->aux[i] = a;
			return 0;
		}
	}
}

uint64_t *tp_gpu_map_get(struct tp_gpu_map *m, uint64_t k, uint64_t **aux)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = hash64(k) & mask; m->keys[i]; i = (i + 1) & mask)
		if (m->keys[i] == k) {
			if (aux)
				*aux = &m->aux[i];
			return &m->val[i];
		}
	return NULL;
}

void tp_gpu_map_filter(struct tp_gpu_map *m,
		       int (*keep)(uint64_t k, uint64_t v, uint64_t a, void *ctx), void *ctx)
{
	struct tp_gpu_map old = *m;
	memset(m, 0, sizeof(*m));
	size_t live = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i] && keep(old.keys[i], old.val[i], old.aux[i], ctx))
			live++;
	size_t cap = 1024;
	while (cap < live * 2 + 2)
		cap *= 2;
	if (live && map_grow(m, cap) == 0)
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i] && keep(old.keys[i], old.val[i], old.aux[i], ctx))
				tp_gpu_map_put(m, old.keys[i], old.val[i], old.aux[i]);
	tp_gpu_map_free(&old);
}
