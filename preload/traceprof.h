/* traceprof public API.
 *
 * Include this header and call the functions below from any program.  When
 * the program runs under libtraceprof.so (LD_PRELOAD, `traceprof run`, or
 * linked with -ltraceprof), the calls reach the profiler.  When it does not,
 * each call is a cheap no-op: the functions are resolved once with
 * dlsym(RTLD_DEFAULT, ...), as NVTX does, so the calls can stay in
 * production binaries with no link-time dependency.
 *
 * Thread-safe; every function may be called from any thread. */
#ifndef TRACEPROF_H
#define TRACEPROF_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TRACEPROF_BUILDING_LIBRARY) || defined(TRACEPROF_LINKED)

/* The next step starts: torch.profiler.profile.step() semantics.  The step
 * counter is 0 when the process starts. */
void traceprof_step(void);
/* A duration event on the calling thread (Composer Marker.start/finish). */
void traceprof_marker_start(const char *name);
void traceprof_marker_finish(const char *name);
/* An instant event. */
void traceprof_marker_instant(const char *name);
/* A counter event: series `key` of counter `name` takes `value`. */
void traceprof_marker_counter(const char *name, const char *key, double value);
/* traceprof_marker_start and traceprof_marker_instant with categories,
 * comma-separated ("forward,train"; NULL or "": none), as Composer's
 * Marker(categories=...): the event's "cat" is "user_annotation,<categories>"
 * and its args.categories "<categories>" (the name and the categories are
 * each cut at 255 bytes).  traceprof_marker_finish ends a marker started
 * either way (by name). */
void traceprof_marker_start_cat(const char *name, const char *categories);
void traceprof_marker_instant_cat(const char *name, const char *categories);

#else /* resolved at run time */

#include <dlfcn.h>

/* Looks `name` up once per translation unit and caches the answer in *slot
 * (NULL when the library is not loaded).  Resolving twice in a race is
 * harmless: both threads store the same value.  The release store of *done
 * pairs with the acquire load that guards the cached pointer. */
static inline void *traceprof__resolve(void **slot, int *done, const char *name)
{
	if (!__atomic_load_n(done, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(slot, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED);
		__atomic_store_n(done, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

static inline void traceprof_step(void)
{
	static void *fn;
	static int done;
	void (*f)(void) = (void (*)(void))traceprof__resolve(&fn, &done, "traceprof_step");
	if (f)
		f();
}

static inline void traceprof__call_name(void **slot, int *done, const char *sym, const char *name)
{
	void (*f)(const char *) = (void (*)(const char *))traceprof__resolve(slot, done, sym);
	if (f)
		f(name);
}

static inline void traceprof_marker_start(const char *name)
{
	static void *fn;
	static int done;
	traceprof__call_name(&fn, &done, "traceprof_marker_start", name);
}

static inline void traceprof_marker_finish(const char *name)
{
	static void *fn;
	static int done;
	traceprof__call_name(&fn, &done, "traceprof_marker_finish", name);
}

static inline void traceprof_marker_instant(const char *name)
{
	static void *fn;
	static int done;
	traceprof__call_name(&fn, &done, "traceprof_marker_instant", name);
}

static inline void traceprof_marker_counter(const char *name, const char *key, double value)
{
	static void *fn;
	static int done;
	void (*f)(const char *, const char *, double) =
		(void (*)(const char *, const char *, double))traceprof__resolve(
			&fn, &done, "traceprof_marker_counter");
	if (f)
		f(name, key, value);
}

static inline void traceprof__call_name_cat(void **slot, int *done, const char *sym,
					    const char *name, const char *categories)
{
	void (*f)(const char *, const char *) =
		(void (*)(const char *, const char *))traceprof__resolve(slot, done, sym);
	if (f)
		f(name, categories);
}

static inline void traceprof_marker_start_cat(const char *name, const char *categories)
{
	static void *fn;
	static int done;
	traceprof__call_name_cat(&fn, &done, "traceprof_marker_start_cat", name, categories);
}

static inline void traceprof_marker_instant_cat(const char *name, const char *categories)
{
	static void *fn;
	static int done;
	traceprof__call_name_cat(&fn, &done, "traceprof_marker_instant_cat", name, categories);
}

#endif

#ifdef __cplusplus
}
#endif

#endif
