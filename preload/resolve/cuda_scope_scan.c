/* Which loaded objects define each CUDA library (preload/resolve/cuda_scope.h):
 * looked at once each, by a few marker names read from the object's own
 * symbol table, at the first resolution and after every dlopen and
 * dlclose.  See preload/resolve/cuda_scope_int.h. */
#include "preload/resolve/cuda_scope_int.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf.h"
#include "common/log.h"
#include "preload/resolve/copies.h"

static const char *const markers[TP_SCOPE_NFAM][3] = {
	{ "cudaGetDeviceCount", "cudaMalloc", "cudaLaunchKernel" },
	{ "cuInit", "cuGetProcAddress_v2", "cuLaunchKernel" },
};

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
	int new_multi[TP_SCOPE_NFAM]; /* library f got its second definer in this scan */
	int full;     /* out of memory: some definers missed */
};

/* dlpi_subs at the last scan (under lock): a change means objects were
 * unloaded, so an address known before may now belong to another object
 * mapped at the same place (issue 30, item 5). */
static unsigned long long last_subs;

static int seen_locked(uintptr_t base)
{
	size_t lo = 0, hi = tp_scope_st.nseen;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tp_scope_st.seen[mid] < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < tp_scope_st.nseen && tp_scope_st.seen[lo] == base;
}

static void mark_seen_locked(uintptr_t base)
{
	if (tp_scope_st.nseen == TP_SCOPE_MAX_SEEN || seen_locked(base))
		return;
	size_t i = tp_scope_st.nseen;
	while (i > 0 && tp_scope_st.seen[i - 1] > base) {
		tp_scope_st.seen[i] = tp_scope_st.seen[i - 1];
		i--;
	}
	tp_scope_st.seen[i] = base;
	tp_scope_st.nseen++;
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
	for (int f = 0; f < TP_SCOPE_NFAM; f++)
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
	tp_scope_st.nseen = 0;
	for (int f = 0; f < TP_SCOPE_NFAM; f++) {
		tp_scope_st.ndef[f] = 0;
		atomic_store_explicit(&tp_scope_multi[f], 0, memory_order_relaxed);
	}
	memset(tp_scope_st.first, 0, sizeof(tp_scope_st.first));
	tp_scope_withdraw_locked(-1);
}

static void add_definer_locked(int f, uintptr_t base, struct scan_ctx *c)
{
	for (int i = 0; i < tp_scope_st.ndef[f] && i < TP_SCOPE_MAX_DEFINERS; i++)
		if (tp_scope_st.definer[f][i] == base)
			return;
	if (tp_scope_st.ndef[f] < TP_SCOPE_MAX_DEFINERS)
		tp_scope_st.definer[f][tp_scope_st.ndef[f]] = base;
	tp_scope_st.ndef[f]++;
	if (tp_scope_st.ndef[f] == 2 &&
	    !atomic_load_explicit(&tp_scope_multi[f], memory_order_relaxed)) {
		tp_scope_withdraw_locked(f);
		atomic_store_explicit(&tp_scope_multi[f], 1, memory_order_relaxed);
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
			pthread_mutex_lock(&tp_scope_lock);
			if (info->dlpi_subs != last_subs) {
				last_subs = info->dlpi_subs;
				forget_locked();
				c->rebuilt = 1;
			}
			pthread_mutex_unlock(&tp_scope_lock);
		}
	}
	uintptr_t lo, hi;
	tp_scope_range_of(info, &lo, &hi);
	if (lo <= tp_scope_self_lo && tp_scope_self_lo < hi)
		return 0;
	pthread_mutex_lock(&tp_scope_lock);
	int old = seen_locked(info->dlpi_addr);
	mark_seen_locked(info->dlpi_addr);
	pthread_mutex_unlock(&tp_scope_lock);
	if (old)
		return 0;
	unsigned bits = defines(info);
	/* Another traceprof copy's wrappers are no runtime (issue 30, item 7). */
	if (!bits || tp_copies_is_copy(info))
		return 0;
	pthread_mutex_lock(&tp_scope_lock);
	for (int f = 0; f < TP_SCOPE_NFAM; f++)
		if (bits & (1u << f))
			add_definer_locked(f, info->dlpi_addr, c);
	pthread_mutex_unlock(&tp_scope_lock);
	if (tp_scope_grow((void **)&c->v, &c->cap, c->n, sizeof(*c->v), 8) < 0) {
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
void tp_scope_scan(void)
{
	int saved = errno;
	struct scan_ctx c = { 0 };
	tp_scope_self_init();
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.inflight++;
	pthread_mutex_unlock(&tp_scope_lock);
	dl_iterate_phdr(collect, &c);
	for (size_t i = 0; i < c.n; i++)
		for (int f = 0; f < TP_SCOPE_NFAM; f++)
			if (c.v[i].bits & (1u << f))
				tp_debug("%s defined by %s", tp_scope_fam_name[f], c.v[i].name);
	for (int f = 0; f < TP_SCOPE_NFAM; f++)
		if (c.new_multi[f])
			tp_info("two %s libraries in one process: each call goes to the one its "
				"caller's scope holds", tp_scope_fam_name[f]);
	free(c.v);
	if (c.full)
		tp_scope_degrade("out of memory scanning loaded objects");
	if (c.rebuilt)
		tp_scope_sites_reset();
	pthread_mutex_lock(&tp_scope_lock);
	tp_scope_st.inflight--;
	pthread_mutex_unlock(&tp_scope_lock);
	/* Release: a reader that sees it sees the definers recorded above. */
	atomic_store_explicit(&tp_scope_scanned, 1, memory_order_release);
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
	pthread_mutex_lock(&tp_scope_lock);
	for (int i = 0; i < tp_scope_st.ndef[fam] && i < TP_SCOPE_MAX_DEFINERS; i++)
		if (tp_scope_st.definer[fam][i] == info->dlpi_addr)
			is = 1;
	pthread_mutex_unlock(&tp_scope_lock);
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

void *tp_scope_definer_def(uint32_t id)
{
	struct definer_ctx d = { id, NULL };
	dl_iterate_phdr(definer_def, &d);
	return d.p;
}
