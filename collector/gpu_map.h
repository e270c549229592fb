/* The GPU timeline's maps (collector/gpu_map.c): common/hashmap.h's struct
 * tp_map, uint64 key (0 is the empty slot, so callers use nonzero keys) ->
 * two uint64 values, with one size cap for every map of collector/gpu_*.c.
 * Flush thread only: no locks. */
#ifndef TP_COLLECTOR_GPU_MAP_H
#define TP_COLLECTOR_GPU_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/hashmap.h"

struct tp_gpu_map {
	struct tp_map m; /* zeroed: empty (the cap is set on each put) */
};

/* Frees the table; the map is empty and usable again. */
void tp_gpu_map_free(struct tp_gpu_map *m);

/* Sets k's values.  Returns 0, or -1 when the map is full or out of memory
 * (the entry is not kept). */
int tp_gpu_map_put(struct tp_gpu_map *m, uint64_t k, uint64_t v, uint64_t a);

/* k's first value, or NULL; *aux (when aux is not NULL) its second.  The
 * pointers are valid until the next put or filter. */
uint64_t *tp_gpu_map_get(struct tp_gpu_map *m, uint64_t k, uint64_t **aux);

/* Keeps only the entries keep() accepts; keep() sees each entry once (done
 * once per window, never per event). */
void tp_gpu_map_filter(struct tp_gpu_map *m,
		       int (*keep)(uint64_t k, uint64_t v, uint64_t a, void *ctx), void *ctx);

#endif
