/* Kernel names for the GPU timeline: CUPTI's mangled name, shown as
 * collector/kernel_names.c interns it for the process (demangled once, the
 * same text the API events' registry shows), found again by the address of
 * CUPTI's string (tp_gpu_intern_kernel_name(), collector/gpu.h). */
#include <stdlib.h>
#include <string.h>

#include "collector/gpu_internal.h"
#include "collector/gpu_map.h"
#include "collector/kernel_names.h"

struct kname {
	char *mangled;	   /* our copy of CUPTI's text, to tell a reused address */
	const char *shown; /* kernel_names.c's: never freed */
};

/* CUPTI name pointer -> struct kname *. */
static struct tp_gpu_map names;

/* Frees one name; keeps no entry, so the filter empties the map. */
static int free_name(uint64_t key, uint64_t val, uint64_t aux, void *ctx)
{
	(void)key;
	(void)aux;
	(void)ctx;
	struct kname *k = (struct kname *)(uintptr_t)val;
	free(k->mangled);
	free(k);
	return 0;
}

void tp_gpu_names_reset(void)
{
	tp_gpu_map_filter(&names, free_name, NULL);
	tp_gpu_map_free(&names);
}

const char *tp_gpu_intern_kernel_name(const char *mangled)
{
	if (!mangled)
		return "kernel";
	uint64_t key = (uint64_t)(uintptr_t)mangled;
	uint64_t *v = tp_gpu_map_get(&names, key, NULL);
	if (v) {
		struct kname *k = (struct kname *)(uintptr_t)*v;
		/* CUPTI keeps one name string per kernel; a module unload may reuse
		 * the address for another one. */
		if (!strcmp(k->mangled, mangled))
			return k->shown;
	}
	struct kname *k = calloc(1, sizeof(*k));
	if (!k || !(k->mangled = strdup(mangled))) {
		free(k);
		return "kernel";
	}
	k->shown = tp_kernel_name_shown(mangled, NULL);
	if (!k->shown)
		k->shown = k->mangled; /* out of memory: the mangled text, ours */
	if (v) {
		/* Replace the stale entry; the old strings stay (rare, tiny). */
		*v = (uint64_t)(uintptr_t)k;
	} else if (tp_gpu_map_put(&names, key, (uint64_t)(uintptr_t)k, 0) < 0) {
		/* Too many distinct kernels to remember: keep it unindexed. */
	}
	return k->shown;
}
