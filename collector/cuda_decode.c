/* CUDA API records decoded into trace events (flush thread only): one
 * complete event per call, category cuda_runtime or cuda_driver as
 * PyTorch's profiler names them, args {"result": N, ...decoded args}, and
 * the "GPU memory" counter that every successful device allocation and free
 * updates.  The generated wrappers (preload/, build/gen/cuda_wrappers.c)
 * capture; the argument layouts are described in collector/cuda_record.h. */
#include "collector/cuda_decode.h"

#include <stdlib.h>
#include <string.h>

#include "collector/cuda_kernels.h"
#include "collector/cuda_record.h"
#include "collector/gpu.h"
#include "collector/stacks.h"
#include "common/clock.h"
#include "common/hashmap.h"
#include "common/layout.h"
#include "format/api_args.h"
#include "format/writer.h"

/* ---- device memory in use ---------------------------------------------- */

/* Pointer -> size of the live device allocations seen (common/hashmap.h).
 * The runtime allocates through the driver, so one allocation is often
 * seen twice (cudaMalloc and cuMemAlloc_v2 with the same pointer): a
 * pointer already present is the same allocation, not a second one. */
static struct {
	struct tp_map sizes;
	uint64_t total;
} M;

static void mem_alloc(uint64_t ptr, uint64_t size)
{
	struct tp_map_slot *s = tp_map_upsert(&M.sizes, ptr, NULL);
	if (!s)
		return; /* out of memory: not counted, as before a grow failed */
	M.total = M.total - s->val + size; /* val: 0 when new */
	s->val = size;
}

static void mem_free(uint64_t ptr)
{
	struct tp_map_slot old;
	/* Absent: allocated before recording began, or freed twice. */
	if (tp_map_del(&M.sizes, ptr, &old))
		M.total -= old.val;
}

static void write_memory_counter(struct tp_writer *out, int64_t pid, int64_t tid, uint64_t ts)
{
	static const char name[] = "GPU memory";
	tp_writer_counter(out, name, sizeof(name) - 1, "bytes", 5, pid, tid, ts, (double)M.total);
}

/* ---- events -------------------------------------------------------------- */

/* Kernel names are the registry's (collector/cuda_kernels.c): the same address
 * for a kernel every time, so they are stable args that a writer interns
 * (checking the text, so a name freed when a module is registered again is
 * not a problem). */
static void launch_args(struct tp_arg *args, unsigned *n, const struct tp_cuda_fn *fn,
			const uint64_t *a)
{
	const void *key = (const void *)(uintptr_t)a[0];
	uint32_t len = 0;
	const char *name = fn->dec == TP_CUDA_DEC_LAUNCH_DRV
				   ? tp_cuda_kernels_driver_name_len(key, &len)
				   : tp_cuda_kernels_name_len(key, &len);
	if (!name && fn->dec == TP_CUDA_DEC_LAUNCH_RT && a[0])
		name = tp_cuda_kernels_driver_name_len(key, &len); /* a cudaKernel_t is a CUkernel */
	struct tp_api_launch l = {
		.name = name,
		.name_len = name ? len : 0,
		.handle = a[0],
		.grid = { (uint32_t)a[1], (uint32_t)(a[1] >> 32) & 0xffffu, (uint32_t)(a[1] >> 48) },
		.block = { (uint32_t)a[2] & 0x7ffu, (uint32_t)(a[2] >> 11) & 0x7ffu,
			   (uint32_t)(a[2] >> 22) & 0x3ffu },
		.shared = a[2] >> 32,
		.stream = a[3],
	};
	tp_api_args_launch(args, n, &l);
}

/* The decoder class's args, appended to args[*n] (room for
 * TP_API_ARGS_MAX). */
static void decode_args(struct tp_arg *args, unsigned *n, const struct tp_cuda_fn *fn,
			const struct tp_record *r)
{
	const uint64_t *a = r->arg;
	int async = (fn->flags & TP_CUDA_F_ASYNC) != 0;
	switch (fn->dec) {
	case TP_CUDA_DEC_LAUNCH_RT:
	case TP_CUDA_DEC_LAUNCH_DRV:
		launch_args(args, n, fn, a);
		break;
	case TP_CUDA_DEC_MEMCPY:
		tp_api_args_memcpy(args, n, a[2] & ((1ull << 56) - 1), (unsigned)(a[2] >> 56), a[0],
				   a[1], async, a[3]);
		break;
	case TP_CUDA_DEC_MEMSET:
		tp_api_args_memset(args, n, a[2], a[1], a[0], async, a[3]);
		break;
	case TP_CUDA_DEC_ALLOC:
	case TP_CUDA_DEC_ALLOC_HOST:
		tp_api_args_alloc(args, n, a[1], a[0], async, a[2], a[3]);
		break;
	case TP_CUDA_DEC_FREE:
	case TP_CUDA_DEC_FREE_HOST:
		tp_api_args_free(args, n, a[0], async, a[2]);
		break;
	case TP_CUDA_DEC_SYNC:
		tp_api_args_sync(args, n, a[0] || strstr(fn->name, "Stream"), a[0], a[1]);
		break;
	case TP_CUDA_DEC_GRAPH:
		args[(*n)++] = TP_ARG(hex, "graph exec", a[0]);
		args[(*n)++] = TP_ARG(hex, "stream handle", a[3]);
		break;
	case TP_CUDA_DEC_KERNEL_REG: {
		const char *name = tp_cuda_kernels_name((const void *)(uintptr_t)a[0]);
		args[(*n)++] = TP_ARG(hex, "host function", a[0]);
		if (a[1])
			args[(*n)++] = TP_ARG(hex, "kernel handle", a[1]);
		if (name)
			args[(*n)++] = TP_ARG(str, "kernel", name, strlen(name), 1);
		break;
	}
	case TP_CUDA_DEC_PROCADDR:
		if (a[0] && a[0] <= TP_CUDA_NFUNCS) {
			const struct tp_cuda_fn *sym = &tp_cuda_fns[a[0] - 1];
			args[(*n)++] = TP_ARG(str, "symbol", sym->name, sym->name_len, 1);
		}
		args[(*n)++] = TP_ARG(u64, "cudaVersion", a[1]);
		args[(*n)++] = TP_ARG(u64, "flags", a[2]);
		args[(*n)++] = TP_ARG(u64, "outcome", a[3]);
		break;
	default:
		break;
	}
}

/* Writes e with args[0..n-1] and r's stack args (room for 2 more).  Not
 * inlined: its buffer (about 50 KiB) would otherwise be a frame, with its
 * stack probes, of every API event's writer. */
static __attribute__((noinline)) void write_with_stacks(struct tp_writer *out, struct tp_event *e,
							 struct tp_arg *args, unsigned n,
							 const struct tp_record *r)
{
	struct tp_stack_args buf;
	e->sf = tp_stacks_args(out, r, &buf, args, &n);
	e->nargs = (uint16_t)n;
	tp_writer_event(out, e);
}

/* "result", "correlation" when corr != 0, the decoder class's args, then
 * the stacks' ("stack", "python_stack"). */
static void cd_event(struct tp_writer *out, const struct tp_record *r, int64_t pid, int64_t tid,
		     uint64_t start_ns, uint64_t end_ns, uint64_t corr)
{
	struct tp_arg args[2 + TP_API_ARGS_MAX + 2];
	unsigned n = 0;
	struct tp_event e = {
		.kind = TP_EV_SLICE,
		.name_stable = 1,
		.cat = TP_CAT_CUDA_RUNTIME,
		.name = "unknown",
		.name_len = 7,
		.pid = pid,
		.tid = tid,
		.ts = start_ns,
		.end = end_ns,
		/* Formats that bind arrows to slices (Perfetto) start the
		 * arrow to this call's GPU work here; collector/gpu_write.c ends it
		 * on each GPU event with the same number. */
		.flow_out = corr,
		.args = args,
		/* Every field named: see TP_EV_NO_EXTRAS. */
		.id = 0,
		.flow_in = 0,
		.sf = 0,
		.nargs = 0,
	};
	args[n++] = TP_ARG(i64, "result", r->result);
	if (corr)
		args[n++] = TP_ARG(u64, "correlation", corr);
	if (r->id >= TP_CUDA_NFUNCS) {
		e.nargs = (uint16_t)n;
		tp_writer_event(out, &e);
		return;
	}
	const struct tp_cuda_fn *fn = &tp_cuda_fns[r->id];
	e.cat = fn->lib == TP_CUDA_LIB_DRIVER ? TP_CAT_CUDA_DRIVER : TP_CAT_CUDA_RUNTIME;
	e.name = fn->name;
	e.name_len = (uint32_t)fn->name_len;
	decode_args(args, &n, fn, r);
	if (r->flags & (TP_RF_STACK | TP_RF_PYSTACK)) {
		write_with_stacks(out, &e, args, n, r);
	} else {
		e.nargs = (uint16_t)n;
		tp_writer_event(out, &e);
	}

	if (r->result != 0)
		return;
	if (fn->dec == TP_CUDA_DEC_ALLOC && r->arg[0]) {
		mem_alloc(r->arg[0], r->arg[1]);
		write_memory_counter(out, pid, tid, end_ns);
	} else if (fn->dec == TP_CUDA_DEC_FREE && r->arg[0]) {
		mem_free(r->arg[0]);
		write_memory_counter(out, pid, tid, end_ns);
	}
}

/* Whether the call may have caused GPU activity that CUPTI links to it
 * (only those API events are numbered for correlation). */
static int cd_correlates(const struct tp_record *r)
{
	return r->id < TP_CUDA_NFUNCS && (tp_cuda_fns[r->id].flags & TP_CUDA_F_CORR);
}

void tp_cuda_decode_record(struct tp_writer *out, const struct tp_record *r, int64_t pid,
			   int64_t tid)
{
	uint64_t b = tp_clock_to_ns(r->start), e = tp_clock_to_ns(r->end);
	/* Correlation and flows to GPU events: see collector/gpu.h. */
	uint64_t corr = 0;
	if (tp_gpu_flows_at(r->start) && cd_correlates(r))
		corr = tp_gpu_note_api(tid, r->start, b, e);
	cd_event(out, r, pid, tid, b, e, corr);
}
