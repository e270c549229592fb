/* Which definition of a CUDA function each caller reaches (issue 16).
 *
 * traceprof's wrappers are found first by every caller, because a preloaded
 * library is in the global scope and a relocation searches the global scope
 * before the caller's own (local) scope.  Without traceprof the caller would
 * have reached the first definition in the global scope, else the one in its
 * local scope: a library dlopen'ed with RTLD_LOCAL (how CPython loads every
 * extension module, ctypes included) holds its runtime there only.  Looking
 * the real function up after traceprof (RTLD_NEXT) sees the global scope
 * only, and two runtimes of different majors (libcudart.so.12 and .so.13, each
 * in its own local scope) define the same names.  So the answer depends on
 * the caller, and is found like this (preload/resolve/cuda_scope_caller.c's
 * tp_scope_resolve_caller()):
 *   0. when the caller's object refers to the name (its relocation is what
 *      reached us): the global scope after traceprof, binding only a
 *      definition that the reference's version accepts, as glibc does
 *      (global_binding()): NVIDIA versions every runtime symbol with its
 *      soname (cudaMalloc@@libcudart.so.13), and a caller linked with one
 *      major never binds another major's definition even when that one is
 *      global, while an unversioned one (a preloaded CUDA interposer) is
 *      bound before the caller's own runtime;
 *   1. the caller's own scope: the first definition in the object that
 *      holds the return address and its dependencies, breadth first;
 *   2. for a call with no reference behind it (through a pointer): the
 *      global scope after traceprof (RTLD_NEXT), any version;
 *   3. for driver functions, the libcuda.so.1 the runtime dlopen'ed locally;
 *   4. the first definition ever found (a caller with no CUDA library in its
 *      scope, such as libffi calling through a pointer from dlsym).
 * Steps 0 and 1 are glibc's own order for a library loaded RTLD_LOCAL: its
 * relocations search the global scope, then its local one.
 *
 * What it costs: one process-wide fast pointer per function
 * (tp_cuda_reals[id]) stays the common case.  It is published only while
 * each library (runtime, driver) has at most one defining object in the
 * process, so that every caller would get the same answer, and no dlopen is
 * in flight.  Objects are scanned for definitions at the first resolution
 * and after every dlopen (preload/resolve/dl_open.c), by a few marker names per
 * library.  Once a library has two definers (or after a load traceprof could
 * not follow), its pointers stay NULL: each call goes through the wrapper's
 * slow path to a per-call-site cache keyed by (return address, function).
 *
 * The jobs are split across files: preload/resolve/cuda_scope_int.h.
 *
 * Locking: `tp_scope_lock` guards the tables and is never held across a call
 * into the dynamic linker (which takes its own loader lock, held through the
 * constructors of a loading object; a constructor calling CUDA on the
 * loading thread must not wait for us while we wait for the loader). */
#include "common/dl.h"
#include "preload/resolve/cuda_scope_int.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "common/elf.h"
#include "common/log.h"
#include "preload/resolve/dl_hooks.h"

/* dl_iterate_phdr callback: whether the object holding c->a names
 * libtraceprof.so in its DT_NEEDED (the program linked with -ltraceprof). */
struct links_ctx {
	uintptr_t a;
	int links;
};

static int links_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct links_ctx *c = data;
	uintptr_t lo, hi;
	struct tp_elf e;
	tp_scope_range_of(info, &lo, &hi);
	if (c->a < lo || c->a >= hi)
		return 0;
	if (tp_elf_open_phdr(&e, info) < 0)
		return 1;
	const char *need;
	for (int k = 0; (need = tp_elf_needed(&e, k)); k++)
		if (!strncmp(need, "libtraceprof.so", 15))
			c->links = 1;
	return 1;
}

/* One line per function that nothing defines; for a caller linked with
 * libtraceprof while no object defines the library at all, one line for
 * the process that names the likely cause: a link with -Wl,--as-needed
 * drops libcudart when -ltraceprof comes first, since traceprof's wrappers
 * define its names.  traceprof cannot tell which runtime the program was
 * built for, so it loads none: the call fails as it would with the runtime
 * missing. */
static void note_missing(uint32_t id, const void *caller)
{
	static _Atomic uint64_t said[(TP_CUDA_NFUNCS + 63) / 64];
	/* Once per process; orders nothing (a relaxed exchange, no partner). */
	static _Atomic int said_link;
	uint64_t bit = 1ull << (id % 64);
	int fam = tp_cuda_fns[id].lib;
	pthread_mutex_lock(&tp_scope_lock);
	int none = tp_scope_st.ndef[fam] == 0;
	pthread_mutex_unlock(&tp_scope_lock);
	if (none) {
		struct links_ctx c = { (uintptr_t)caller, 0 };
		dl_iterate_phdr(links_self, &c);
		if (c.links) {
			if (!atomic_exchange_explicit(&said_link, 1, memory_order_relaxed))
				tp_warn("%s: no %s is loaded, and the caller is linked with libtraceprof.so: "
					"linked with -Wl,--as-needed and -ltraceprof before %s, the linker "
					"drops %s; put -Wl,--no-as-needed before -ltraceprof %s, or "
					"preload traceprof (LD_PRELOAD) instead of linking it; CUDA calls "
					"return an error without reaching CUDA",
					tp_cuda_fns[id].name, tp_scope_fam_name[fam],
					fam ? "-lcuda" : "-lcudart", fam ? "libcuda" : "libcudart",
					fam ? "-lcuda" : "-lcudart");
			return;
		}
	}
	if (atomic_fetch_or_explicit(&said[id / 64], bit, memory_order_relaxed) & bit)
		return;
	tp_warn("%s: no definition in the caller's scope, the global scope or a loaded "
		"libcuda.so.1; the call returns an error without reaching CUDA",
		tp_cuda_fns[id].name);
}

void *tp_scope_resolve(uint32_t id, const void *caller)
{
	if (id >= TP_CUDA_NFUNCS)
		return NULL;
	int saved = errno;
	if (!atomic_load_explicit(&tp_scope_scanned, memory_order_acquire))
		tp_scope_scan();
	uintptr_t key = tp_scope_site_key(caller, id);
	void *p = tp_scope_site_lookup(key);
	if (p) {
		errno = saved;
		return p;
	}
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	if (dl) {
		tp_dlerr_begin();
		p = tp_scope_resolve_caller(id, caller, dl, 1);
		tp_dlerr_end();
	}
	pthread_mutex_lock(&tp_scope_lock);
	int none = !p && !tp_scope_st.first[id];
	pthread_mutex_unlock(&tp_scope_lock);
	if (none) {
		/* The first definitions were forgotten at an unload: a caller
		 * with no CUDA library in its scope gets what a definer loaded
		 * now holds. */
		p = tp_scope_definer_def(id);
	}
	pthread_mutex_lock(&tp_scope_lock);
	if (!p)
		p = tp_scope_st.first[id];
	else if (!tp_scope_st.first[id])
		tp_scope_st.first[id] = p;
	if (p) {
		tp_scope_site_insert_locked(key, p);
		tp_scope_publish_locked(id);
	}
	pthread_mutex_unlock(&tp_scope_lock);
	/* The line speaks of the program's call; traceprof's own look-ups
	 * (caller NULL: naming kernels, cuGetProcAddress bookkeeping) do
	 * without the function and say nothing (issue 32). */
	if (!p && caller)
		note_missing(id, caller);
	errno = saved;
	return p;
}

void *tp_scope_lookup(uint32_t id, const void *caller)
{
	if (id >= TP_CUDA_NFUNCS)
		return NULL;
	int saved = errno;
	void *p = NULL;
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	if (dl) {
		tp_dlerr_begin();
		p = tp_scope_resolve_caller(id, caller, dl, 0);
		tp_dlerr_end();
	}
	errno = saved;
	return p;
}

/* ---- loads ------------------------------------------------------------ */

void tp_scope_load_begin(void)
{
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.inflight++;
	tp_scope_withdraw_locked(-1);
	pthread_mutex_unlock(&tp_scope_lock);
}

void tp_scope_load_end(int global)
{
	tp_scope_scan();
	if (global)
		tp_scope_sites_reset();
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.inflight--;
	if (!tp_scope_st.inflight)
		for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
			tp_scope_publish_locked(id);
	pthread_mutex_unlock(&tp_scope_lock);
}

void tp_scope_unload_begin(void)
{
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.inflight++;
	if (!tp_scope_st.unloading++) {
		/* No call site is answered from the table while objects go away:
		 * one in an unloaded object may come back at the same address in
		 * a new object (a dlopen on another thread) before the scan after
		 * the dlclose has replaced the table. */
		tp_scope_st.parked = atomic_load_explicit(&tp_scope_sites, memory_order_relaxed);
		atomic_store_explicit(&tp_scope_sites, NULL, memory_order_release);
	}
	tp_scope_withdraw_locked(-1);
	pthread_mutex_unlock(&tp_scope_lock);
}

void tp_scope_unload_end(void)
{
	tp_scope_scan();
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.inflight--;
	if (!--tp_scope_st.unloading)
		atomic_store_explicit(&tp_scope_sites, tp_scope_st.parked, memory_order_release);
	if (!tp_scope_st.inflight)
		for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
			tp_scope_publish_locked(id);
	pthread_mutex_unlock(&tp_scope_lock);
}
