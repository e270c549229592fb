/* The state of preload/resolve/cuda_scope.h's resolution, and the fast pointers
 * made from it: published while every caller would get the same answer,
 * withdrawn while a load is in flight or a library has two definers.  See
 * preload/resolve/cuda_scope_int.h for the other files. */
#include "preload/resolve/cuda_scope_int.h"

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "common/log.h"
#include "common/self_image.h"

const char *const tp_scope_fam_name[TP_SCOPE_NFAM] = { "CUDA runtime", "CUDA driver" };

/* preload/cuda_pack.h's fast pointers, defined here beside the state that
 * publishes and withdraws them. */
void *_Atomic tp_cuda_reals[TP_CUDA_NFUNCS + 1];

pthread_mutex_t tp_scope_lock = PTHREAD_MUTEX_INITIALIZER;
struct tp_scope_state tp_scope_st;
struct tp_scope_site *_Atomic tp_scope_sites = tp_scope_st.sites0;
_Atomic int tp_scope_multi[TP_SCOPE_NFAM];
_Atomic int tp_scope_degraded;
_Atomic int tp_scope_scanned;

uintptr_t tp_scope_self_lo, tp_scope_self_hi;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

void tp_scope_range_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t l = UINTPTR_MAX, h = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < l)
			l = a;
		if (a + ph->p_memsz > h)
			h = a + ph->p_memsz;
	}
	*lo = l;
	*hi = h;
}

/* A child forked while another thread held the lock would never get it:
 * the child starts with a fresh one (the tables are small, and each update
 * under the lock leaves them usable at every step). */
static void child_after_fork(void)
{
	pthread_mutex_init(&tp_scope_lock, NULL);
}

static void init_self(void)
{
	struct tp_image im;
	if (!tp_image_of((const void *)(uintptr_t)&tp_scope_is_self, &im)) {
		tp_scope_self_lo = im.lo;
		tp_scope_self_hi = im.hi;
	}
	pthread_atfork(NULL, NULL, child_after_fork);
}

void tp_scope_self_init(void)
{
	pthread_once(&self_once, init_self);
}

int tp_scope_is_self(const void *addr)
{
	tp_scope_self_init();
	return (uintptr_t)addr >= tp_scope_self_lo && (uintptr_t)addr < tp_scope_self_hi;
}


static int fast_ok_locked(uint32_t id)
{
	int fam = tp_cuda_fns[id].lib;
	return !tp_scope_st.inflight &&
	       !atomic_load_explicit(&tp_scope_degraded, memory_order_relaxed) &&
	       !atomic_load_explicit(&tp_scope_multi[fam], memory_order_relaxed);
}

void tp_scope_publish_locked(uint32_t id)
{
	void *p = tp_scope_st.first[id];
	if (!p || !fast_ok_locked(id))
		return;
	/* Relaxed, as every other tp_cuda_reals access (cuda_pack.h): the
	 * pointer is all a reader needs, and the lock orders this store after
	 * any withdrawal. */
	atomic_store_explicit(&tp_cuda_reals[id], p, memory_order_relaxed);
}

void tp_scope_withdraw_locked(int fam)
{
	for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
		if (fam < 0 || tp_cuda_fns[id].lib == fam)
			atomic_store_explicit(&tp_cuda_reals[id], NULL, memory_order_relaxed);
}

int tp_scope_grow(void **v, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : first;
	void *p = realloc(*v, c * elem);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

void *tp_scope_publish(uint32_t id, void *p)
{
	if (id >= TP_CUDA_NFUNCS || !p)
		return NULL;
	pthread_mutex_lock(&tp_scope_lock);
	if (!tp_scope_st.first[id])
		tp_scope_st.first[id] = p;
	void *first = tp_scope_st.first[id];
	tp_scope_publish_locked(id);
	pthread_mutex_unlock(&tp_scope_lock);
	return first;
}

int tp_scope_single(uint32_t id)
{
	int fam = tp_cuda_fns[id].lib;
	return !atomic_load_explicit(&tp_scope_degraded, memory_order_relaxed) &&
	       !atomic_load_explicit(&tp_scope_multi[fam], memory_order_relaxed);
}

void tp_scope_degrade(const char *why)
{
	pthread_mutex_lock(&tp_scope_lock);
	int was = atomic_exchange_explicit(&tp_scope_degraded, 1, memory_order_relaxed);
	tp_scope_withdraw_locked(-1);
	pthread_mutex_unlock(&tp_scope_lock);
	if (!was)
		tp_info("%s: every CUDA call is resolved per caller from now on", why);
}
