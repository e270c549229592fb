/* The dynamic-linker calls that traceprof makes for itself.
 *
 * preload/ interposes dlsym, dlopen and dlclose for the program.  A lookup
 * that traceprof needs for its own work (__cxa_demangle, the C library's
 * clone, the real dl functions the hooks forward to) goes through here, to
 * glibc's functions directly: visible at the call, where a plain dlsym()
 * inside the library would reach preload/'s hook by link-time interposition
 * and depend on its rules for CUDA names. */
#ifndef TP_COMMON_DL_H
#define TP_COMMON_DL_H

/* glibc's own definition of a dl function ("dlsym", "dlopen", "dlclose"),
 * found with dlvsym so that the interposed public symbol is skipped; NULL
 * if this C library has none of the versions known.  Uninstrumented under
 * the sanitizers: their runtimes call dlsym before their shadow memory
 * exists, and preload/'s dlsym comes here the first time. */
void *tp_dl_glibc(const char *name);

/* glibc's dlsym, never preload/'s hook: found once (tp_dl_glibc) and kept.
 * This is traceprof's one cache of it: preload/'s dlsym hook forwards to
 * it and every lookup traceprof makes for itself goes through it.  NULL if
 * this C library has none of the versions known. */
typedef void *(*tp_dl_sym_fn)(void *, const char *);
tp_dl_sym_fn tp_dl_real_dlsym(void);

/* dlsym(handle, name) through glibc's dlsym.  RTLD_NEXT means the next
 * object after libtraceprof, as it would from any of its files. */
void *tp_dl_sym(void *handle, const char *name);

/* This library's own path, found once (dladdr on one of its functions):
 * libtraceprof.so's in the preloaded library, the program's in a test
 * binary built with libtpcore.a; "" when dladdr cannot tell.  preload/'s
 * constructor asks first, so that later calls only read it (one atomic
 * load: pthread_once). */
const char *tp_dl_self_path(void);

/* Its file name, without the directory (what LD_PRELOAD entries are
 * compared by, common/preload_env.h). */
const char *tp_dl_self_base(void);

#endif
