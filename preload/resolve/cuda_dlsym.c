/* The dlsym hook and the resolution of the real CUDA functions.
 *
 * Since CUDA 11.3 the runtime (static or shared) reaches the driver with
 * dlopen("libcuda.so.1") + dlsym(handle, "cuGetProcAddress_v2"), and a program
 * may dlopen libcudart itself: lookups on a handle bypass LD_PRELOAD, so
 * exporting the wrappers is not enough and dlsym itself is hooked.  A lookup
 * of a CUDA name on a handle returns the wrapper of that exact function, once
 * its real address is known.
 *
 * dlsym's answer depends on who calls it: RTLD_NEXT searches the objects
 * after the caller, and RTLD_DEFAULT uses the caller's namespace and scope.
 * Forwarding those through a C call would make traceprof the caller (HAMi-core
 * PR 315; OpenMP's tool loader looped), so the entry point is a few lines of
 * assembly that jump to the real dlsym with the original return address still
 * on the stack.  Only lookups on an explicit handle go through C, where the
 * caller only decides which object a dependency is recorded for (traceprof,
 * which is never unloaded, instead of the caller). */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "common/dl.h"
#include "preload/cuda_pack.h"
#include "preload/resolve/cuda_scope.h"
#include "preload/resolve/cupti_hook.h"
#include "preload/resolve/dl_hooks.h"
#include "preload/export.h"
#include "preload/resolve/nvtx_loader.h"

/* The assembly's copy of common/dl.c's cache of glibc's dlsym (one load on
 * the way through, cuda_dlsym_x86_64.S); filled by tp_cuda_dlsym_resolve()
 * from that cache, so the address is found in one place.  Written once (any
 * racing writer stores the same value). */
void *_Atomic tp_cuda_real_dlsym;
void *tp_cuda_dlsym_resolve(void);

int tp_cuda_dlsym_hidden(const char *name, const void *caller);
void *tp_cuda_dlsym_handle(void *handle, const char *name);

/* See cuda_pack.h: only the portable C form of the wrappers writes it. */
__thread const void *tp_cuda_caller;

/* The assembly's slow path: glibc's dlsym from common/dl.c, copied where
 * the assembly reads it. */
void *tp_cuda_dlsym_resolve(void)
{
	void *p = atomic_load_explicit(&tp_cuda_real_dlsym, memory_order_relaxed);
	if (p)
		return p;
	tp_dl_sym_fn fn = tp_dl_real_dlsym();
	if (!fn)
		return NULL;
	memcpy(&p, &fn, sizeof(p));
	atomic_store_explicit(&tp_cuda_real_dlsym, p, memory_order_relaxed);
	return p;
}

static int is_cuda_name(const char *name)
{
	return name && ((name[0] == 'c' && name[1] == 'u') ||
			(name[0] == '_' && !strncmp(name, "__cuda", 6)));
}

void *tp_cuda_set_real(uint32_t id, void *p)
{
	return tp_scope_publish(id, p);
}

/* The name glibc gives an object in its messages: its path, or the
 * program's argv[0]. */
static const char *object_name(const void *caller)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (caller && dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name &&
	    lm->l_name[0])
		return lm->l_name;
	return program_invocation_name ? program_invocation_name : "<main program>";
}

/* Non-zero when an RTLD_DEFAULT or RTLD_NEXT lookup must answer NULL: the
 * name is one of our wrappers but no real function exists for that caller,
 * so without traceprof the lookup would have failed (programs probe for the
 * driver this way).  The message glibc would have left becomes the pending
 * dlerror() text. */
int tp_cuda_dlsym_hidden(const char *name, const void *caller)
{
	if (!is_cuda_name(name))
		return 0;
	int id = tp_cuda_find(name);
	int hidden;
	if (id < 0)
		hidden = tp_cupti_hook_hidden(name);
	else
		hidden = !tp_cuda_real_known((uint32_t)id) &&
			 !tp_scope_lookup((uint32_t)id, caller);
	if (hidden)
		tp_dlerr_undefined(object_name(caller), name);
	return hidden;
}

/* A lookup on an explicit handle: the real answer, or the wrapper of the
 * same function when the answer is that function's real address.  While
 * two libraries define the function (two runtimes), the real address is
 * handed out as it is: a wrapper routes a call by its caller, and whoever
 * calls through this pointer asked for this definition (not traced, but
 * correct). */
void *tp_cuda_dlsym_handle(void *handle, const char *name)
{
	tp_nvtx_loader_sym(name);
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	if (!dl)
		return NULL;
	void *p = dl(handle, name);
	if (!p || !is_cuda_name(name))
		return p;
	int id = tp_cuda_find(name);
	if (id < 0)
		return tp_cupti_hook_for(name, p);
	if (p == tp_cuda_wrappers[id])
		return p;
	if (!tp_scope_single((uint32_t)id))
		return p;
	/* A different address than the one already known is a second copy of
	 * the library (say, a bundled libcudart): left unwrapped, since a
	 * wrapper calls one real function. */
	return tp_cuda_set_real((uint32_t)id, p) == p ? tp_cuda_wrappers[id] : p;
}

/* x86-64: the entry point is assembly, preload/resolve/cuda_dlsym_x86_64.S. */
#if !defined(__x86_64__)
/* Other architectures: a C forwarder.  RTLD_NEXT and RTLD_DEFAULT lookups are
 * then resolved relative to traceprof instead of the caller (a known
 * limitation; write the tail jump for the architecture to lift it). */
TP_EXPORT void *dlsym(void *handle, const char *name);
TP_EXPORT void *dlsym(void *handle, const char *name)
{
	if (handle != RTLD_DEFAULT && handle != RTLD_NEXT)
		return tp_cuda_dlsym_handle(handle, name);
	if (tp_cuda_dlsym_hidden(name, __builtin_return_address(0)))
		return NULL;
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	return dl ? dl(handle, name) : NULL;
}
#endif
