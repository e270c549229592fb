/* What one caller reaches for a CUDA function (preload/resolve/cuda_scope.h):
 * steps 0-3 of preload/resolve/cuda_scope.c's comment, read from the loaded
 * objects' own symbol tables and glibc's RTLD_NEXT.  No state of its own;
 * see preload/resolve/cuda_scope_int.h. */
#include "preload/resolve/cuda_scope_int.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf.h"
#include "common/log.h"
#include "preload/resolve/copies.h"

static void *not_self(void *p)
{
	return p && !tp_scope_is_self(p) ? p : NULL;
}

/* The loaded objects, copied out of a dl_iterate_phdr() walk (under the
 * loader's list lock) so that the names stay valid after it. */
struct lobj {
	uintptr_t base, lo, hi;
	const ElfW(Dyn) *dyn;
	char *path;   /* "" for the program */
	char *soname; /* NULL: none */
};

struct lobjs {
	struct lobj *v;
	size_t n, cap;
	int failed;
};

static char *copy(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int gather(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct lobjs *L = data;
	if (tp_scope_grow((void **)&L->v, &L->cap, L->n, sizeof(*L->v), 64) < 0) {
		L->failed = 1;
		return 1;
	}
	struct lobj *o = &L->v[L->n];
	struct tp_elf e;
	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	tp_scope_range_of(info, &o->lo, &o->hi);
	if (tp_elf_open_phdr(&e, info) == 0) {
		o->dyn = e.dyn;
		o->soname = copy(tp_elf_soname(&e));
	}
	o->path = copy(info->dlpi_name ? info->dlpi_name : "");
	if (!o->path) {
		free(o->soname);
		L->failed = 1;
		return 1;
	}
	L->n++;
	return 0;
}

static void lobjs_free(struct lobjs *L)
{
	for (size_t i = 0; i < L->n; i++) {
		free(L->v[i].path);
		free(L->v[i].soname);
	}
	free(L->v);
}

static long by_addr(const struct lobjs *L, uintptr_t a)
{
	for (size_t i = 0; i < L->n; i++)
		if (a >= L->v[i].lo && a < L->v[i].hi)
			return (long)i;
	return -1;
}

/* A DT_NEEDED name's object: by soname, else by file name. */
static long by_needed(const struct lobjs *L, const char *name)
{
	for (size_t i = 0; i < L->n; i++)
		if (L->v[i].soname && !strcmp(L->v[i].soname, name))
			return (long)i;
	for (size_t i = 0; i < L->n; i++) {
		const char *b = strrchr(L->v[i].path, '/');
		if (!strcmp(b ? b + 1 : L->v[i].path, name))
			return (long)i;
	}
	return -1;
}

/* What a dlsym on a handle of object `root` answers: the first definition
 * in root's scope, itself then its dependencies breadth first, as glibc
 * builds it; traceprof's own definitions skipped.  Read from the objects'
 * symbol tables: a dependency's link map is no dlsym handle (glibc builds
 * its search list only when it is dlopen'ed), and a dlopen(RTLD_NOLOAD) to
 * get one can run the constructors of an object still being loaded.  The
 * objects read are the caller's dependencies, which stay loaded while it
 * runs.  *ifunc is set when a definition is an IFUNC (only glibc can give
 * its address). */
static void *scope_lookup(const struct lobjs *L, long root, const char *name, int *ifunc)
{
	long *queue = malloc(L->n * sizeof(*queue));
	char *in = calloc(L->n, 1);
	void *p = NULL;
	size_t head = 0, tail = 0;
	if (!queue || !in)
		goto out;
	queue[tail++] = root;
	in[root] = 1;
	while (head < tail && !p) {
		const struct lobj *o = &L->v[queue[head++]];
		struct tp_elf e;
		if (tp_elf_open(&e, o->base, o->dyn) < 0)
			continue;
		p = tp_elf_lookup(&e, name, ifunc);
		if (p && (tp_scope_is_self(p) || tp_copies_other(p)))
			p = NULL;
		const char *need;
		for (int k = 0; (need = tp_elf_needed(&e, k)); k++) {
			long j = by_needed(L, need);
			if (j >= 0 && !in[j]) {
				in[j] = 1;
				queue[tail++] = j;
			}
		}
	}
out:
	free(queue);
	free(in);
	return p;
}

/* Step 0: the caller's relocation.  Without traceprof it would search the
 * global scope first, binding only a definition that its reference's
 * version accepts (cudaMalloc@libcudart.so.13 binds @@libcudart.so.13 or an
 * unversioned definition, such as a CUDA interposer's, never
 * @@libcudart.so.12), then its own local scope.  Objects before traceprof
 * in the global scope offered no such definition, or the relocation would
 * have bound them instead of our wrapper: the search starts after
 * traceprof (RTLD_NEXT), so that an interposer preloaded after it
 * (LD_PRELOAD=libtraceprof.so:libshim.so) comes before the runtime in the
 * caller's own scope (issue 30, item 6).
 *
 * glibc answers half of it: dlsym(RTLD_NEXT) gives the first definition by
 * name, which is the answer when the reference accepts it (checked in that
 * object's tables: the version, or none of its own); dlvsym(RTLD_NEXT)
 * gives the first of exactly that version or in an object without any
 * versions, which is the answer otherwise.  Not seen: an unversioned
 * definition in an object with versions of its own (an interposer linked
 * against glibc) that comes after a definition of another version, and a
 * non-default definition of the version asked for before the first
 * definition by name: two interposers of one function, one of them
 * versioned as another major's.
 *
 * Sets *refs when the caller refers to the name; NULL when the global
 * scope after traceprof has no definition it would bind. */
static void *global_binding(const struct lobjs *L, long c, const char *name, tp_dlsym_fn dl,
			    int *refs)
{
	struct tp_elf e;
	const char *version = NULL;
	int ifunc = 0;
	*refs = 0;
	if (tp_elf_open(&e, L->v[c].base, L->v[c].dyn) < 0 || !tp_elf_reference(&e, name, &version))
		return NULL;
	*refs = 1;
	/* Another traceprof copy after this one answers with what comes after
	 * it (by name: a copy's own wrappers carry no version). */
	void *p = not_self(tp_copies_skip(dl(RTLD_NEXT, name), name));
	if (!p || !version)
		return p;
	long o = by_addr(L, (uintptr_t)p);
	if (o >= 0 && tp_elf_open(&e, L->v[o].base, L->v[o].dyn) == 0) {
		void *v = tp_elf_lookup_version(&e, name, version, &ifunc);
		if (v)
			return v;
	}
	/* The version string lies in the caller's string table: the caller
	 * stays loaded while it calls. */
	return not_self(tp_copies_skip(dlvsym(RTLD_NEXT, name, version), name));
}

void *tp_scope_resolve_caller(uint32_t id, const void *caller, tp_dlsym_fn dl, int with_driver)
{
	const char *name = tp_cuda_fns[id].name;
	void *p = NULL;
	int ifunc = 0, refs = 0;
	struct lobjs L = { 0 };
	dl_iterate_phdr(gather, &L);
	long c = -1;
	if (caller && !tp_scope_is_self(caller) && !L.failed)
		c = by_addr(&L, (uintptr_t)caller);
	if (c >= 0)
		p = global_binding(&L, c, name, dl, &refs);
	/* The program's own scope is the global one: steps 0 and 2 cover it.
	 * So is that of an object loaded before traceprof (a library preloaded
	 * before it): such an object's own relocations never reach traceprof,
	 * so its call is a forward (a CUDA interposer calling on through
	 * dlsym(RTLD_NEXT)), and its own definition would call it back
	 * forever (issue 30, item 6).  What it reaches without traceprof is
	 * the next definition after it: step 2. */
	long me = L.failed ? -1 : by_addr(&L, tp_scope_self_lo);
	if (!p && c >= 0 && L.v[c].path[0] && !(me >= 0 && c < me))
		p = scope_lookup(&L, c, name, &ifunc);
	if (!p && !refs) {
		/* A call through a pointer (from dlsym, cuGetProcAddress or a
		 * forward): the global scope after traceprof, any version.  Not
		 * for a reference step 0 looked up: the same search without
		 * its version would bind what glibc refuses.  Another traceprof
		 * copy after this one: the definition after it (issue 30, item
		 * 7). */
		p = not_self(tp_copies_skip(dl(RTLD_NEXT, name), name));
	}
	if (!p && with_driver && tp_cuda_fns[id].lib == TP_CUDA_LIB_DRIVER && !L.failed) {
		/* The runtime dlopens the driver without RTLD_GLOBAL, and reaches
		 * it through cuGetProcAddress: its callers' scopes lack it. */
		long d = by_needed(&L, "libcuda.so.1");
		if (d >= 0)
			p = scope_lookup(&L, d, name, &ifunc);
	}
	if (!p && ifunc)
		tp_debug("%s: an IFUNC definition in the caller's scope is not followed", name);
	lobjs_free(&L);
	return p;
}
