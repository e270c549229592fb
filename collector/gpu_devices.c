/* The GPUs of the GPU timeline: which device each context runs on, the
 * devices' properties (Kineto's deviceProperties) and the occupancy
 * estimate they allow for a kernel. */
#include <string.h>

#include "collector/gpu_internal.h"

static struct {
	uint32_t ctx_dev[256]; /* context id -> device + 1, from kernel/copy records */
	struct tp_gpu_device dev[TP_GPU_MAX_DEVICES];
	int have_dev[TP_GPU_MAX_DEVICES];
	struct tp_doc props; /* deviceProperties, when props_ok */
	int props_ok;
} D;

void tp_gpu_devices_reset(void)
{
	tp_doc_free(&D.props);
	memset(&D, 0, sizeof(D));
}

void tp_gpu_note_context(uint32_t ctx, uint32_t dev)
{
	if (ctx < 256)
		D.ctx_dev[ctx] = dev + 1;
}

uint32_t tp_gpu_event_device(const struct tp_gpu_event *e)
{
	if (e->device != UINT32_MAX)
		return e->device;
	if (e->context < 256 && D.ctx_dev[e->context])
		return D.ctx_dev[e->context] - 1;
	return 0;
}

/* Kineto's occupancy columns.  The estimate takes the per-SM limits of
 * threads, blocks, registers and shared memory (no allocation granularity),
 * so it may read a little high; Kineto's is CUDA's occupancy calculator. */
void tp_gpu_kernel_occupancy(struct tp_arg *args, unsigned *n, const struct tp_gpu_event *e,
			     uint32_t dev)
{
	if (dev >= TP_GPU_MAX_DEVICES || !D.have_dev[dev] || D.dev[dev].num_sms <= 0 ||
	    D.dev[dev].warp_size <= 0)
		return;
	const struct tp_gpu_device *d = &D.dev[dev];
	double blocks = (double)e->grid[0] * e->grid[1] * e->grid[2];
	uint64_t threads = (uint64_t)e->block[0] * (uint64_t)e->block[1] * (uint64_t)e->block[2];
	double blocks_per_sm = blocks / d->num_sms;
	uint64_t warps_per_block = (threads + (uint64_t)d->warp_size - 1) / (uint64_t)d->warp_size;
	double warps_per_sm = blocks_per_sm * (double)warps_per_block;
	args[(*n)++] = TP_ARG(f64, "blocks per SM", blocks_per_sm);
	args[(*n)++] = TP_ARG(f64, "warps per SM", warps_per_sm);
	if (!threads || d->max_threads_per_sm <= 0)
		return;
	uint64_t limit = (uint64_t)d->max_threads_per_sm / threads;
	if (d->max_blocks_per_sm > 0 && (uint64_t)d->max_blocks_per_sm < limit)
		limit = (uint64_t)d->max_blocks_per_sm;
	if (e->regs && d->regs_per_sm > 0) {
		uint64_t r = (uint64_t)d->regs_per_sm / ((uint64_t)e->regs * threads);
		if (r < limit)
			limit = r;
	}
	if (e->shared && d->shared_per_sm > 0) {
		uint64_t s = (uint64_t)d->shared_per_sm / e->shared;
		if (s < limit)
			limit = s;
	}
	double active = blocks_per_sm < (double)limit ? blocks_per_sm : (double)limit;
	double max_warps = (double)d->max_threads_per_sm / d->warp_size;
	double occ = active * (double)warps_per_block / max_warps;
	if (occ > 1.0)
		occ = 1.0;
	args[(*n)++] = TP_ARG(i64, "est. achieved occupancy %", (int64_t)(0.5 + occ * 100.0));
}

void tp_gpu_set_device(int index, const struct tp_gpu_device *d)
{
	if (index < 0 || index >= TP_GPU_MAX_DEVICES)
		return;
	D.dev[index] = *d;
	D.have_dev[index] = 1;
	D.props_ok = 0;
}

const struct tp_doc *tp_gpu_device_properties(void)
{
	if (D.props_ok)
		return &D.props;
	struct tp_doc *d = &D.props;
	tp_doc_reset(d);
	int n = 0;
	tp_doc_array(d, NULL);
	for (int i = 0; i < TP_GPU_MAX_DEVICES; i++) {
		if (!D.have_dev[i])
			continue;
		const struct tp_gpu_device *p = &D.dev[i];
		n++;
		tp_doc_object(d, NULL);
		tp_doc_i64(d, "id", i);
		tp_doc_str(d, "name", p->name);
		tp_doc_u64(d, "totalGlobalMem", p->total_global_mem);
		const struct {
			const char *key;
			int v;
		} f[] = {
			{ "computeMajor", p->compute_major },
			{ "computeMinor", p->compute_minor },
			{ "maxThreadsPerBlock", p->max_threads_per_block },
			{ "maxThreadsPerMultiprocessor", p->max_threads_per_sm },
			{ "regsPerBlock", p->regs_per_block },
			{ "warpSize", p->warp_size },
			{ "sharedMemPerBlock", p->shared_per_block },
			{ "numSms", p->num_sms },
			{ "regsPerMultiprocessor", p->regs_per_sm },
			{ "sharedMemPerBlockOptin", p->shared_per_block_optin },
			{ "sharedMemPerMultiprocessor", p->shared_per_sm },
		};
		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
			tp_doc_i64(d, f[k].key, f[k].v);
		tp_doc_end(d);
	}
	tp_doc_end(d);
	if (!n || d->error)
		return NULL;
	D.props_ok = 1;
	return d;
}
