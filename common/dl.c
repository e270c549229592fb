#include "common/dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "common/log.h"

void *tp_dl_glibc(const char *name)
{
	/* glibc 2.34 moved the dl functions into libc with a new version;
	 * older ones only have the architecture's first version. */
	void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");
#if defined(__x86_64__)
	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
#elif defined(__aarch64__)
	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.17");
#endif
	return p;
}

tp_dl_sym_fn tp_dl_real_dlsym(void)
{
	/* Written once; racing writers store the same address.  Relaxed: the
	 * function is in libc, mapped before any of our code ran. */
	static _Atomic(void *) real;
	void *p = atomic_load_explicit(&real, memory_order_relaxed);
	if (!p) {
		p = tp_dl_glibc("dlsym");
		if (!p)
			return NULL;
		atomic_store_explicit(&real, p, memory_order_relaxed);
	}
	tp_dl_sym_fn fn;
	memcpy(&fn, &p, sizeof(fn));
	return fn;
}

void *tp_dl_sym(void *handle, const char *name)
{
	tp_dl_sym_fn fn = tp_dl_real_dlsym();
	return fn ? fn(handle, name) : NULL;
}

static char dl_self[4096];
static pthread_once_t dl_self_once = PTHREAD_ONCE_INIT;

static void dl_find_self(void)
{
	Dl_info info;
	if (dladdr((void *)(uintptr_t)tp_dl_self_path, &info) && info.dli_fname)
		tp_format(dl_self, sizeof(dl_self), "%s", info.dli_fname);
}

const char *tp_dl_self_path(void)
{
	pthread_once(&dl_self_once, dl_find_self);
	return dl_self;
}

const char *tp_dl_self_base(void)
{
	const char *p = tp_dl_self_path();
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}
