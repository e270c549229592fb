/* Which definition of a CUDA function each caller reaches (issue 16).
 *
 * traceprof's wrappers are found first by every caller, because a preloaded
 * library is in the global scope and a relocation searches the global scope
 * before the caller's own (local) scope.  Without traceprof the caller would
 * have reached the first definition in the global scope, else the one in its
 * local scope: a library dlopen'ed with RTLD_LOCAL (how CPython loads every
 * extension module, ctypes included) holds its runtime there only.  Looking
 * the real function up after traceprof (RTLD_NEXT) sees the global scope
 * only, and two runtimes of different majors (libcudart.so.12 and .so.13, each
 * in its own local scope) define the same names.  So the answer depends on
 * the caller, and is found like this (resolve_caller()):
 *   0. when the caller's object refers to the name (its relocation is what
 *      reached us): the global scope after traceprof, binding only a
 *      definition that the reference's version accepts, as glibc does
 *      (global_binding()): NVIDIA versions every runtime symbol with its
 *      soname (cudaMalloc@@libcudart.so.13), and a caller linked with one
 *      major never binds another major's definition even when that one is
 *      global, while an unversioned one (a preloaded CUDA interposer) is
 *      bound before the caller's own runtime;
 *   1. the caller's own scope: the first definition in the object that
 *      holds the return address and its dependencies, breadth first;
 *   2. for a call with no reference behind it (through a pointer): the
 *      global scope after traceprof (RTLD_NEXT), any version;
 *   3. for driver functions, the libcuda.so.1 the runtime dlopen'ed locally;
 *   4. the first definition ever found (a caller with no CUDA library in its
 *      scope, such as libffi calling through a pointer from dlsym).
 * Steps 0 and 1 are glibc's own order for a library loaded RTLD_LOCAL: its
 * relocations search the global scope, then its local one.
 *
 * What it costs: one process-wide fast pointer per function
 * (tp_cuda_reals[id]) stays the common case.  It is published only while
 * each library (runtime, driver) has at most one defining object in the
 * process, so that every caller would get the same answer, and no dlopen is
 * in flight.  Objects are scanned for definitions at the first resolution
 * and after every dlopen (preload/dl_open.c), by a few marker names per
 * library.  Once a library has two definers (or after a load traceprof could
 * not follow), its pointers stay NULL: each call goes through the wrapper's
 * slow path to a per-call-site cache keyed by (return address, function).
 *
 * Locking: `lock` guards the tables below and is never held across a call
 * into the dynamic linker (which takes its own loader lock, held through the
 * constructors of a loading object; a constructor calling CUDA on the
 * loading thread must not wait for us while we wait for the loader). */
#include "preload/cuda_scope.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf.h"
#include "common/log.h"
#include "preload/copies.h"
#include "preload/dl_hooks.h"

enum { NFAM = 2 }; /* indexed by enum tp_cuda_lib: runtime, driver */

static const char *const markers[NFAM][3] = {
	{ "cudaGetDeviceCount", "cudaMalloc", "cudaLaunchKernel" },
	{ "cuInit", "cuGetProcAddress_v2", "cuLaunchKernel" },
};
static const char *const fam_name[NFAM] = { "CUDA runtime", "CUDA driver" };

#define MAX_DEFINERS 16
#define MAX_SEEN 16384
#define SITE_SLOTS 4096 /* power of two */
#define SITE_PROBE 16
#define MAX_SITE_TABLES 64

struct site {
	/* Release-stored after fn (by site_insert, under lock), acquire-loaded
	 * by site_lookup before it reads fn. */
	_Atomic uintptr_t key;
	void *_Atomic fn;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int inflight;			  /* dlopens, dlcloses and scans under way */
	int unloading;			  /* dlcloses between begin and end */
	struct site *parked;		  /* the call-site table while unloading */
	size_t nseen;			  /* objects looked at: sorted base addresses */
	uintptr_t seen[MAX_SEEN];
	uintptr_t definer[NFAM][MAX_DEFINERS];
	int ndef[NFAM];
	void *first[TP_CUDA_NFUNCS];	  /* the first definition found per function */
	int site_tables;		  /* tables handed out so far */
	struct site sites0[SITE_SLOTS];	  /* the first call-site table */
} S;

/* The call-site table in use: replaced (the old one leaked, readers may
 * still hold it) when the global scope changes.  Release-stored under lock,
 * acquire-loaded by site_lookup. */
static struct site *_Atomic sites = S.sites0;
/* Per library: 1 once it has two definers (written under lock after the
 * fast pointers were withdrawn; read relaxed, a stale 0 only means a
 * publication attempt that publish_locked() refuses under the lock). */
static _Atomic int multi[NFAM];
static _Atomic int degraded;
/* The first scan ran (release after it, acquire before trusting it). */
static _Atomic int scanned;

/* libtraceprof's own address range, set once (pthread_once). */
static uintptr_t self_lo, self_hi;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void range_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t l = UINTPTR_MAX, h = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < l)
			l = a;
		if (a + ph->p_memsz > h)
			h = a + ph->p_memsz;
	}
	*lo = l;
	*hi = h;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t me = (uintptr_t)data, lo, hi;
	range_of(info, &lo, &hi);
	if (me < lo || me >= hi)
		return 0;
	self_lo = lo;
	self_hi = hi;
	return 1;
}

/* A child forked while another thread held the lock would never get it:
 * the child starts with a fresh one (the tables are small, and each update
 * under the lock leaves them usable at every step). */
static void child_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
}

static void init_self(void)
{
	dl_iterate_phdr(find_self, (void *)(uintptr_t)&tp_scope_is_self);
	pthread_atfork(NULL, NULL, child_after_fork);
}

int tp_scope_is_self(const void *addr)
{
	pthread_once(&self_once, init_self);
	return (uintptr_t)addr >= self_lo && (uintptr_t)addr < self_hi;
}

/* ---- call sites ------------------------------------------------------- */

static uintptr_t site_key(const void *caller, uint32_t id)
{
	/* User-space addresses fit in 48 bits: the id goes above them. */
	return ((uintptr_t)caller & ((1ull << 48) - 1)) | (uintptr_t)(id + 1) << 48;
}

static size_t site_hash(uintptr_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (SITE_SLOTS - 1);
}

static void *site_lookup(uintptr_t key)
{
	struct site *t = atomic_load_explicit(&sites, memory_order_acquire);
	if (!t)
		return NULL;
	size_t h = site_hash(key);
	for (int i = 0; i < SITE_PROBE; i++, h = (h + 1) & (SITE_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t[h].key, memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&t[h].fn, memory_order_relaxed);
		if (!k)
			return NULL;
	}
	return NULL;
}

/* Under lock.  A full neighbourhood is left uncached (resolved each time). */
static void site_insert_locked(uintptr_t key, void *fn)
{
	struct site *t = atomic_load_explicit(&sites, memory_order_relaxed);
	if (!t)
		return;
	size_t h = site_hash(key);
	for (int i = 0; i < SITE_PROBE; i++, h = (h + 1) & (SITE_SLOTS - 1)) {
		uintptr_t k = atomic_load_explicit(&t[h].key, memory_order_relaxed);
		if (k == key)
			return;
		if (k)
			continue;
		atomic_store_explicit(&t[h].fn, fn, memory_order_relaxed);
		/* Release: a reader that sees the key sees fn (site_lookup). */
		atomic_store_explicit(&t[h].key, key, memory_order_release);
		return;
	}
}

/* A new, empty call-site table: the global scope changed, so a cached
 * answer that came from it may be stale.  Allocated outside the lock.  Past
 * MAX_SITE_TABLES nothing is cached any more (each slow call resolves). */
static void sites_reset(void)
{
	struct site *t = NULL;
	pthread_mutex_lock(&lock);
	int n = S.site_tables;
	pthread_mutex_unlock(&lock);
	if (n < MAX_SITE_TABLES)
		t = calloc(SITE_SLOTS, sizeof(*t));
	pthread_mutex_lock(&lock);
	S.site_tables++;
	if (S.unloading)
		S.parked = t; /* put in place when the last dlclose ends */
	else
		atomic_store_explicit(&sites, t, memory_order_release);
	pthread_mutex_unlock(&lock);
}

/* ---- the fast pointers ------------------------------------------------ */

static int fast_ok_locked(uint32_t id)
{
	int fam = tp_cuda_fns[id].lib;
	return !S.inflight && !atomic_load_explicit(&degraded, memory_order_relaxed) &&
	       !atomic_load_explicit(&multi[fam], memory_order_relaxed);
}

static void publish_locked(uint32_t id)
{
	void *p = S.first[id];
	if (!p || !fast_ok_locked(id))
		return;
	/* Relaxed, as every other tp_cuda_reals access (cuda_pack.h): the
	 * pointer is all a reader needs, and the lock orders this store after
	 * any withdrawal. */
	atomic_store_explicit(&tp_cuda_reals[id], p, memory_order_relaxed);
}

/* fam < 0: every library. */
static void withdraw_locked(int fam)
{
	for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
		if (fam < 0 || tp_cuda_fns[id].lib == fam)
			atomic_store_explicit(&tp_cuda_reals[id], NULL, memory_order_relaxed);
}

/* Makes room for element n of an array *v of *cap elements (doubling, from
 * `first`).  Returns 0, or -1 when out of memory (the array is unchanged). */
static int grow(void **v, size_t *cap, size_t n, size_t elem, size_t first)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : first;
	void *p = realloc(*v, c * elem);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* ---- scanning loaded objects ------------------------------------------ */

/* What a scan found: objects not seen before that define a library (for
 * the messages, written after the walk). */
struct found {
	unsigned bits; /* bit f: defines library f */
	char name[200];
};

struct scan_ctx {
	struct found *v;
	size_t n, cap;
	int started;  /* the first object was looked at */
	int rebuilt;  /* objects were unloaded since the last scan: all forgotten */
	int new_multi[NFAM]; /* library f got its second definer in this scan */
	int full;     /* out of memory: some definers missed */
};

/* dlpi_subs at the last scan (under lock): a change means objects were
 * unloaded, so an address known before may now belong to another object
 * mapped at the same place (issue 30, item 5). */
static unsigned long long last_subs;

static int seen_locked(uintptr_t base)
{
	size_t lo = 0, hi = S.nseen;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (S.seen[mid] < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < S.nseen && S.seen[lo] == base;
}

static void mark_seen_locked(uintptr_t base)
{
	if (S.nseen == MAX_SEEN || seen_locked(base))
		return;
	size_t i = S.nseen;
	while (i > 0 && S.seen[i - 1] > base) {
		S.seen[i] = S.seen[i - 1];
		i--;
	}
	S.seen[i] = base;
	S.nseen++;
}

/* Bit f set: the object itself defines one of library f's markers.  Reads
 * the object's own symbol table (common/elf.c): no dynamic-linker call,
 * which could run the constructors of an object still being loaded. */
static unsigned defines(const struct dl_phdr_info *info)
{
	struct tp_elf e;
	if (tp_elf_open_phdr(&e, info) < 0)
		return 0;
	unsigned bits = 0;
	for (int f = 0; f < NFAM; f++)
		for (int m = 0; m < 3; m++) {
			int ifunc = 0;
			if (tp_elf_lookup(&e, markers[f][m], &ifunc) || ifunc) {
				bits |= 1u << f;
				break;
			}
		}
	return bits;
}

/* Everything learnt from objects that may be gone: the objects seen, the
 * definers, the first definitions (their addresses may now lie in another
 * object) and the fast pointers made from them.  Under lock. */
static void forget_locked(void)
{
	S.nseen = 0;
	for (int f = 0; f < NFAM; f++) {
		S.ndef[f] = 0;
		atomic_store_explicit(&multi[f], 0, memory_order_relaxed);
	}
	memset(S.first, 0, sizeof(S.first));
	withdraw_locked(-1);
}

static void add_definer_locked(int f, uintptr_t base, struct scan_ctx *c)
{
	for (int i = 0; i < S.ndef[f] && i < MAX_DEFINERS; i++)
		if (S.definer[f][i] == base)
			return;
	if (S.ndef[f] < MAX_DEFINERS)
		S.definer[f][S.ndef[f]] = base;
	S.ndef[f]++;
	if (S.ndef[f] == 2 && !atomic_load_explicit(&multi[f], memory_order_relaxed)) {
		withdraw_locked(f);
		atomic_store_explicit(&multi[f], 1, memory_order_relaxed);
		c->new_multi[f] = 1;
	}
}

/* dl_iterate_phdr callback: runs under the loader's list lock, so no object
 * goes away meanwhile and no other thread's walk runs; takes ours inside it
 * (never the other way round).  The whole bookkeeping happens here, so that
 * two threads' scans cannot interleave. */
static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan_ctx *c = data;
	if (!c->started) {
		c->started = 1;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
			pthread_mutex_lock(&lock);
			if (info->dlpi_subs != last_subs) {
				last_subs = info->dlpi_subs;
				forget_locked();
				c->rebuilt = 1;
			}
			pthread_mutex_unlock(&lock);
		}
	}
	uintptr_t lo, hi;
	range_of(info, &lo, &hi);
	if (lo <= self_lo && self_lo < hi)
		return 0;
	pthread_mutex_lock(&lock);
	int old = seen_locked(info->dlpi_addr);
	mark_seen_locked(info->dlpi_addr);
	pthread_mutex_unlock(&lock);
	if (old)
		return 0;
	unsigned bits = defines(info);
	/* Another traceprof copy's wrappers are no runtime (issue 30, item 7). */
	if (!bits || tp_copies_is_copy(info))
		return 0;
	pthread_mutex_lock(&lock);
	for (int f = 0; f < NFAM; f++)
		if (bits & (1u << f))
			add_definer_locked(f, info->dlpi_addr, c);
	pthread_mutex_unlock(&lock);
	if (grow((void **)&c->v, &c->cap, c->n, sizeof(*c->v), 8) < 0) {
		c->full = 1;
		return 0;
	}
	struct found *f = &c->v[c->n++];
	f->bits = bits;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "the program";
	size_t len = strlen(name);
	if (len >= sizeof(f->name))
		len = sizeof(f->name) - 1;
	memcpy(f->name, name, len);
	f->name[len] = 0;
	return 0;
}

/* Looks at every object not seen before, and at every object again when
 * some were unloaded since the last scan.  The fast pointers stay
 * withdrawn meanwhile (a scan counts as a load in flight); the caller
 * publishes them again (tp_scope_load_end, tp_scope_unload_end, or
 * tp_scope_resolve on the next call).  Called without lock. */
static void scan(void)
{
	int saved = errno;
	struct scan_ctx c = { 0 };
	pthread_once(&self_once, init_self);
	pthread_mutex_lock(&lock);
	S.inflight++;
	pthread_mutex_unlock(&lock);
	dl_iterate_phdr(collect, &c);
	for (size_t i = 0; i < c.n; i++)
		for (int f = 0; f < NFAM; f++)
			if (c.v[i].bits & (1u << f))
				tp_debug("%s defined by %s", fam_name[f], c.v[i].name);
	for (int f = 0; f < NFAM; f++)
		if (c.new_multi[f])
			tp_info("two %s libraries in one process: each call goes to the one its "
				"caller's scope holds", fam_name[f]);
	free(c.v);
	if (c.full)
		tp_scope_degrade("out of memory scanning loaded objects");
	if (c.rebuilt)
		sites_reset();
	pthread_mutex_lock(&lock);
	S.inflight--;
	pthread_mutex_unlock(&lock);
	/* Release: a reader that sees it sees the definers recorded above. */
	atomic_store_explicit(&scanned, 1, memory_order_release);
	errno = saved;
}

/* The definition of function id in an object that defines its library now
 * (step 4 once the first definitions were forgotten): looked up inside a
 * dl_iterate_phdr walk, so that the object cannot be unloaded meanwhile. */
struct definer_ctx {
	uint32_t id;
	void *p;
};

static int definer_def(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct definer_ctx *d = data;
	int fam = tp_cuda_fns[d->id].lib, is = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < S.ndef[fam] && i < MAX_DEFINERS; i++)
		if (S.definer[fam][i] == info->dlpi_addr)
			is = 1;
	pthread_mutex_unlock(&lock);
	struct tp_elf e;
	int ifunc = 0;
	if (!is || tp_elf_open_phdr(&e, info) < 0)
		return 0;
	void *p = tp_elf_lookup(&e, tp_cuda_fns[d->id].name, &ifunc);
	if (!p || tp_scope_is_self(p))
		return 0;
	d->p = p;
	return 1;
}

/* ---- resolution ------------------------------------------------------- */

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
	if (grow((void **)&L->v, &L->cap, L->n, sizeof(*L->v), 64) < 0) {
		L->failed = 1;
		return 1;
	}
	struct lobj *o = &L->v[L->n];
	struct tp_elf e;
	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	range_of(info, &o->lo, &o->hi);
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
	int other, ifunc = 0;
	*refs = 0;
	if (tp_elf_open(&e, L->v[c].base, L->v[c].dyn) < 0 || !tp_elf_reference(&e, name, &version))
		return NULL;
	*refs = 1;
	/* Another traceprof copy after this one answers with what comes after
	 * it (by name: a copy's own wrappers carry no version). */
	void *p = not_self(tp_copies_skip(dl(RTLD_NEXT, name), name, &other));
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
	return not_self(tp_copies_skip(dlvsym(RTLD_NEXT, name, version), name, &other));
}

/* Steps 0-3 of the header comment.  Called without lock, inside
 * tp_dlerr_begin/end. */
static void *resolve_caller(uint32_t id, const void *caller, tp_dlsym_fn dl, int with_driver)
{
	const char *name = tp_cuda_fns[id].name;
	void *p = NULL;
	int ifunc = 0, refs = 0;
	struct lobjs L = { 0 };
	dl_iterate_phdr(gather, &L);
	long c = caller && !tp_scope_is_self(caller) && !L.failed ? by_addr(&L, (uintptr_t)caller) : -1;
	if (c >= 0)
		p = global_binding(&L, c, name, dl, &refs);
	/* The program's own scope is the global one: steps 0 and 2 cover it.
	 * So is that of an object loaded before traceprof (a library preloaded
	 * before it): such an object's own relocations never reach traceprof,
	 * so its call is a forward (a CUDA interposer calling on through
	 * dlsym(RTLD_NEXT)), and its own definition would call it back
	 * forever (issue 30, item 6).  What it reaches without traceprof is
	 * the next definition after it: step 2. */
	long me = L.failed ? -1 : by_addr(&L, self_lo);
	if (!p && c >= 0 && L.v[c].path[0] && !(me >= 0 && c < me))
		p = scope_lookup(&L, c, name, &ifunc);
	if (!p && !refs) {
		/* A call through a pointer (from dlsym, cuGetProcAddress or a
		 * forward): the global scope after traceprof, any version.  Not
		 * for a reference step 0 looked up: the same search without
		 * its version would bind what glibc refuses.  Another traceprof
		 * copy after this one: the definition after it (issue 30, item
		 * 7). */
		int other;
		p = not_self(tp_copies_skip(dl(RTLD_NEXT, name), name, &other));
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

/* dl_iterate_phdr callback: whether the object holding c->a names
 * libtraceprof.so in its DT_NEEDED (the program linked with -ltraceprof). */
struct links_ctx {
	uintptr_t a;
	int links;
};

static int links_self(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct links_ctx *c = data;
	uintptr_t lo, hi;
	struct tp_elf e;
	range_of(info, &lo, &hi);
	if (c->a < lo || c->a >= hi)
		return 0;
	if (tp_elf_open_phdr(&e, info) < 0)
		return 1;
	const char *need;
	for (int k = 0; (need = tp_elf_needed(&e, k)); k++)
		if (!strncmp(need, "libtraceprof.so", 15))
			c->links = 1;
	return 1;
}

/* One line per function that nothing defines; for a caller linked with
 * libtraceprof while no object defines the library at all, one line for
 * the process that names the likely cause: a link with -Wl,--as-needed
 * drops libcudart when -ltraceprof comes first, since traceprof's wrappers
 * define its names.  traceprof cannot tell which runtime the program was
 * built for, so it loads none: the call fails as it would with the runtime
 * missing. */
static void note_missing(uint32_t id, const void *caller)
{
	static _Atomic uint64_t said[(TP_CUDA_NFUNCS + 63) / 64];
	/* Once per process; orders nothing (a relaxed exchange, no partner). */
	static _Atomic int said_link;
	uint64_t bit = 1ull << (id % 64);
	int fam = tp_cuda_fns[id].lib;
	pthread_mutex_lock(&lock);
	int none = S.ndef[fam] == 0;
	pthread_mutex_unlock(&lock);
	if (none) {
		struct links_ctx c = { (uintptr_t)caller, 0 };
		dl_iterate_phdr(links_self, &c);
		if (c.links) {
			if (!atomic_exchange_explicit(&said_link, 1, memory_order_relaxed))
				tp_warn("%s: no %s is loaded, and the caller is linked with libtraceprof.so: "
					"linked with -Wl,--as-needed and -ltraceprof before %s, the linker "
					"drops %s; put -Wl,--no-as-needed before -ltraceprof %s, or "
					"preload traceprof (LD_PRELOAD) instead of linking it; CUDA calls "
					"return an error without reaching CUDA",
					tp_cuda_fns[id].name, fam_name[fam],
					fam ? "-lcuda" : "-lcudart", fam ? "libcuda" : "libcudart",
					fam ? "-lcuda" : "-lcudart");
			return;
		}
	}
	if (atomic_fetch_or_explicit(&said[id / 64], bit, memory_order_relaxed) & bit)
		return;
	tp_warn("%s: no definition in the caller's scope, the global scope or a loaded "
		"libcuda.so.1; the call returns an error without reaching CUDA",
		tp_cuda_fns[id].name);
}

void *tp_scope_resolve(uint32_t id, const void *caller)
{
	if (id >= TP_CUDA_NFUNCS)
		return NULL;
	int saved = errno;
	if (!atomic_load_explicit(&scanned, memory_order_acquire))
		scan();
	uintptr_t key = site_key(caller, id);
	void *p = site_lookup(key);
	if (p) {
		errno = saved;
		return p;
	}
	tp_dlsym_fn dl = (tp_dlsym_fn)tp_cuda_dlsym_resolve();
	if (dl) {
		tp_dlerr_begin();
		p = resolve_caller(id, caller, dl, 1);
		tp_dlerr_end();
	}
	pthread_mutex_lock(&lock);
	int none = !p && !S.first[id];
	pthread_mutex_unlock(&lock);
	if (none) {
		/* The first definitions were forgotten at an unload: a caller
		 * with no CUDA library in its scope gets what a definer loaded
		 * now holds. */
		struct definer_ctx d = { id, NULL };
		dl_iterate_phdr(definer_def, &d);
		p = d.p;
	}
	pthread_mutex_lock(&lock);
	if (!p)
		p = S.first[id];
	else if (!S.first[id])
		S.first[id] = p;
	if (p) {
		site_insert_locked(key, p);
		publish_locked(id);
	}
	pthread_mutex_unlock(&lock);
	/* The line speaks of the program's call; traceprof's own look-ups
	 * (caller NULL: naming kernels, cuGetProcAddress bookkeeping) do
	 * without the function and say nothing (issue 32). */
	if (!p && caller)
		note_missing(id, caller);
	errno = saved;
	return p;
}

void *tp_scope_lookup(uint32_t id, const void *caller)
{
	if (id >= TP_CUDA_NFUNCS)
		return NULL;
	int saved = errno;
	void *p = NULL;
	tp_dlsym_fn dl = (tp_dlsym_fn)tp_cuda_dlsym_resolve();
	if (dl) {
		tp_dlerr_begin();
		p = resolve_caller(id, caller, dl, 0);
		tp_dlerr_end();
	}
	errno = saved;
	return p;
}

void *tp_scope_publish(uint32_t id, void *p)
{
	if (id >= TP_CUDA_NFUNCS || !p)
		return NULL;
	pthread_mutex_lock(&lock);
	if (!S.first[id])
		S.first[id] = p;
	void *first = S.first[id];
	publish_locked(id);
	pthread_mutex_unlock(&lock);
	return first;
}

int tp_scope_single(uint32_t id)
{
	int fam = tp_cuda_fns[id].lib;
	return !atomic_load_explicit(&degraded, memory_order_relaxed) &&
	       !atomic_load_explicit(&multi[fam], memory_order_relaxed);
}

/* ---- loads ------------------------------------------------------------ */

void tp_scope_load_begin(void)
{
	pthread_mutex_lock(&lock);
	S.inflight++;
	withdraw_locked(-1);
	pthread_mutex_unlock(&lock);
}

void tp_scope_load_end(int global)
{
	scan();
	if (global)
		sites_reset();
	pthread_mutex_lock(&lock);
	S.inflight--;
	if (!S.inflight)
		for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
			publish_locked(id);
	pthread_mutex_unlock(&lock);
}

void tp_scope_unload_begin(void)
{
	pthread_mutex_lock(&lock);
	S.inflight++;
	if (!S.unloading++) {
		/* No call site is answered from the table while objects go away:
		 * one in an unloaded object may come back at the same address in
		 * a new object (a dlopen on another thread) before the scan after
		 * the dlclose has replaced the table. */
		S.parked = atomic_load_explicit(&sites, memory_order_relaxed);
		atomic_store_explicit(&sites, NULL, memory_order_release);
	}
	withdraw_locked(-1);
	pthread_mutex_unlock(&lock);
}

void tp_scope_unload_end(void)
{
	scan();
	pthread_mutex_lock(&lock);
	S.inflight--;
	if (!--S.unloading)
		atomic_store_explicit(&sites, S.parked, memory_order_release);
	if (!S.inflight)
		for (uint32_t id = 0; id < TP_CUDA_NFUNCS; id++)
			publish_locked(id);
	pthread_mutex_unlock(&lock);
}

void tp_scope_degrade(const char *why)
{
	pthread_mutex_lock(&lock);
	int was = atomic_exchange_explicit(&degraded, 1, memory_order_relaxed);
	withdraw_locked(-1);
	pthread_mutex_unlock(&lock);
	if (!was)
		tp_info("%s: every CUDA call is resolved per caller from now on", why);
}
