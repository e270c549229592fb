/* One GPU event written as a complete event, with Kineto's names and args
 * (kernels, copies, memsets, syncs), and the ends of its ac2g arrow.  What
 * is known of the launching call comes in as its correlation number. */
#include <string.h>

#include "collector/gpu_internal.h"
#include "common/layout.h"
#include "common/log.h"

static const char *memcpy_kind_str(unsigned k)
{
	static const char *const s[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					 "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP" };
	return k < sizeof(s) / sizeof(s[0]) ? s[k] : "Unknown";
}

static const char *memory_kind_str(unsigned k)
{
	static const char *const s[] = { "Unknown", "Pageable", "Pinned",	 "Device",
					 "Array",   "Managed",	"Device Static", "Managed Static" };
	return k < sizeof(s) / sizeof(s[0]) ? s[k] : "Unknown";
}

/* corr: the correlation number of the API event that launched it in this
 * trace, or 0 when that event is not in it (then no "correlation", so that
 * no tool pairs it with an unrelated API event). */
static unsigned common_args(struct tp_arg *args, const struct tp_gpu_event *e, uint32_t dev,
			    uint64_t corr)
{
	unsigned n = 0;
	args[n++] = TP_ARG(u64, "device", dev);
	args[n++] = TP_ARG(u64, "context", e->context);
	args[n++] = TP_ARG(i64, "stream", (int32_t)e->stream);
	if (corr)
		args[n++] = TP_ARG(u64, "correlation", corr);
	return n;
}

static void int3_arg(struct tp_arg *a, const char *key, size_t klen, const int32_t v[3],
		     int64_t store[3])
{
	for (int i = 0; i < 3; i++)
		store[i] = v[i];
	*a = (struct tp_arg){ .key = key, .klen = (uint8_t)klen, .type = TP_VAL_I64S, .n = 3,
			      .is = store };
}

static void bandwidth(struct tp_arg *args, unsigned *n, const struct tp_gpu_event *e)
{
	args[(*n)++] = TP_ARG(u64, "bytes", e->bytes);
	if (e->end > e->start)
		args[(*n)++] = TP_ARG(f64, "memory bandwidth (GB/s)",
				      (double)e->bytes / (double)(e->end - e->start));
	else
		args[(*n)++] = TP_ARG(str, "memory bandwidth (GB/s)", "N/A", 3, 1);
}

/* corr: the launching call's correlation number, or 0.  It is also the
 * slice-bound arrow's id (tp_event.flow_in; the call's slice has it as
 * flow_out, collector/cuda_decode.c): the call's slice was written before
 * the per-arrow id of the FLOW_* events existed. */
void tp_gpu_write_event(struct tp_writer *out, const struct tp_gpu_event *e, uint32_t dev,
			uint64_t corr)
{
	char name[128];
	struct tp_arg args[16];
	int64_t grid[3], block[3];
	struct tp_event ev = {
		.kind = TP_EV_SLICE,
		.name_stable = 0,
		.nargs = 0,
		.name_len = 0,
		.cat = NULL,
		.name = name,
		.pid = TP_GPU_PID(dev),
		.tid = (int32_t)e->stream,
		.ts = e->start,
		.end = e->end,
		/* Every field named: no `rep stos` (format/event.h). */
		.id = 0,
		.flow_out = 0,
		.flow_in = corr,
		.sf = 0,
		.args = args,
	};
	switch (e->kind) {
	case TP_GPU_KERNEL:
		ev.cat = TP_CAT_KERNEL;
		ev.name = e->name;
		/* Interned for the process (tp_gpu_intern_kernel_name). */
		ev.name_stable = 1;
		break;
	case TP_GPU_MEMCPY:
		ev.cat = TP_CAT_GPU_MEMCPY;
		tp_format(name, sizeof(name), "Memcpy %s (%s -> %s)", memcpy_kind_str(e->copy_kind),
			  memory_kind_str(e->src_kind), memory_kind_str(e->dst_kind));
		break;
	case TP_GPU_MEMSET:
		ev.cat = TP_CAT_GPU_MEMSET;
		tp_format(name, sizeof(name), "Memset (%s)", memory_kind_str(e->mem_kind));
		break;
	default:
		ev.cat = TP_CAT_CUDA_SYNC;
		ev.name = tp_gpu_sync_name(e->sync_type);
		ev.name_stable = 1;
		break;
	}
	ev.name_len = (uint32_t)strlen(ev.name);
	unsigned n = common_args(args, e, dev, corr);
	if (e->kind == TP_GPU_KERNEL) {
		args[n++] = TP_ARG(u64, "registers per thread", e->regs);
		args[n++] = TP_ARG(u64, "shared memory", e->shared);
		int3_arg(&args[n++], "grid", 4, e->grid, grid);
		int3_arg(&args[n++], "block", 5, e->block, block);
		tp_gpu_kernel_occupancy(args, &n, e, dev);
	} else if (e->kind == TP_GPU_MEMCPY || e->kind == TP_GPU_MEMSET) {
		bandwidth(args, &n, e);
	} else {
		n = tp_gpu_sync_args(args, n, e);
	}
	ev.nargs = (uint16_t)n;
	tp_writer_event(out, &ev);
}

void tp_gpu_write_flow(struct tp_writer *out, int kind, uint64_t id, int64_t pid, int64_t tid,
		       uint64_t ts)
{
	tp_writer_flow(out, kind, TP_CAT_FLOW, id, pid, tid, ts);
}

