/* Which definition of a CUDA function a caller reaches (preload/resolve/cuda_scope.c).
 *
 * The generated wrappers keep one fast pointer per function (tp_cuda_reals,
 * preload/cuda_pack.h).  It is valid for every caller only while the process
 * holds at most one object that defines the function's library (one runtime,
 * one driver), and no dlopen is between its start and its end.  Otherwise the
 * pointer is NULL and each call goes the slow way, to tp_scope_resolve(),
 * which answers for that caller and caches the answer per call site. */
#ifndef TP_PRELOAD_RESOLVE_CUDA_SCOPE_H
#define TP_PRELOAD_RESOLVE_CUDA_SCOPE_H

#include <stdint.h>

/* The real function that `caller` (a return address; NULL: traceprof
 * itself) reaches for function `id`: what its relocation would bind in the
 * global scope after traceprof (honouring its reference's symbol version),
 * else what its own scope defines, else (a call through a pointer) the
 * global scope after traceprof, else (driver functions) the loaded
 * libcuda.so.1, else the first definition ever found.  Publishes the fast
 * pointer when that is safe.  NULL when nothing defines it (one traceprof:
 * line per function).  Preserves errno and the program's dlerror() text. */
void *tp_scope_resolve(uint32_t id, const void *caller);

/* What a dlsym(RTLD_DEFAULT or RTLD_NEXT) from `caller` would find without
 * traceprof: the same steps as tp_scope_resolve() but the last two.  NULL
 * when neither defines the function.  Caches and publishes nothing. */
void *tp_scope_lookup(uint32_t id, const void *caller);

/* A real address found another way (a dlsym on a handle, cuGetProcAddress):
 * recorded as the function's first definition if none is known yet, and
 * published as the fast pointer when safe.  Returns the first definition. */
void *tp_scope_publish(uint32_t id, void *p);

/* Non-zero while the wrappers of this function's library may hand a caller
 * its own definition without asking who calls (one definer). */
int tp_scope_single(uint32_t id);

/* dlopen's two halves (preload/resolve/dl_open.c): before the real dlopen, every
 * fast pointer is withdrawn (a constructor of the object being loaded may
 * call CUDA and must reach its own runtime); after it, new objects are
 * scanned for CUDA definitions and the pointers come back if still safe.
 * `global`: the dlopen asked for RTLD_GLOBAL (the global scope changed). */
void tp_scope_load_begin(void);
void tp_scope_load_end(int global);

/* dlclose's two halves (preload/resolve/dl_open.c): before the real dlclose, the
 * fast pointers and the call-site cache are withdrawn (they may point into
 * the objects going away); after it, when anything was unloaded, all that
 * was learnt from the loaded objects is forgotten and every object is
 * looked at again (a new one may be mapped where an old one was). */
void tp_scope_unload_begin(void);
void tp_scope_unload_end(void);

/* A load traceprof cannot follow (it had to jump to the real dlopen as it
 * is): from now on every call is resolved per caller. */
void tp_scope_degrade(const char *why);

/* Non-zero when addr lies in libtraceprof itself. */
int tp_scope_is_self(const void *addr);

#endif
