/* cuptiActivityRegisterCallbacks, interposed: how traceprof learns that
 * another CUPTI client takes the GPU activity records.
 *
 * A process has one pair of CUPTI buffer callbacks.  torch.profiler (Kineto),
 * JAX/XLA and other tools register theirs when they start; whoever registers
 * last receives every record from then on.  Without this hook, traceprof
 * either took the records away from a profiler that registered first (its
 * load after cuInit registers too) or kept pushing its correlation ids into
 * a profiler's records after that profiler took over.  With it, the first
 * client keeps CUPTI: preload/cupti.c gives way to the other client before
 * the other client's registration takes effect (the handler that cupti.c
 * sets with tp_cupti_hook_set_client(): this file calls nothing of capture).
 *
 * Programs reach the function three ways, all of which land here: a direct
 * call (Kineto links libcupti: the PLT binds to the first definition in the
 * global scope, ours), dlsym(RTLD_DEFAULT), and dlsym on a handle of
 * libcupti (XLA's loader), which the dlsym hook answers with
 * tp_cupti_hook_for().  Our own registration resolves libcupti's function
 * with libc's dlsym and never comes through here.  NVIDIA's libcupti is
 * linked -Bsymbolic, so its internal calls do not either. */
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "common/dl.h"
#include "preload/cuda_pack.h"
#include "preload/resolve/cupti_hook.h"
#include "preload/export.h"


static const char NAME[] = "cuptiActivityRegisterCallbacks";

/* libcupti's function; written once (a racing writer stores the same
 * address, or the first one seen wins: relaxed, nothing else is published
 * with it). */
static _Atomic(tp_cupti_register_fn) real_register;

TP_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							       CUpti_BuffersCallbackCompleteFunc done);

/* preload/cupti.c's handler (tp_cupti_hook_set_client()); set once, in the
 * constructor.  Release/acquire: the store pairs with the load in
 * cuptiActivityRegisterCallbacks(), so a thread that finds the handler also
 * sees what cupti.c set up before it. */
static _Atomic(tp_cupti_client_fn) client;
/* A registration came before the handler was set.  The release store in
 * cuptiActivityRegisterCallbacks() pairs with the acquire load in
 * tp_cupti_hook_early(), read when cupti.c decides whether to load CUPTI. */
static _Atomic int early;

static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "libcupti.so", 11))
		return 0;
	*(const char **)data = name;
	return 1;
}

/* The real function: the next definition after traceprof, else the one in
 * a libcupti loaded without RTLD_GLOBAL.  NULL when no libcupti is loaded. */
static tp_cupti_register_fn find_real(void)
{
	tp_cupti_register_fn f = atomic_load_explicit(&real_register, memory_order_relaxed);
	if (f)
		return f;
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	if (!dl)
		return NULL;
	/* Called from here, RTLD_NEXT means "after traceprof". */
	void *p = dl(RTLD_NEXT, NAME);
	const char *path = NULL;
	if (!p && dl_iterate_phdr(find_loaded, &path) && path) {
		void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			p = dl(h, NAME);
			dlclose(h);
		}
	}
	if (!p || p == (void *)cuptiActivityRegisterCallbacks)
		return NULL;
	tp_cupti_register_fn expect = NULL;
	f = (tp_cupti_register_fn)p;
	if (!atomic_compare_exchange_strong_explicit(&real_register, &expect, f,
						     memory_order_relaxed, memory_order_relaxed))
		f = expect;
	return f;
}

TP_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							       CUpti_BuffersCallbackCompleteFunc done)
{
	tp_cupti_register_fn real = find_real();
	/* Only reachable by a name lookup while no libcupti is loaded (a
	 * direct call needs one): CUPTI's answer before it is initialized. */
	if (!real)
		return CUPTI_ERROR_NOT_INITIALIZED;
	tp_cupti_client_fn fn = atomic_load_explicit(&client, memory_order_acquire);
	if (fn)
		return fn(real, req, done);
	/* NULL callbacks: CUPTI refuses them and changes nothing. */
	if (req && done)
		atomic_store_explicit(&early, 1, memory_order_release);
	return real(req, done);
}

void tp_cupti_hook_set_client(tp_cupti_client_fn fn)
{
	atomic_store_explicit(&client, fn, memory_order_release);
}

int tp_cupti_hook_early(void)
{
	return atomic_load_explicit(&early, memory_order_acquire);
}

void *tp_cupti_hook_for(const char *name, void *found)
{
	if (!found || strcmp(name, NAME) || found == (void *)cuptiActivityRegisterCallbacks)
		return found;
	tp_cupti_register_fn expect = NULL;
	atomic_compare_exchange_strong_explicit(&real_register, &expect, (tp_cupti_register_fn)found,
						memory_order_relaxed, memory_order_relaxed);
	/* A second libcupti's function (another copy than the first one seen)
	 * is left alone: our hook forwards to one real function. */
	if (expect && expect != (tp_cupti_register_fn)found)
		return found;
	return (void *)cuptiActivityRegisterCallbacks;
}

int tp_cupti_hook_hidden(const char *name)
{
	return !strcmp(name, NAME) && !find_real();
}
