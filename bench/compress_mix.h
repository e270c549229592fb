/* The events bench/bench_compress.c writes: one call's record as the
 * library decodes it, and the three mixes of calls it times.
 *
 * The events are the bytes a real trace holds: a tp_event with "result" and
 * the tp_api_args_*() builders' args is what collector/cuda_decode.c writes a
 * record as, and kernel names are stable args (escaped once per kernel by
 * the writer) as there.  Sizes are the largest real runs give: pid and
 * tid of 7 digits (pid_max is 4194304 on current distributions) and times
 * 45 days after the base (the middle of Kineto's 90-day bucket: 13 digits of
 * microseconds, 3 decimals).
 *
 * Settings:
 *   - "result only": the smallest API event, whose only arg is its result
 *     (cudaEventRecord and friends; the bound of the issue: <= 130 bytes,
 *     >= 15 M events/s in plain JSON).  One of 4 API names per event.
 *   - "iid mix": every event drawn independently, so that no two steps look
 *     alike: the worst case for a compressor.  Per event: 60% cudaLaunchKernel
 *     (one of 10 PyTorch/cuBLAS/NCCL kernel names, grid x 1..4096 and y 1..8,
 *     block 128/256/512, dynamic shared memory 0 or 48 KiB (1 in 4)),
 *     15% cudaMemcpyAsync (4 B..32 MiB, HtoD/DtoH/DtoD, device-like
 *     addresses), 10% cuLaunchKernel (flash_fwd_kernel, grid x 1..1024),
 *     7% cudaStreamSynchronize, 8% cudaEventRecord (result only).  Streams:
 *     the default stream (0x0) or one created stream, 50/50.  Durations
 *     1-10 us (syncs up to 0.9 ms), gaps 0.5-4.5 us, and a ProfilerStep#N
 *     range every 2000 events.  These draws are the previous bench's, kept
 *     as they were; only the args now follow the real decoder.
 *   - "step mix": what a training loop records.  A step runs the same ops
 *     in the same order every time (same kernels, grids, sizes, addresses:
 *     PyTorch's caching allocator hands out the same blocks), and only times
 *     change; that repetition is what step-scheduled profiling records.  The
 *     program is 2000 ops (the iid mix's step length) drawn ONCE from the
 *     iid mix's distributions above, then replayed every step with each
 *     op's duration jittered +-10% and every gap drawn afresh, and a
 *     ProfilerStep#N range around each step.  2000 host calls per step is
 *     a small model's step (a ResNet-50 training step is of that order);
 *     larger models lengthen the program.  zstd only profits from the
 *     repetition while a whole step's JSON (about 630 KB here) fits its
 *     window: 512 KiB at level 1, 1 MiB at level 2, 2 MiB at level 3; a
 *     longer step compresses like the iid mix.
 *
 * Included by bench/bench_compress.c alone (one program: its helpers stay
 * static). */
#ifndef TP_BENCH_COMPRESS_MIX_H
#define TP_BENCH_COMPRESS_MIX_H

#include <stdint.h>
#include <stdio.h>

#include "format/api_args.h"
#include "format/writer.h"

/* xorshift64*: deterministic, so that every run writes the same bytes. */
static uint64_t bc_rng = 88172645463325252ull;
static uint64_t bc_rand(void)
{
	bc_rng ^= bc_rng >> 12;
	bc_rng ^= bc_rng << 25;
	bc_rng ^= bc_rng >> 27;
	return bc_rng * 2685821657736338717ull;
}

static const char *const bc_kernels[] = {
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
	"at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
	"at::detail::Array<char*, 3>)",
	"ampere_sgemm_128x64_tn",
	"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
	"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, "
	"float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)",
	"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
	"float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
	"at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
	"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8>("
	"cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8::Params)",
	"flash_fwd_kernel",
	"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
	"at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
	"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
	"TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() "
	"const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned "
	"int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
	"at::native::memory::StoreWithCast<1> >(int, ...)",
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
};
#define BC_NKERNELS (sizeof(bc_kernels) / sizeof(bc_kernels[0]))

/* Kernel i's name and its length, as the registry (collector/cuda_kernels.c)
 * hands them to collector/cuda_decode.c: measured once. */
static const char *bc_kernel(unsigned i, uint32_t *len)
{
	static uint32_t lens[BC_NKERNELS];
	if (!lens[i])
		lens[i] = (uint32_t)strlen(bc_kernels[i]);
	*len = lens[i];
	return bc_kernels[i];
}
#define BC_FLASH 6 /* the kernel the driver launches */

/* A created stream and device memory, as cudaStreamCreate and the caching
 * allocator hand them out (14 hex digits). */
#define BC_STREAM 0x55d0c3a4e2f0ull
#define BC_DEVMEM 0x7f2c4a000000ull

/* Host calls between two ProfilerStep ranges, in both mixes. */
#define BC_STEP_OPS 2000

enum bc_kind { BC_LAUNCH, BC_MEMCPY, BC_DRV_LAUNCH, BC_SYNC, BC_EVENT };

/* Names with their lengths, as collector/cuda_decode.c has them (the generated
 * function table's name_len): measuring strlen() is not the writer's cost. */
struct bc_name {
	const char *s;
	uint32_t len;
};
#define BC_NAME(s) { s, sizeof(s) - 1 }
static const struct bc_name bc_api_names[] = { BC_NAME("cudaLaunchKernel"),
					       BC_NAME("cudaMemcpyAsync"),
					       BC_NAME("cuLaunchKernel"),
					       BC_NAME("cudaStreamSynchronize"),
					       BC_NAME("cudaEventRecord") };

/* One host call: what a record holds, once decoded. */
struct bc_op {
	enum bc_kind kind;
	uint64_t dur; /* ns */
	struct tp_api_launch launch;
	uint64_t bytes, dst, src, stream;
	unsigned copy_kind;
};

/* The iid mix's distribution of one call (see the header comment). */
static void bc_draw(struct bc_op *o)
{
	uint64_t r = bc_rand();
	unsigned pick = (unsigned)(r % 100);
	memset(o, 0, sizeof(*o));
	o->stream = (r >> 50) & 1 ? BC_STREAM : 0;
	if (pick < 60) {
		uint32_t klen;
		const char *k = bc_kernel((unsigned)((r >> 8) % BC_NKERNELS), &klen);
		o->kind = BC_LAUNCH;
		o->dur = 2000 + (r >> 20) % 3000;
		o->launch = (struct tp_api_launch){
			.name = k,
			.name_len = klen,
			.grid = { (uint32_t)(1 + (r >> 24) % 4096), (uint32_t)(1 + (r >> 36) % 8), 1 },
			.block = { 128u << ((r >> 40) % 3), 1, 1 },
			.shared = (r >> 44) % 4 == 0 ? 49152 : 0,
			.stream = o->stream,
		};
	} else if (pick < 75) {
		o->kind = BC_MEMCPY;
		o->dur = 3000 + (r >> 20) % 5000;
		o->bytes = (uint64_t)4 << ((r >> 30) % 24);
		o->copy_kind = 1 + (unsigned)((r >> 54) % 3);
		o->dst = BC_DEVMEM + ((r >> 8) % (1u << 20)) * 512;
		o->src = BC_DEVMEM + ((r >> 28) % (1u << 20)) * 512;
	} else if (pick < 85) {
		uint32_t klen;
		const char *k = bc_kernel(BC_FLASH, &klen);
		o->kind = BC_DRV_LAUNCH;
		o->dur = 1500 + (r >> 20) % 2000;
		o->launch = (struct tp_api_launch){
			.name = k,
			.name_len = klen,
			.grid = { (uint32_t)(1 + (r >> 24) % 1024), 16, 1 },
			.block = { 128, 1, 1 },
			.shared = 49152,
			.stream = o->stream,
		};
	} else if (pick < 92) {
		o->kind = BC_SYNC;
		o->dur = 10000 + (r >> 20) % 900000;
	} else {
		o->kind = BC_EVENT;
		o->dur = 1000 + (r >> 20) % 1000;
	}
}

struct bc_state {
	uint64_t ns;	   /* monotonic time of the next event */
	uint64_t step;
	uint64_t in_step;  /* calls since the step started */
	uint64_t step_ns;  /* when the step started */
	int64_t pid, tid;
	struct bc_op *program; /* the step mix's ops, BC_STEP_OPS of them */
};

/* One call as collector/cuda_decode.c writes it: "result", then the decoder
 * class's args. */
static void bc_write_op(struct tp_writer *w, struct bc_state *s, const struct bc_op *o,
			uint64_t dur)
{
	struct tp_arg args[1 + TP_API_ARGS_MAX];
	unsigned n = 0;
	const struct bc_name *name = &bc_api_names[o->kind];
	args[n++] = TP_ARG(i64, "result", 0);
	switch (o->kind) {
	case BC_LAUNCH:
	case BC_DRV_LAUNCH:
		tp_api_args_launch(args, &n, &o->launch);
		break;
	case BC_MEMCPY:
		tp_api_args_memcpy(args, &n, o->bytes, o->copy_kind, o->dst, o->src, 1, o->stream);
		break;
	case BC_SYNC:
		tp_api_args_sync(args, &n, 1, o->stream, 0);
		break;
	case BC_EVENT:
		break;
	}
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 1,
		.nargs = (uint16_t)n,
		.name_len = name->len,
		.cat = o->kind == BC_DRV_LAUNCH ? "cuda_driver" : "cuda_runtime",
		.name = name->s,
		.pid = s->pid,
		.tid = s->tid,
		.ts = s->ns,
		.end = s->ns + dur,
		.args = args,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
	s->ns += dur + 500 + bc_rand() % 4000;
}

/* The ProfilerStep#N range of the step that just ended, as
 * collector/markers_decode.c writes it. */
static void bc_step_range(struct tp_writer *w, struct bc_state *s)
{
	char name[40];
	int n = snprintf(name, sizeof(name), "ProfilerStep#%llu", (unsigned long long)s->step++);
	tp_writer_slice(w, "user_annotation", name, (size_t)n, s->pid, s->tid, s->step_ns, s->ns,
			NULL, 0);
	s->step_ns = s->ns;
	s->in_step = 0;
}

static void bc_iid_event(struct tp_writer *w, struct bc_state *s)
{
	if (s->in_step == BC_STEP_OPS) {
		bc_step_range(w, s);
		return;
	}
	struct bc_op o;
	bc_draw(&o);
	s->in_step++;
	bc_write_op(w, s, &o, o.dur);
}

static void bc_step_event(struct tp_writer *w, struct bc_state *s)
{
	if (s->in_step == BC_STEP_OPS) {
		bc_step_range(w, s);
		return;
	}
	const struct bc_op *o = &s->program[s->in_step++];
	/* +-10% of the op's own duration. */
	uint64_t dur = o->dur - o->dur / 10 + bc_rand() % (o->dur / 5 + 1);
	bc_write_op(w, s, o, dur);
}

/* The smallest API event: its result is its only arg. */
static void bc_result_event(struct tp_writer *w, struct bc_state *s)
{
	static const struct bc_name names[] = { BC_NAME("cudaLaunchKernel"),
						BC_NAME("cudaMemcpyAsync"),
						BC_NAME("cudaStreamSynchronize"),
						BC_NAME("cudaEventRecord") };
	uint64_t r = bc_rand();
	const struct bc_name *name = &names[r % 4];
	uint64_t dur = 2000 + (r >> 20) % 3000;
	struct tp_arg result = TP_ARG(i64, "result", 0);
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 1,
		.nargs = 1,
		.name_len = name->len,
		.cat = "cuda_runtime",
		.name = name->s,
		.pid = s->pid,
		.tid = s->tid,
		.ts = s->ns,
		.end = s->ns + dur,
		.args = &result,
		TP_EV_NO_EXTRAS,
	};
	tp_writer_event(w, &e);
	s->ns += dur + 500 + bc_rand() % 4000;
}

enum bc_mix { BC_RESULT_ONLY, BC_IID, BC_STEPS };

#endif
