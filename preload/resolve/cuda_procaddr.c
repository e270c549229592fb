/* cuGetProcAddress: the runtime asks it for every driver entry point, so its
 * answers are where the driver calls become visible.
 *
 * The real cuGetProcAddress is called first (by the generated wrapper); its
 * answer is then compared with the real address of every exported variant of
 * the requested symbol (cuMemcpyHtoD, _v2, _v2_ptds, ...), and the wrapper of
 * exactly that variant is handed back.  Choosing by version or flags
 * ourselves would risk another ABI than the one asked for (vcuda-controller
 * returned v2000 for v3020) or silently drop per-thread-default-stream
 * semantics (HAMi-core ignores the flags); matching addresses cannot.
 * A NULL answer stays NULL; an address of no known variant is passed on as
 * is (not traced, but correct). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "common/dl.h"
#include "preload/cuda_pack.h"


/* The library that holds the real cuGetProcAddress, as a dlopen handle, and
 * the address it was found for.  Written on first use (racing writers store
 * equivalent handles; the extra reference is harmless: libcuda stays loaded). */
static void *_Atomic driver_handle;
static void *_Atomic driver_handle_for;

static void *handle_of(void *fn)
{
	if (atomic_load_explicit(&driver_handle_for, memory_order_acquire) == fn)
		return atomic_load_explicit(&driver_handle, memory_order_relaxed);
	Dl_info info;
	void *h = NULL;
	if (dladdr(fn, &info) && info.dli_fname)
		h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	atomic_store_explicit(&driver_handle, h, memory_order_relaxed);
	/* Release: a reader that sees `fn` here also sees its handle. */
	atomic_store_explicit(&driver_handle_for, fn, memory_order_release);
	return h;
}

/* lookup() for tp_cuda_match_variant: the variant's real address, from the
 * cache or from the driver library itself. */
static void *variant_address(void *ctx, uint32_t id)
{
	void *p = atomic_load_explicit(&tp_cuda_reals[id], memory_order_relaxed);
	if (p || !ctx)
		return p;
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	p = dl ? dl(ctx, tp_cuda_fns[id].name) : NULL;
	if (!p || p == tp_cuda_wrappers[id])
		return NULL;
	return tp_cuda_set_real(id, p);
}

/* lookup() that answers with the wrappers: a driver whose own exported
 * functions are interposed hands out our wrappers already. */
static void *variant_wrapper(void *ctx, uint32_t id)
{
	(void)ctx;
	return tp_cuda_wrappers[id];
}

void tp_cuda_procaddr_fixup(uint32_t self_id, const char *symbol, void **pfn, int version,
			    uint64_t flags, int result, uint64_t *id_out, uint64_t *outcome)
{
	(void)flags; /* the address match already reflects them */
	*id_out = 0;
	if (result != 0 || !pfn || !symbol) {
		*outcome = TP_CUDA_PA_ERROR;
		return;
	}
	void *p = *pfn;
	if (!p) {
		*outcome = TP_CUDA_PA_NULL;
		return;
	}
	void *self = atomic_load_explicit(&tp_cuda_reals[self_id], memory_order_relaxed);
	void *h = self ? handle_of(self) : NULL;
	int id = tp_cuda_match_variant(symbol, p, variant_wrapper, NULL);
	if (id >= 0) {
		*id_out = (uint64_t)id + 1;
		*outcome = TP_CUDA_PA_WRAPPED;
		return;
	}
	id = tp_cuda_match_variant(symbol, p, variant_address, h);
	if (id < 0 && !strcmp(symbol, "cuGetProcAddress")) {
		/* The driver may answer with an internal alias of itself; the
		 * exported function of the asked-for ABI does the same, and
		 * handing back its wrapper keeps later lookups traced. */
		id = tp_cuda_find(version >= 12000 ? "cuGetProcAddress_v2" : "cuGetProcAddress");
		if (id >= 0 && !tp_cuda_real((uint32_t)id))
			id = -1;
	}
	if (id < 0) {
		*outcome = TP_CUDA_PA_UNKNOWN;
		return;
	}
	*pfn = tp_cuda_wrappers[id];
	*id_out = (uint64_t)id + 1;
	*outcome = TP_CUDA_PA_WRAPPED;
}
