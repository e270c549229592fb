/* What the generated CUDA wrappers (build/gen/cuda_wrappers.c) share with the
 * hand-written CUDA module: the function table, lazy resolution of the real
 * functions, and how decoded arguments are packed into a record's four
 * argument slots.  No CUDA header is included here: the hand-written code
 * works with plain integers and pointers, so that it builds the same with any
 * toolkit.
 *
 * Argument layouts, per decoder class (writer: preload/cuda_events.c):
 *   LAUNCH_RT/LAUNCH_DRV  a0 kernel (host stub, cudaKernel_t or CUfunction)
 *                         a1 grid:  x bits 0..31, y 32..47, z 48..63
 *                         a2 block: x bits 0..10, y 11..21, z 22..31,
 *                            dynamic shared memory bits 32..63
 *                         a3 stream
 *   MEMCPY                a0 dst, a1 src, a2 bytes bits 0..55 | kind << 56
 *                         (cudaMemcpyKind numbering), a3 stream
 *   MEMSET                a0 pointer, a1 value, a2 bytes, a3 stream
 *   ALLOC/ALLOC_HOST      a0 pointer (0 on failure), a1 bytes, a2 stream, a3 pool
 *   FREE/FREE_HOST        a0 pointer, a2 stream
 *   SYNC                  a0 stream, a1 event
 *   GRAPH                 a0 graph exec, a3 stream
 *   KERNEL_REG            a0 host stub, a1 kernel handle (__cudaGetKernel)
 *   PROCADDR              a0 id + 1 of the wrapper handed back (0: none),
 *                         a1 cudaVersion, a2 flags, a3 enum tp_cuda_pa_outcome
 * Block dimensions are at most 1024 x 1024 x 64 on every GPU, so the bit
 * widths above hold any valid launch; an invalid one is recorded masked. */
#ifndef TP_PRELOAD_CUDA_PACK_H
#define TP_PRELOAD_CUDA_PACK_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cuda_table.h" /* generated: TP_CUDA_FUNCS, TP_CUDA_NFUNCS */

enum tp_cuda_lib { TP_CUDA_LIB_RUNTIME = 0, TP_CUDA_LIB_DRIVER = 1 };

enum tp_cuda_dec {
	TP_CUDA_DEC_NONE = 0,
	TP_CUDA_DEC_LAUNCH_RT,
	TP_CUDA_DEC_LAUNCH_DRV,
	TP_CUDA_DEC_MEMCPY,
	TP_CUDA_DEC_MEMSET,
	TP_CUDA_DEC_ALLOC,
	TP_CUDA_DEC_ALLOC_HOST,
	TP_CUDA_DEC_FREE,
	TP_CUDA_DEC_FREE_HOST,
	TP_CUDA_DEC_SYNC,
	TP_CUDA_DEC_GRAPH,
	TP_CUDA_DEC_KERNEL_REG,
	TP_CUDA_DEC_PROCADDR,
};

/* Table flags (the generator's FLAGS_*). */
#define TP_CUDA_F_ASYNC 1u
#define TP_CUDA_F_PTSZ 2u
#define TP_CUDA_F_PTDS 4u
/* Pushes an external correlation id around the real call while CUPTI
 * records (scripts/gen-cuda-wrappers' CORRELATE): its event gets a
 * correlation number (collector/gpu.h). */
#define TP_CUDA_F_CORR 8u
/* nvcc's launch plumbing (__cudaPush/PopCallConfiguration, __cudaGetKernel):
 * not in the trace unless TRACEPROF_CUDA_CALLS=all. */
#define TP_CUDA_F_PLUMBING 16u

/* What cuGetProcAddress's wrapper did with the pointer it was given. */
enum tp_cuda_pa_outcome {
	TP_CUDA_PA_ERROR = 0,	 /* the real call failed: nothing to map */
	TP_CUDA_PA_WRAPPED = 1,	 /* replaced by the wrapper of the same variant */
	TP_CUDA_PA_NULL = 2,	 /* success with a NULL pointer: left NULL */
	TP_CUDA_PA_UNKNOWN = 3,	 /* no known variant has that address (or a second
				  * copy of the library): left as is */
};

/* What a wrapper returns when the real function cannot be found
 * (CUDA_ERROR_UNKNOWN and cudaErrorUnknown). */
#define TP_CUDA_NO_REAL 999

struct tp_cuda_fn {
	const char *name;
	uint8_t name_len; /* strlen(name): every event writes the name */
	uint8_t lib;	  /* enum tp_cuda_lib */
	uint8_t dec;	  /* enum tp_cuda_dec */
	uint8_t flags;	  /* TP_CUDA_F_* */
};

/* Sorted by name (strcmp order); the index is the function's id. */
extern const struct tp_cuda_fn tp_cuda_fns[TP_CUDA_NFUNCS + 1];
/* The exported wrappers by id (generated). */
extern void *const tp_cuda_wrappers[TP_CUDA_NFUNCS + 1];
/* The real functions by id, for every caller at once: published and
 * withdrawn by preload/cuda_scope.c (NULL: ask per caller). */
extern void *_Atomic tp_cuda_reals[TP_CUDA_NFUNCS + 1];

/* libc's dlsym, never our hook (preload/cuda_dlsym.c, which hands out our
 * wrappers): found once by version.  NULL if not found. */
typedef void *(*tp_dlsym_fn)(void *, const char *);
void *tp_cuda_dlsym_resolve(void);

/* Slow path of the lookups below (preload/cuda_scope.c): the real function
 * that `caller` (a return address; NULL: traceprof's own use) reaches.
 * Never returns a traceprof wrapper.  NULL when nothing defines it. */
void *tp_scope_resolve(uint32_t id, const void *caller);

/* The real function if it is already known for every caller, else NULL (the
 * wrappers' first test: their slow path then asks tp_cuda_real_at()).
 * Relaxed: a function's code never changes, so the pointer is all that needs
 * to be seen; preload/cuda_scope.c publishes and withdraws it under its lock
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
 * address here for it (preload/cuda_dlsym.c). */
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
 * x86-64 short path (tp_hot_tpoff(), collector/control.h), and that path's
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

/* Name lookups (preload/cuda_match.c). */
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

void tp_cuda_kernels_register(const void *host_fun, const char *device_name);
void tp_cuda_kernels_alias(const void *kernel, const void *host_fun);
void tp_cuda_procaddr_fixup(uint32_t self_id, const char *symbol, void **pfn, int version,
			    uint64_t flags, int result, uint64_t *id_out, uint64_t *outcome);

/* Packing helpers (layouts above). */
static inline uint64_t tp_cuda_pack_dim3(uint64_t x, uint64_t y, uint64_t z)
{
	return (x & 0xffffffffu) | (y & 0xffffu) << 32 | (z & 0xffffu) << 48;
}

static inline uint64_t tp_cuda_pack_block(uint64_t x, uint64_t y, uint64_t z, uint64_t shmem)
{
	return (x & 0x7ffu) | (y & 0x7ffu) << 11 | (z & 0x3ffu) << 22 | (shmem & 0xffffffffu) << 32;
}

/* The same two layouts from a dim3's first 8 bytes as one word (x in the low
 * half, y in the high half: how the x86-64 and AArch64 ABIs pass it in a
 * register), so that the runtime launch wrappers shift and mask that word
 * instead of reassembling it from two 32-bit halves (5 instructions fewer
 * per recorded cudaLaunchKernel; the compiler folds the shifts). */
static inline uint64_t tp_cuda_dim3_xy(const void *d)
{
	uint64_t xy;
	memcpy(&xy, d, sizeof(xy));
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	xy = xy >> 32 | xy << 32;
#endif
	return xy;
}

static inline uint64_t tp_cuda_pack_dim3_xy(uint64_t xy, uint64_t z)
{
	return tp_cuda_pack_dim3(xy, xy >> 32, z);
}

static inline uint64_t tp_cuda_pack_block_xy(uint64_t xy, uint64_t z, uint64_t shmem)
{
	return tp_cuda_pack_block(xy, xy >> 32, z, shmem);
}

static inline uint64_t tp_cuda_pack_bytes_kind(uint64_t bytes, uint64_t kind)
{
	return (bytes & ((1ull << 56) - 1)) | (kind & 0xffu) << 56;
}

#endif
