/* dlopen(), interposed: traceprof learns of every object a program loads, so
 * that a CUDA library arriving in a local scope is seen before any of its
 * code can call CUDA (preload/resolve/cuda_scope.c).
 *
 * What dlopen does depends on who calls it: a name without a slash is
 * searched along the caller's DT_RPATH chain and DT_RUNPATH (cuDNN dlopens
 * its sub-libraries by name, found through its RUNPATH $ORIGIN), a `$ORIGIN`
 * is the caller's folder, and the object goes into the caller's namespace.
 * glibc reads the caller from dlopen's return address, so a hook that calls
 * the real dlopen from C would make traceprof the caller.  Hence two paths,
 * chosen by the assembly entry point (dl_open_x86_64.S) through tp_dl_open_plan:
 *   - the C path (tp_dl_open_c), for every dlopen whose result cannot depend
 *     on that: a NULL or slash-holding name, or a bare name that the caller's
 *     own search folders (from dlinfo(RTLD_DI_SERINFO), those it has and
 *     traceprof does not) do not hold.  A name they do hold is opened by that
 *     full path, which is what glibc would have found for the caller.  Here
 *     traceprof withdraws the fast CUDA pointers before the real dlopen and
 *     scans the new objects after it;
 *   - a tail jump to the real dlopen with the caller's frame untouched, for
 *     the rest: names with `$` substitutions, callers in another namespace
 *     (dlmopen), and a bare name that only traceprof's own search path (the
 *     program's DT_RPATH, which a RUNPATH caller does not search) holds.
 *     traceprof cannot see the end of such a load, so it resolves every CUDA
 *     call per caller from then on (tp_scope_degrade).
 * errno and the program's dlerror() text are kept as the real dlopen left
 * them. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dl.h"
#include "common/elf.h"
#include "common/log.h"
#include "preload/resolve/cuda_scope.h"
#include "preload/resolve/dl_hooks.h"
#include "preload/export.h"
#include "preload/resolve/nvtx_loader.h"

tp_dlopen_fn tp_dl_real_dlopen(void)
{
	/* Written once; racing writers store the same address. */
	static _Atomic(tp_dlopen_fn) real;
	tp_dlopen_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (f)
		return f;
	f = (tp_dlopen_fn)tp_dl_glibc("dlopen");
	atomic_store_explicit(&real, f, memory_order_relaxed);
	return f;
}

/* A first read of a code page, left out of TSan's instrumentation (as
 * preload/resolve/nvtx_loader.c's own: TSan's shadow of another library's code can
 * fault under a small RLIMIT_FSIZE). */
__attribute__((no_sanitize("thread")))
static void dl_touch(const void *code)
{
	(void)*(const volatile char *)code;
}

/* Touches the entry point in dl_open_x86_64.S, which calls this file: a
 * loop of two files kept on purpose (scripts/check-layers allows it), the
 * one hook written in two languages. */
void tp_dl_open_warm(void)
{
	(void)tp_dl_real_dlopen();
	dl_touch((const void *)(uintptr_t)dlopen);
	dl_touch((const void *)(uintptr_t)tp_dl_open_plan);
}

/* The object that holds `caller`, else the program (glibc's choice for an
 * address in no object). */
static struct link_map *caller_map(const void *caller)
{
	Dl_info info;
	struct link_map *lm = NULL;
	if (caller && dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm)
		return lm;
	return _r_debug.r_map;
}

static int in_base_namespace(const struct link_map *lm)
{
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next)
		if (l == lm)
			return 1;
	return 0;
}

/* The folders glibc searches for a bare name dlopen'ed by `lm`, in order
 * (malloc'ed; NULL when they cannot be read). */
static Dl_serinfo *search_path(struct link_map *lm)
{
	Dl_serinfo size;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size))
		return NULL;
	Dl_serinfo *si = malloc(size.dls_size);
	if (!si)
		return NULL;
	si->dls_size = size.dls_size;
	si->dls_cnt = size.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFO, si)) {
		free(si);
		return NULL;
	}
	return si;
}

enum candidate { NONE, OTHER_CLASS, TAKEN };

/* What glibc's search makes of folder/name: no file (or unreadable: glibc
 * goes on), an ELF object of another class or machine (glibc goes on), or
 * anything else, which glibc takes (loading it, or failing on it). */
static enum candidate candidate(const char *folder, const char *name, char *path, size_t cap)
{
	size_t a = strlen(folder), b = strlen(name);
	if (a + 1 + b + 1 > cap)
		return NONE;
	memcpy(path, folder, a);
	path[a] = '/';
	memcpy(path + a + 1, name, b + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NONE;
	ElfW(Ehdr) eh;
	ssize_t n = read(fd, &eh, sizeof(eh));
	close(fd);
	if (n == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
#if defined(__x86_64__)
	     eh.e_machine != EM_X86_64
#elif defined(__aarch64__)
	     eh.e_machine != EM_AARCH64
#else
	     0
#endif
	     ))
		return OTHER_CLASS;
	return TAKEN;
}

static int listed(const Dl_serinfo *si, size_t n, const char *folder)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(si->dls_serpath[i].dls_name, folder))
			return 1;
	return 0;
}

enum plan { PLAN_AS_IS, PLAN_PATH, PLAN_JUMP };

/* For a bare name: PLAN_PATH with the full path glibc would find through
 * the caller's own folders, PLAN_AS_IS when traceprof's search finds what
 * the caller's would, PLAN_JUMP when only a tail jump is exact. */
static enum plan plan_bare(const char *name, struct link_map *caller, char *path, size_t cap)
{
	static _Atomic(struct link_map *) self;
	struct link_map *me = atomic_load_explicit(&self, memory_order_relaxed);
	if (!me) {
		Dl_info info;
		if (!dladdr1((void *)(uintptr_t)&tp_dl_real_dlopen, &info, (void **)&me,
			     RTLD_DL_LINKMAP) || !me)
			return PLAN_AS_IS;
		atomic_store_explicit(&self, me, memory_order_relaxed);
	}
	if (caller == me)
		return PLAN_AS_IS;
	Dl_serinfo *theirs = search_path(caller), *ours = search_path(me);
	enum plan plan = PLAN_AS_IS;
	if (!theirs || !ours) {
		plan = theirs || ours ? PLAN_JUMP : PLAN_AS_IS;
		goto out;
	}
	/* The common tail (LD_LIBRARY_PATH, the system folders...) is searched
	 * the same way by both; what precedes it is the caller's own (its RPATH
	 * chain; LD_LIBRARY_PATH then its RUNPATH) or traceprof's (the
	 * program's RPATH, which a RUNPATH caller does not search). */
	size_t nt = theirs->dls_cnt, no = ours->dls_cnt;
	while (nt && no && !strcmp(theirs->dls_serpath[nt - 1].dls_name,
				   ours->dls_serpath[no - 1].dls_name)) {
		nt--;
		no--;
	}
	for (size_t i = 0; i < nt; i++)
		if (candidate(theirs->dls_serpath[i].dls_name, name, path, cap) == TAKEN) {
			plan = PLAN_PATH;
			goto out;
		}
	for (size_t i = 0; i < no; i++) {
		const char *f = ours->dls_serpath[i].dls_name;
		if (!listed(theirs, nt, f) && candidate(f, name, path, cap) == TAKEN) {
			plan = PLAN_JUMP;
			goto out;
		}
	}
out:
	free(theirs);
	free(ours);
	return plan;
}

/* Already loaded under that name (its path or its soname): glibc matches
 * loaded objects by name before it searches, whoever calls.  Read from the
 * link maps, not with a dlopen(RTLD_NOLOAD), which would run the
 * constructors of an object still being loaded. */
static int loaded(const char *name)
{
	for (struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		struct tp_elf e;
		const char *so;
		if (l->l_name && !strcmp(l->l_name, name))
			return 1;
		if (tp_elf_open(&e, l->l_addr, l->l_ld) == 0 && (so = tp_elf_soname(&e)) &&
		    !strcmp(so, name))
			return 1;
	}
	return 0;
}

static enum plan plan_for(const char *file, const void *caller, char *path, size_t cap)
{
	tp_dlopen_fn real = tp_dl_real_dlopen();
	if (!file || !real)
		return PLAN_AS_IS;
	if (strchr(file, '$'))
		return PLAN_JUMP;
	struct link_map *lm = caller_map(caller);
	if (!in_base_namespace(lm))
		return PLAN_JUMP;
	if (strchr(file, '/') || loaded(file))
		return PLAN_AS_IS;
	return plan_bare(file, lm, path, cap);
}

/* Called by the entry point with the caller's arguments and return address:
 * where to jump, the real dlopen or tp_dl_open_c. */
void *tp_dl_open_c(const char *file, int mode);

void *tp_dl_open_plan(const char *file, int mode, const void *caller)
{
	tp_dlopen_fn real = tp_dl_real_dlopen();
	/* This library again (NVTX loading its injection): nothing to plan. */
	if (real && tp_nvtx_loader_open(file, mode))
		return (void *)real;
	int saved = errno;
	char path[PATH_MAX];
	tp_dlerr_begin();
	enum plan p = plan_for(file, caller, path, sizeof(path));
	tp_dlerr_end();
	errno = saved;
	if (p != PLAN_JUMP)
		return (void *)tp_dl_open_c;
	tp_scope_degrade(file ? file : "dlopen");
	return (void *)real;
}

void *tp_dl_open_c(const char *file, int mode)
{
	const void *caller = __builtin_return_address(0);
	tp_dlopen_fn real = tp_dl_real_dlopen();
	if (!real)
		return NULL;
#if !defined(__x86_64__)
	if (tp_nvtx_loader_open(file, mode))
		return real(file, mode);
#endif
	int saved = errno;
	char path[PATH_MAX];
	tp_dlerr_begin();
	enum plan p = plan_for(file, caller, path, sizeof(path));
	tp_dlerr_end();
	tp_scope_load_begin();
	errno = saved;
	void *h = real(p == PLAN_PATH ? path : file, mode);
	saved = errno;
	if (h)
		tp_dlerr_begin();
	tp_scope_load_end(h && (mode & RTLD_GLOBAL));
	if (h)
		tp_dlerr_end();
	errno = saved;
	return h;
}

/* dlclose(), interposed: what traceprof learnt from the objects it unloads
 * must not outlive them (preload/resolve/cuda_scope.c).  What dlclose does does not
 * depend on its caller, so a C forwarder is exact. */
typedef int (*dlclose_fn)(void *);

static dlclose_fn real_dlclose(void)
{
	/* Written once; racing writers store the same address. */
	static _Atomic(dlclose_fn) real;
	dlclose_fn f = atomic_load_explicit(&real, memory_order_relaxed);
	if (f)
		return f;
	f = (dlclose_fn)tp_dl_glibc("dlclose");
	atomic_store_explicit(&real, f, memory_order_relaxed);
	return f;
}

TP_EXPORT int dlclose(void *handle);
TP_EXPORT int dlclose(void *handle)
{
	dlclose_fn real = real_dlclose();
	if (!real)
		return -1;
	tp_scope_unload_begin();
	int r = real(handle);
	int saved = errno;
	tp_dlerr_begin();
	tp_scope_unload_end();
	tp_dlerr_end();
	errno = saved;
	return r;
}

/* x86-64: the entry point is assembly, preload/resolve/dl_open_x86_64.S. */
#if !defined(__x86_64__)
/* Other architectures: a C forwarder, so the real dlopen sees traceprof as
 * its caller (the caller's RUNPATH is emulated by the plan; `$ORIGIN` and
 * namespaces are not: a known limitation, lifted by writing the entry point
 * for the architecture). */
TP_EXPORT void *dlopen(const char *file, int mode);
TP_EXPORT void *dlopen(const char *file, int mode)
{
	return tp_dl_open_c(file, mode);
}
#endif
