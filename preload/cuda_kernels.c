/* Kernel names.  A <<<...>>> launch passes a host stub address (or, with
 * CUDA 13's __cudaLaunchKernel, a cudaKernel_t obtained from
 * __cudaGetKernel(&k, stub)), never a name.  __cudaRegisterFunction(handle,
 * hostFun, deviceFun, deviceName, ...) runs once per kernel at start-up and
 * maps each stub to its mangled device name, so names never depend on symbol
 * tables.  The driver path (cuLaunchKernel with a CUfunction) asks
 * cuFuncGetName, from the flush thread only.
 *
 * Writers (registration, rare) append under a mutex to chunks that are never
 * freed or moved, and publish the new count with a release store; the flush
 * thread reads entries below the count it acquired and indexes them in its
 * own hash table, so lookups take no lock. */
#include "preload/cuda_kernels.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "preload/cuda_pack.h"

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

struct slot {
	const void *key;
	uint32_t entry;	    /* index + 1; 0 = empty */
	char *demangled;    /* cached display name, or NULL */
	int tried;
};

static struct {
	struct slot *slots;
	uint32_t cap, used, indexed;
	/* Names the driver gave for CUfunctions (cuFuncGetName), cached. */
	struct {
		const void *key;
		char *name;
	} *drv;
	uint32_t drv_cap, drv_used;
	char *(*demangle)(const char *, char *, size_t *, int *);
	int demangle_looked;
} F;

static uint32_t hash_ptr(const void *p, uint32_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & (cap - 1);
}

static struct entry *entry_at(uint32_t i)
{
	return &chunks[i >> CHUNK_SHIFT][i & (CHUNK - 1)];
}

static void put(const void *key, uint32_t idx);

static int grow(void)
{
	uint32_t cap = F.cap ? F.cap * 2 : 1024;
	struct slot *old = F.slots;
	uint32_t ocap = F.cap;
	struct slot *s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	F.slots = s;
	F.cap = cap;
	F.used = 0;
	for (uint32_t i = 0; i < ocap; i++) {
		if (!old[i].entry)
			continue;
		uint32_t h = hash_ptr(old[i].key, cap);
		while (s[h].entry)
			h = (h + 1) & (cap - 1);
		s[h] = old[i];
		F.used++;
	}
	free(old);
	return 0;
}

static void put(const void *key, uint32_t idx)
{
	if ((F.used + 1) * 2 > F.cap && grow() < 0)
		return;
	uint32_t h = hash_ptr(key, F.cap);
	while (F.slots[h].entry && F.slots[h].key != key)
		h = (h + 1) & (F.cap - 1);
	if (!F.slots[h].entry)
		F.used++;
	else
		free(F.slots[h].demangled);
	/* A later registration of the same stub (a module loaded again) wins. */
	F.slots[h].key = key;
	F.slots[h].entry = idx + 1;
	F.slots[h].demangled = NULL;
	F.slots[h].tried = 0;
}

static struct slot *get(const void *key)
{
	uint32_t n = atomic_load_explicit(&published, memory_order_acquire);
	for (; F.indexed < n; F.indexed++)
		put(entry_at(F.indexed)->key, F.indexed);
	if (!F.cap)
		return NULL;
	uint32_t h = hash_ptr(key, F.cap);
	while (F.slots[h].entry) {
		if (F.slots[h].key == key)
			return &F.slots[h];
		h = (h + 1) & (F.cap - 1);
	}
	return NULL;
}

/* __cxa_demangle from libstdc++, when the program has loaded it (every C++
 * program has); otherwise names stay mangled. */
static char *demangle(const char *name)
{
	if (!F.demangle_looked) {
		tp_dlsym_fn dl = (tp_dlsym_fn)tp_cuda_dlsym_resolve();
		F.demangle_looked = 1;
		if (dl)
			*(void **)&F.demangle = dl(RTLD_DEFAULT, "__cxa_demangle");
	}
	if (!F.demangle || strncmp(name, "_Z", 2))
		return NULL;
	int status = -1;
	char *out = F.demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

const char *tp_cuda_kernels_name(const void *key)
{
	struct slot *s = get(key);
	if (s && entry_at(s->entry - 1)->host)
		s = get(entry_at(s->entry - 1)->host); /* alias: kernel handle -> stub */
	if (!s)
		return NULL;
	struct entry *e = entry_at(s->entry - 1);
	if (!e->name)
		return NULL;
	if (!s->tried) {
		s->tried = 1;
		s->demangled = demangle(e->name);
	}
	return s->demangled ? s->demangled : e->name;
}

/* cuFuncGetName (and cuKernelGetName for a CUkernel passed where a CUfunction
 * is expected) through the real driver functions, never the wrappers: this
 * runs on the flush thread, which must not record.  The answers are cached:
 * the driver may be asked only once per handle. */
typedef int (*get_name_fn)(const char **, const void *);

/* A direct-mapped cache in front of the list, so that launches of the same
 * few functions cost one probe. */
static struct {
	const void *key;
	const char *name;
} drv_cache[1024];

static const char *driver_name(const void *f)
{
	uint32_t h = hash_ptr(f, 1024);
	if (drv_cache[h].key == f)
		return drv_cache[h].name;
	for (uint32_t i = 0; i < F.drv_used; i++)
		if (F.drv[i].key == f) {
			drv_cache[h].key = f;
			drv_cache[h].name = F.drv[i].name;
			return F.drv[i].name;
		}
	const char *name = NULL;
	static const char *const getters[] = { "cuFuncGetName", "cuKernelGetName" };
	for (size_t g = 0; g < 2 && !name; g++) {
		int id = tp_cuda_find(getters[g]);
		get_name_fn fn = id >= 0 ? (get_name_fn)tp_cuda_real((uint32_t)id) : NULL;
		const char *n = NULL;
		if (fn && fn(&n, f) == 0 && n)
			name = n;
	}
	if (F.drv_used == F.drv_cap) {
		uint32_t cap = F.drv_cap ? F.drv_cap * 2 : 64;
		void *p = realloc(F.drv, cap * sizeof(*F.drv));
		if (!p)
			return name;
		*(void **)&F.drv = p;
		F.drv_cap = cap;
	}
	char *copy = NULL;
	if (name) {
		copy = demangle(name);
		if (!copy)
			copy = strdup(name);
	}
	F.drv[F.drv_used].key = f;
	F.drv[F.drv_used].name = copy;
	F.drv_used++;
	drv_cache[h].key = f;
	drv_cache[h].name = copy;
	return copy;
}

const char *tp_cuda_kernels_driver_name(const void *f)
{
	const char *n = tp_cuda_kernels_name(f);
	return n ? n : (f ? driver_name(f) : NULL);
}

uint64_t tp_cuda_kernels_dropped(void)
{
	return atomic_load_explicit(&reg_dropped, memory_order_relaxed);
}
