/* The GPU timeline's one hash map (collector/gpu_map.c): uint64 key (0 is
 * the empty slot, so callers use nonzero keys) -> two uint64 values.
 *
 * Every map of collector/gpu_*.c goes through these four calls, so that the
 * switch to the shared common/hashmap happens here and nowhere else.  Flush
 * thread only: no locks. */
#ifndef TP_COLLECTOR_GPU_MAP_H
#define TP_COLLECTOR_GPU_MAP_H

#include <stddef.h>
#include <stdint.h>

struct tp_gpu_map {
	uint64_t *keys;
	uint64_t *val, *aux;
	size_t cap, n;
};

/* Frees the table; the map is empty and usable again. */
void tp_gpu_map_free(struct tp_gpu_map *m);

/* Sets k's values.  Returns 0, or -1 when the map is full or out of memory
 * (the entry is not kept). */
int tp_gpu_map_put(struct tp_gpu_map *m, uint64_t k, uint64_t v, uint64_t a);

/* k's first value, or NULL; *aux (when aux is not NULL) its second.  The
 * pointers are valid until the next put or filter. */
uint64_t *tp_gpu_map_get(struct tp_gpu_map *m, uint64_t k, uint64_t **aux);

/* Keeps only the entries keep() accepts (deletion without tombstones; done
 * once per window, never per event).  keep() sees each entry once, and an
 * entry it keeps once more. */
void tp_gpu_map_filter(struct tp_gpu_map *m,
		       int (*keep)(uint64_t k, uint64_t v, uint64_t a, void *ctx), void *ctx);

#endif
