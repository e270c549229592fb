/* What the files of preload/resolve/cuda_scope.h's resolution share with one
 * another, and nothing else includes.  Who does what (each file calls only
 * the ones listed above it):
 *
 *   preload/resolve/cuda_scope_state.c   the tables and their lock, libtraceprof's
 *                                own address range, the fast pointers
 *                                (published, withdrawn, degraded)
 *   preload/resolve/cuda_scope_sites.c   the call-site cache: (return address,
 *                                function) -> the definition it reaches
 *   preload/resolve/cuda_scope_scan.c    scanning loaded objects for the objects
 *                                that define each CUDA library
 *   preload/resolve/cuda_scope_caller.c  what one caller reaches (steps 0-3 of
 *                                preload/resolve/cuda_scope.c's comment)
 *   preload/resolve/cuda_scope.c         the public calls: resolve, look up, and
 *                                the dlopen/dlclose halves
 *
 * Locking: tp_scope_lock guards tp_scope_st and is never held across a call
 * into the dynamic linker (see preload/resolve/cuda_scope.c). */
#ifndef TP_PRELOAD_RESOLVE_CUDA_SCOPE_INT_H
#define TP_PRELOAD_RESOLVE_CUDA_SCOPE_INT_H

#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/cuda_pack.h"
#include "preload/resolve/cuda_scope.h"

enum { TP_SCOPE_NFAM = 2 }; /* indexed by enum tp_cuda_lib: runtime, driver */

#define TP_SCOPE_MAX_DEFINERS 16
#define TP_SCOPE_MAX_SEEN 16384
#define TP_SCOPE_SITE_SLOTS 4096 /* power of two */

/* "CUDA runtime", "CUDA driver": for the messages. */
extern const char *const tp_scope_fam_name[TP_SCOPE_NFAM];

struct tp_scope_site {
	/* Release-stored after fn (by tp_scope_site_insert_locked, under
	 * lock), acquire-loaded by tp_scope_site_lookup before it reads fn. */
	_Atomic uintptr_t key;
	void *_Atomic fn;
};

extern pthread_mutex_t tp_scope_lock;
struct tp_scope_state {
	int inflight;			  /* dlopens, dlcloses and scans under way */
	int unloading;			  /* dlcloses between begin and end */
	struct tp_scope_site *parked;	  /* the call-site table while unloading */
	size_t nseen;			  /* objects looked at: sorted base addresses */
	uintptr_t seen[TP_SCOPE_MAX_SEEN];
	uintptr_t definer[TP_SCOPE_NFAM][TP_SCOPE_MAX_DEFINERS];
	int ndef[TP_SCOPE_NFAM];
	void *first[TP_CUDA_NFUNCS];	  /* the first definition found per function */
	int site_tables;		  /* tables handed out so far */
	struct tp_scope_site sites0[TP_SCOPE_SITE_SLOTS]; /* the first call-site table */
};
extern struct tp_scope_state tp_scope_st;

/* The call-site table in use: replaced (the old one leaked, readers may
 * still hold it) when the global scope changes; NULL while objects are
 * unloaded.  Release-stored under lock, acquire-loaded by
 * tp_scope_site_lookup. */
extern struct tp_scope_site *_Atomic tp_scope_sites;
/* Per library: 1 once it has two definers (written under lock after the
 * fast pointers were withdrawn; read relaxed, a stale 0 only means a
 * publication attempt that tp_scope_publish_locked() refuses under the
 * lock). */
extern _Atomic int tp_scope_multi[TP_SCOPE_NFAM];
/* Set once by tp_scope_degrade() (relaxed: read as tp_scope_multi is). */
extern _Atomic int tp_scope_degraded;
/* The first scan ran (release after it, acquire before trusting it). */
extern _Atomic int tp_scope_scanned;

/* ---- cuda_scope_state.c ---- */

/* libtraceprof's own address range, set once by tp_scope_self_init(). */
extern uintptr_t tp_scope_self_lo, tp_scope_self_hi;
void tp_scope_self_init(void);

/* The lowest and highest address of an object's PT_LOAD segments. */
void tp_scope_range_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi);

/* Under lock: the fast pointer of function id set to its first definition
 * when that is safe; fam's (fam < 0: every library's) cleared. */
void tp_scope_publish_locked(uint32_t id);
void tp_scope_withdraw_locked(int fam);

/* Makes room for element n of an array *v of *cap elements (doubling, from
 * `first`).  Returns 0, or -1 when out of memory (the array is unchanged). */
int tp_scope_grow(void **v, size_t *cap, size_t n, size_t elem, size_t first);

/* ---- cuda_scope_sites.c ---- */

uintptr_t tp_scope_site_key(const void *caller, uint32_t id);
/* The cached answer for key, or NULL.  Lock-free. */
void *tp_scope_site_lookup(uintptr_t key);
/* Under lock.  A full neighbourhood is left uncached (resolved each time). */
void tp_scope_site_insert_locked(uintptr_t key, void *fn);
/* A new, empty call-site table (called without lock). */
void tp_scope_sites_reset(void);

/* ---- cuda_scope_scan.c ---- */

/* Looks at every object not seen before (all again after an unload) and
 * records the definers of each library.  Called without lock. */
void tp_scope_scan(void);

/* Function id's definition in an object that defines its library now, or
 * NULL. */
void *tp_scope_definer_def(uint32_t id);

/* ---- cuda_scope_caller.c ---- */

/* Steps 0-3 of preload/resolve/cuda_scope.c's comment for function id and caller
 * (with_driver: step 3 too).  Called without lock, inside
 * tp_dlerr_begin/end. */
void *tp_scope_resolve_caller(uint32_t id, const void *caller, tp_dlsym_fn dl, int with_driver);

#endif
