/* Kernel names.  A <<<...>>> launch passes a host stub address (or, with
 * CUDA 13's __cudaLaunchKernel, a cudaKernel_t obtained from
 * __cudaGetKernel(&k, stub)), never a name.  __cudaRegisterFunction(handle,
 * hostFun, deviceFun, deviceName, ...) runs once per kernel at start-up and
 * maps each stub to its mangled device name, so names never depend on symbol
 * tables.  The driver path (cuLaunchKernel with a CUfunction) asks
 * cuFuncGetName, from the flush thread only, through the capture side's
 * hook (tp_cuda_kernels_set_driver_namer(): the call to the real driver
 * belongs to preload/, which resolves CUDA's functions).  The names shown
 * are collector/kernel_names.c's: demangled and kept once per kernel, the
 * same text as the GPU events' (collector/gpu_names.c).
 *
 * Writers (registration, rare) append under a mutex to chunks that are never
 * freed or moved, and publish the new count with a release store; the flush
 * thread reads entries below the count it acquired and indexes them in a
 * map of its own, so lookups take no lock. */
#include "collector/cuda_kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collector/kernel_names.h"
#include "common/hashmap.h"

#define CHUNK_SHIFT 12
#define CHUNK (1u << CHUNK_SHIFT)
#define MAX_CHUNKS 256 /* a million kernels */

struct entry {
	const void *key;   /* host stub, or kernel handle for an alias */
	const void *host;  /* for an alias: the stub it stands for; else NULL */
	char *name;	   /* the mangled device name (copied), or NULL */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *chunks[MAX_CHUNKS];
/* Entries published so far; release-stored by writers, acquire-loaded by
 * the flush thread (paired). */
static _Atomic uint32_t published;
static _Atomic uint64_t reg_dropped;

static void append(const void *key, const void *host, const char *name)
{
	pthread_mutex_lock(&reg_lock);
	uint32_t n = atomic_load_explicit(&published, memory_order_relaxed);
	uint32_t c = n >> CHUNK_SHIFT;
	if (c >= MAX_CHUNKS || (!chunks[c] && !(chunks[c] = calloc(CHUNK, sizeof(struct entry))))) {
		atomic_fetch_add_explicit(&reg_dropped, 1, memory_order_relaxed);
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	struct entry *e = &chunks[c][n & (CHUNK - 1)];
	e->key = key;
	e->host = host;
	e->name = name ? strdup(name) : NULL;
	atomic_store_explicit(&published, n + 1, memory_order_release);
	pthread_mutex_unlock(&reg_lock);
}

/* Registration is not the recording path: it runs once per kernel when a
 * module loads, so copying the name here is fine (the fat binary that holds
 * it can be unloaded before the flush thread writes the name). */
void tp_cuda_kernels_register(const void *host_fun, const char *device_name)
{
	if (host_fun && device_name)
		append(host_fun, NULL, device_name);
}

void tp_cuda_kernels_alias(const void *kernel, const void *host_fun)
{
	if (kernel && host_fun && kernel != host_fun)
		append(kernel, host_fun, NULL);
}

/* ---- flush thread side -------------------------------------------------- */

/* Only the flush thread reads the registry, so its index is an ordinary
 * map (common/hashmap.h), not a table for lock-free readers: key (stub or
 * kernel handle) -> entry index + 1. */
struct shown {
	const char *name; /* kernel_names.c's, or NULL: the mangled one */
	int tried;
	uint32_t len;	  /* bytes of the name shown, once tried */
};

static struct {
	struct tp_map index;
	uint32_t indexed;
	/* Per entry: its name as shown, made on first use. */
	struct shown *shown;
	uint32_t shown_cap;
	/* Names the driver gave for CUfunctions (cuFuncGetName): handle ->
	 * name (kernel_names.c's, or 0 when the driver had none). */
	struct tp_map drv;
} F;

static struct entry *entry_at(uint32_t i)
{
	return &chunks[i >> CHUNK_SHIFT][i & (CHUNK - 1)];
}

static void index_entry(uint32_t idx)
{
	int created;
	struct tp_map_slot *s =
		tp_map_upsert(&F.index, (uint64_t)(uintptr_t)entry_at(idx)->key, &created);
	if (!s)
		return;
	/* A later registration of the same stub (a module loaded again) wins;
	 * the name shown for the earlier one is not needed any more. */
	if (!created && s->val - 1 < F.shown_cap)
		F.shown[s->val - 1] = (struct shown){ NULL, 0, 0 };
	s->val = (uint64_t)idx + 1;
}

/* The entry index of key, or -1. */
static int64_t lookup(const void *key)
{
	uint32_t n = atomic_load_explicit(&published, memory_order_acquire);
	for (; F.indexed < n; F.indexed++)
		index_entry(F.indexed);
	const struct tp_map_slot *s = tp_map_get(&F.index, (uint64_t)(uintptr_t)key);
	return s ? (int64_t)(s->val - 1) : -1;
}

static struct shown *shown_at(uint32_t idx)
{
	if (idx >= F.shown_cap) {
		uint32_t cap = F.shown_cap ? F.shown_cap : 1024;
		while (cap <= idx)
			cap *= 2;
		struct shown *p = realloc(F.shown, cap * sizeof(*p));
		if (!p)
			return NULL;
		memset(p + F.shown_cap, 0, (cap - F.shown_cap) * sizeof(*p));
		F.shown = p;
		F.shown_cap = cap;
	}
	return &F.shown[idx];
}

const char *tp_cuda_kernels_name(const void *key)
{
	return tp_cuda_kernels_name_len(key, NULL);
}

const char *tp_cuda_kernels_name_len(const void *key, uint32_t *len)
{
	int64_t i = lookup(key);
	if (i >= 0 && entry_at((uint32_t)i)->host)
		i = lookup(entry_at((uint32_t)i)->host); /* alias: kernel handle -> stub */
	if (i < 0)
		return NULL;
	struct entry *e = entry_at((uint32_t)i);
	if (!e->name)
		return NULL;
	struct shown *s = shown_at((uint32_t)i);
	if (!s) {
		if (len)
			*len = (uint32_t)strlen(e->name);
		return e->name;
	}
	if (!s->tried) {
		s->tried = 1;
		s->name = tp_kernel_name_shown(e->name, &s->len);
		if (!s->name)
			s->len = (uint32_t)strlen(e->name);
	}
	if (len)
		*len = s->len;
	return s->name ? s->name : e->name;
}

/* The capture side's driver lookup (preload/cuda_namer.c).  Relaxed: a
 * function pointer set once at start, to a function that lives as long as
 * the library; NULL (the unit tests, or not set yet): no driver names. */
static const char *(*_Atomic driver_namer)(const void *f);

void tp_cuda_kernels_set_driver_namer(const char *(*fn)(const void *f))
{
	atomic_store_explicit(&driver_namer, fn, memory_order_relaxed);
}

/* The driver's name for a CUfunction or CUkernel, as shown, asked once per
 * handle: the answers are cached (handle -> kernel_names.c's name, or 0 when
 * the driver had none). */
static const char *driver_name(const void *f)
{
	const struct tp_map_slot *s = tp_map_get(&F.drv, (uint64_t)(uintptr_t)f);
	if (s)
		return (const char *)(uintptr_t)s->val;
	const char *(*namer)(const void *) =
		atomic_load_explicit(&driver_namer, memory_order_relaxed);
	if (!namer)
		return NULL;
	const char *name = namer(f);
	if (name == TP_CUDA_KERNELS_ASK_LATER)
		return NULL; /* not now (a stream capture is open): asked at the next launch */
	const char *shown = name ? tp_kernel_name_shown(name, NULL) : NULL;
	if ((name && !shown) ||
	    tp_map_put(&F.drv, (uint64_t)(uintptr_t)f, (uint64_t)(uintptr_t)shown, 0) < 0)
		return name; /* out of memory: the driver's text, asked again next time */
	return shown;
}

const char *tp_cuda_kernels_driver_name_len(const void *f, uint32_t *len)
{
	const char *n = tp_cuda_kernels_name_len(f, len);
	if (n || !f)
		return n;
	n = driver_name(f);
	if (n && len)
		*len = (uint32_t)strlen(n);
	return n;
}

uint64_t tp_cuda_kernels_dropped(void)
{
	return atomic_load_explicit(&reg_dropped, memory_order_relaxed);
}
