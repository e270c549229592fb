/* What a CUDA API record holds: the function table (id -> name, library,
 * decoder class, flags; generated from build/gen/cuda_table.h) and how the
 * wrappers pack a call's arguments into the record's four slots.  Shared by
 * the capture side (the generated wrappers and preload/cuda_*.c pack) and
 * the decode side (collector/cuda_decode.c unpacks), so it lives on the
 * lower floor.  No CUDA header is included here: plain integers and
 * pointers, so that it builds the same with any toolkit.
 *
 * Argument layouts, per decoder class (decoder: collector/cuda_decode.c):
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
#ifndef TP_COLLECTOR_CUDA_RECORD_H
#define TP_COLLECTOR_CUDA_RECORD_H

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
 * records (CORRELATE in scripts/cudagen/specs.py): its event gets a
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

struct tp_cuda_fn {
	const char *name;
	uint8_t name_len; /* strlen(name): every event writes the name */
	uint8_t lib;	  /* enum tp_cuda_lib */
	uint8_t dec;	  /* enum tp_cuda_dec */
	uint8_t flags;	  /* TP_CUDA_F_* */
};

/* Sorted by name (strcmp order); the index is the function's id. */
extern const struct tp_cuda_fn tp_cuda_fns[TP_CUDA_NFUNCS + 1];
/* Packing helpers (layouts above), for the wrappers. */
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
