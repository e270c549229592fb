/* Per-thread state of preload's modules, allocated on a thread's first need
 * and freed when the thread ends.  Each module keeps its own one-pointer
 * initial-exec TLS (its fast path reads nothing else; the library's static
 * TLS must stay small: collector/thread.h) and calls tp_tls_new() when that
 * pointer is NULL.  One pthread key, made once, serves every module: its
 * destructor frees all the states the ending thread allocated. */
#ifndef TP_PRELOAD_TLS_H
#define TP_PRELOAD_TLS_H

#include <stddef.h>

/* A zeroed state of `size` bytes for the calling thread, or NULL (no key,
 * no memory).  When the thread ends, `forget` runs on it (to set the
 * module's TLS pointer back to NULL) and the state is freed.  Not for the
 * hot path: it allocates. */
void *tp_tls_new(size_t size, void (*forget)(void));

/* The usual module state: `static type *var` in initial-exec TLS and
 * `static type *get(void)`, which returns it, made by tp_tls_new() on the
 * thread's first call (NULL when that fails); the thread's end sets var
 * back to NULL before the state is freed. */
#define TP_TLS_STATE(type, var, get)                                                      \
	static __thread type *var __attribute__((tls_model("initial-exec")));             \
	static void get##_forget(void)                                                    \
	{                                                                                 \
		var = NULL;                                                               \
	}                                                                                 \
	static type *get(void)                                                            \
	{                                                                                 \
		return var ? var : (var = tp_tls_new(sizeof(*var), get##_forget));         \
	}

#endif
