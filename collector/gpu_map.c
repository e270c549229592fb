/* The GPU timeline's maps (collector/gpu_map.h), on common/hashmap.c. */
#include "collector/gpu_map.h"

/* Caps memory if a program launches millions of kernels while flows can
 * never be matched (e.g. a window that is never saved). */
#define GPU_MAP_MAX_CAP (1u << 23)

void tp_gpu_map_free(struct tp_gpu_map *m)
{
	tp_map_free(&m->m);
}

int tp_gpu_map_put(struct tp_gpu_map *m, uint64_t k, uint64_t v, uint64_t a)
{
	m->m.max_cap = GPU_MAP_MAX_CAP;
	return tp_map_put(&m->m, k, v, a) < 0 ? -1 : 0;
}

uint64_t *tp_gpu_map_get(struct tp_gpu_map *m, uint64_t k, uint64_t **aux)
{
	struct tp_map_slot *s = tp_map_get(&m->m, k);
	if (aux)
		*aux = s ? &s->aux : NULL;
	return s ? &s->val : NULL;
}

struct filter_ctx {
	int (*keep)(uint64_t k, uint64_t v, uint64_t a, void *ctx);
	void *ctx;
};

static int filter_keep(const struct tp_map_slot *s, void *ctx)
{
	const struct filter_ctx *f = ctx;
	return f->keep(s->key, s->val, s->aux, f->ctx);
}

void tp_gpu_map_filter(struct tp_gpu_map *m,
		       int (*keep)(uint64_t k, uint64_t v, uint64_t a, void *ctx), void *ctx)
{
	struct filter_ctx f = { keep, ctx };
	tp_map_filter(&m->m, filter_keep, &f);
}
