/* preload/resolve/cuda_scope.h's call-site cache: (return address, function) ->
 * the definition that caller reaches, for the calls that go the slow way.
 * Open addressing with a bounded probe; lock-free readers, writers under
 * tp_scope_lock.  See preload/resolve/cuda_scope_int.h. */
#include "preload/resolve/cuda_scope_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/hash.h"

#define SITE_PROBE 16
#define MAX_SITE_TABLES 64

uintptr_t tp_scope_site_key(const void *caller, uint32_t id)
{
	/* User-space addresses fit in 48 bits: the id goes above them. */
	return ((uintptr_t)caller & ((1ull << 48) - 1)) | (uintptr_t)(id + 1) << 48;
}

/* common/hash.h's hash: the key's low bits are a return address's, its
 * high ones the function's id, and the table takes the low bits of the
 * hash, so every bit of the key must reach them. */
static size_t site_hash(uintptr_t key)
{
	return (size_t)tp_hash_u64(key) & (TP_SCOPE_SITE_SLOTS - 1);
}

void *tp_scope_site_lookup(uintptr_t key)
{
	struct tp_scope_site *t = atomic_load_explicit(&tp_scope_sites, memory_order_acquire);
	if (!t)
		return NULL;
	size_t h = site_hash(key);
	for (int i = 0; i < SITE_PROBE; i++, h = (h + 1) & (TP_SCOPE_SITE_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t[h].key, memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&t[h].fn, memory_order_relaxed);
		if (!k)
			return NULL;
	}
	return NULL;
}

void tp_scope_site_insert_locked(uintptr_t key, void *fn)
{
	struct tp_scope_site *t = atomic_load_explicit(&tp_scope_sites, memory_order_relaxed);
	if (!t)
		return;
	size_t h = site_hash(key);
	for (int i = 0; i < SITE_PROBE; i++, h = (h + 1) & (TP_SCOPE_SITE_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t[h].key, memory_order_relaxed);
		if (k == key)
			return;
		if (k)
			continue;
		atomic_store_explicit(&t[h].fn, fn, memory_order_relaxed);
		/* Release: a reader that sees the key sees fn (tp_scope_site_lookup). */
		atomic_store_explicit(&t[h].key, key, memory_order_release);
		return;
	}
}

/* A new, empty call-site table: the global scope changed, so a cached
 * answer that came from it may be stale.  Allocated outside the lock.  Past
 * MAX_SITE_TABLES nothing is cached any more (each slow call resolves). */
void tp_scope_sites_reset(void)
{
	struct tp_scope_site *t = NULL;
	pthread_mutex_lock(&tp_scope_lock);
	int n = tp_scope_st.site_tables;
	pthread_mutex_unlock(&tp_scope_lock);
	if (n < MAX_SITE_TABLES)
		t = calloc(TP_SCOPE_SITE_SLOTS, sizeof(*t));
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.site_tables++;
	if (tp_scope_st.unloading)
		tp_scope_st.parked = t; /* put in place when the last dlclose ends */
	else
		atomic_store_explicit(&tp_scope_sites, t, memory_order_release);
	pthread_mutex_unlock(&tp_scope_lock);
}
