/* C++ name demangling; see common/demangle.h. */
#include "common/demangle.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*dm_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle once found; NULL until then.  Relaxed is enough: the
 * function it points to is in a loaded object, whose code the dynamic
 * linker made visible before dlsym returned its address. */
static _Atomic(void *) dm_found;

static dm_fn dm_lookup(void)
{
	void *p = atomic_load_explicit(&dm_found, memory_order_relaxed);
	if (!p) {
		/* Inside libtraceprof this dlsym is traceprof's own (it
		 * interposes dlsym), which passes names that are not CUDA's
		 * through unchanged. */
		p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (p)
			atomic_store_explicit(&dm_found, p, memory_order_relaxed);
	}
	dm_fn fn;
	memcpy(&fn, &p, sizeof(fn));
	return fn;
}

char *tp_demangle(const char *name)
{
	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	dm_fn fn = dm_lookup();
	if (!fn)
		return NULL;
	int status = -1;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

const char *tp_demangle_into(const char *name, char *buf, size_t size)
{
	char *d = tp_demangle(name);
	if (!d || !size) {
		free(d);
		return name;
	}
	size_t n = strlen(d);
	if (n >= size)
		n = size - 1;
	memcpy(buf, d, n);
	buf[n] = '\0';
	free(d);
	return buf;
}
