/* dlerror(), interposed: the program's dlerror() text stays what its own
 * dl* calls left, whatever traceprof looks up on its behalf.
 *
 * traceprof calls dlopen(RTLD_NOLOAD), dlsym and dladdr on the program's
 * threads (resolving a CUDA function through the caller's scope, scanning a
 * newly loaded object); a failed lookup of ours would otherwise replace the
 * program's pending error, or leave one where the program expects none
 * (issue 17, item 13: "libcuda.so.1: cannot open shared object file" after a
 * dlsym(RTLD_DEFAULT, "cuInit") that should say "undefined symbol: cuInit").
 *
 * glibc keeps one pending error per thread, cleared by dlerror().  Around its
 * own calls traceprof takes the pending error out of glibc (tp_dlerr_begin)
 * and keeps a copy, then drops whatever its calls left (tp_dlerr_end).  The
 * exported dlerror() answers glibc's error if a later call of the program
 * set one (it is newer), else the kept copy, once, as glibc would.  A lookup
 * that traceprof answers with NULL itself (a CUDA name with no real function,
 * see preload/resolve/cuda_dlsym.c) leaves the message glibc would have written. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/dl.h"
#include "common/log.h"
#include "preload/resolve/dl_hooks.h"
#include "preload/export.h"

struct dlerr {
	int pending;
	char text[512]; /* the kept error */
	char out[512];	/* what the last dlerror() returned: valid until the next */
};

/* One pointer of TLS (allocated on the first error kept): the library's
 * static TLS must stay small (preload/nvtx.c, collector/thread.h). */
static __thread struct dlerr *dlerr;

typedef char *(*dlerror_fn)(void);

static dlerror_fn real_dlerror(void)
{
	/* Written once; a racing writer stores the same address. */
	static dlerror_fn _Atomic real;
	dlerror_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (f)
		return f;
	tp_dlsym_fn dl = tp_dl_real_dlsym();
	f = dl ? (dlerror_fn)dl(RTLD_NEXT, "dlerror") : NULL;
	atomic_store_explicit(&real, f, memory_order_relaxed);
	return f;
}

static void keep(const char *text)
{
	struct dlerr *d = dlerr;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return; /* the program's pending error is lost: nothing better */
		dlerr = d;
	}
	size_t n = strlen(text);
	if (n >= sizeof(d->text))
		n = sizeof(d->text) - 1;
	memcpy(d->text, text, n);
	d->text[n] = 0;
	d->pending = 1;
}

void tp_dlerr_begin(void)
{
	dlerror_fn f = real_dlerror();
	const char *e = f ? f() : NULL;
	if (e)
		keep(e);
}

void tp_dlerr_end(void)
{
	dlerror_fn f = real_dlerror();
	if (f)
		(void)f();
}

void tp_dlerr_undefined(const char *object, const char *name)
{
	char buf[512];
	tp_dlerr_end(); /* an older pending error: superseded by this one */
	tp_format(buf, sizeof(buf), "%s: undefined symbol: %s", object, name);
	keep(buf);
}

TP_EXPORT char *dlerror(void);
TP_EXPORT char *dlerror(void)
{
	dlerror_fn f = real_dlerror();
	char *e = f ? f() : NULL;
	struct dlerr *d = dlerr;
	if (!d || !d->pending)
		return e;
	d->pending = 0;
	if (e)
		return e; /* set by a later call of the program's: newer */
	memcpy(d->out, d->text, sizeof(d->out));
	return d->out;
}
