/* What the generated CUDA wrappers (build/gen/cuda_wrappers.c) share with the
 * hand-written CUDA capture module: lazy resolution of the real functions,
 * which calls are recorded, and the hooks the wrappers call.  The function
 * table and how arguments are packed into a record (what the decode side
 * reads too) are in collector/cuda_record.h.  No CUDA header is included
 * here: the hand-written code works with plain integers and pointers, so that
 * it builds the same with any toolkit. */
#ifndef TP_PRELOAD_CUDA_PACK_H
#define TP_PRELOAD_CUDA_PACK_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "collector/cuda_kernels.h" /* the registration hooks */
#include "collector/cuda_record.h" /* the table, the argument layouts */
#include "common/dl.h" /* tp_dl_sym_fn */
#include "cuda_table.h" /* generated: TP_CUDA_FUNCS, TP_CUDA_NFUNCS */

/* What a wrapper returns when the real function cannot be found
 * (CUDA_ERROR_UNKNOWN and cudaErrorUnknown). */
#define TP_CUDA_NO_REAL 999

/* The exported wrappers by id (generated).  preload/resolve/ reads it to
 * answer a dlsym or cuGetProcAddress with a wrapper: resolution's one
 * reference back to capture, an address table written at link time, and
 * why scripts/check-layers leaves the generated object out. */
extern void *const tp_cuda_wrappers[TP_CUDA_NFUNCS + 1];
/* The real functions by id, for every caller at once: published and
 * withdrawn by preload/resolve/cuda_scope.c (NULL: ask per caller). */
extern void *_Atomic tp_cuda_reals[TP_CUDA_NFUNCS + 1];

/* libc's dlsym, never our hook (preload/resolve/cuda_dlsym.c, which hands out our
 * wrappers): common/dl.h's tp_dl_real_dlsym() finds it once by version. */
typedef tp_dl_sym_fn tp_dlsym_fn;

/* Slow path of the lookups below (preload/resolve/cuda_scope.c): the real function
 * that `caller` (a return address; NULL: traceprof's own use) reaches.
 * Never returns a traceprof wrapper.  NULL when nothing defines it. */
void *tp_scope_resolve(uint32_t id, const void *caller);

/* The real function if it is already known for every caller, else NULL (the
 * wrappers' first test: their slow path then asks tp_cuda_real_at()).
 * Relaxed: a function's code never changes, so the pointer is all that needs
 * to be seen; preload/resolve/cuda_scope.c publishes and withdraws it under its lock
 * and a racing reader at worst takes the slow path. */
static inline __attribute__((always_inline)) void *tp_cuda_real_known(uint32_t id)
{
	return atomic_load_explicit(&tp_cuda_reals[id], memory_order_relaxed);
}

/* The real function for a call made from `caller`. */
static inline void *tp_cuda_real_at(uint32_t id, const void *caller)
{
	void *p = tp_cuda_real_known(id);
	if (__builtin_expect(p != 0, 1))
		return p;
	return tp_scope_resolve(id, caller);
}

/* The real function for traceprof's own calls (naming kernels, the
 * cuGetProcAddress bookkeeping). */
static inline void *tp_cuda_real(uint32_t id)
{
	return tp_cuda_real_at(id, 0);
}

/* Records p, found by a lookup on a handle or by cuGetProcAddress, as a
 * definition of id (tp_scope_publish).  Returns the first definition known:
 * p, or the one seen before. */
void *tp_cuda_set_real(uint32_t id, void *p);

/* The wrappers of the portable C form (no assembly entry points) call their
 * recording half with a normal call, so they leave the caller's return
 * address here for it (preload/resolve/cuda_dlsym.c). */
extern __thread const void *tp_cuda_caller;

/* Which recorded calls a trace holds (TRACEPROF_CUDA_CALLS, preload/cuda_calls.c),
 * read by the wrappers only while recording:
 *   tp_cuda_quiet[id]   1: not recorded (nvcc's plumbing, unless "all");
 *   tp_cuda_in_runtime  runtime calls being recorded on this thread: a
 *                       driver call made while it is above
 *   tp_cuda_nest_max    (0, or UINT32_MAX with "all") is the runtime's own
 *                       and is not recorded: its GPU work is linked to the
 *                       runtime call, which pushed the correlation id. */
extern uint8_t tp_cuda_quiet[TP_CUDA_NFUNCS + 1];
extern uint32_t tp_cuda_nest_max;
extern __thread uint32_t tp_cuda_in_runtime __attribute__((tls_model("initial-exec")));
/* Its offset from the thread pointer on the hot globals' line, for the
 * x86-64 short path (tp_hot_tpoff(), collector/hot_data.h), and that path's
 * increment and decrement through it: "memory" orders them with the C code's
 * own reads of tp_cuda_in_runtime and keeps them on their side of the real
 * call. */
extern intptr_t tp_cuda_in_runtime_tpoff;
static inline __attribute__((always_inline)) void tp_cuda_in_runtime_add_hot(int32_t d)
{
#if defined(__x86_64__)
	__asm__ volatile("addl %1, %%fs:(%0)" : : "r"(tp_cuda_in_runtime_tpoff), "ri"(d) : "memory");
#else
	tp_cuda_in_runtime += (uint32_t)d;
#endif
}
void tp_cuda_calls_configure(int all);

/* Name lookups (preload/resolve/cuda_match.c). */
int tp_cuda_find(const char *name);
/* Non-zero when name is a variant of symbol: symbol, then optionally _vN,
 * then optionally _ptsz or _ptds. */
int tp_cuda_is_variant(const char *symbol, const char *name);
/* The id of the variant of `symbol` whose real address is p, or -1.
 * lookup(ctx, id) returns that variant's real address (NULL if unknown). */
int tp_cuda_match_variant(const char *symbol, const void *p,
			  void *(*lookup)(void *ctx, uint32_t id), void *ctx);

/* Hooks called by the generated wrappers whether or not they record. */
/* Stream capture (preload/cuda_capture.c), from the wrappers of the capture
 * calls: begin before the real call, began/ended after it with its result.
 * tp_cuda_naming_enter() is asked by traceprof's own driver calls (kernel
 * names): 0 while a capture is open (make no call); after 1, call
 * tp_cuda_naming_leave() once the driver call has returned. */
void tp_cuda_capture_begin(void);
void tp_cuda_capture_began(int result);
void tp_cuda_capture_ended(int result);
int tp_cuda_naming_enter(void);
void tp_cuda_naming_leave(void);

void tp_cuda_procaddr_fixup(uint32_t self_id, const char *symbol, void **pfn, int version,
			    uint64_t flags, int result, uint64_t *id_out, uint64_t *outcome);

#endif
