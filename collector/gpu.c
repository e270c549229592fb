/* CUPTI activity records -> Kineto-style GPU events and ac2g flows (see
 * collector/gpu.h).  Flush thread only: no locks. */
#include "collector/gpu.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "collector/annos.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/log.h"

#if defined(__has_include)
#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define TP_GPU_HAVE_CUPTI 1
#endif
#endif

int tp_gpu_flows_on;
uint64_t tp_gpu_flows_until = UINT64_MAX;

/* ---- a small open-addressing map: uint64 key (0 = empty) -> two values -- */

struct map {
	uint64_t *keys;
	uint64_t *val, *aux;
	size_t cap, n;
};

/* Caps memory if a program launches millions of kernels while flows can
 * never be matched (e.g. a window that is never saved). */
#define MAP_MAX_CAP (1u << 23)

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->val);
	free(m->aux);
	memset(m, 0, sizeof(*m));
}

static int map_put(struct map *m, uint64_t k, uint64_t v, uint64_t a);

static int map_grow(struct map *m, size_t cap)
{
	struct map g = { 0 };
	g.keys = calloc(cap, sizeof(uint64_t));
	g.val = malloc(cap * sizeof(uint64_t));
	g.aux = malloc(cap * sizeof(uint64_t));
	if (!g.keys || !g.val || !g.aux) {
		map_free(&g);
		return -1;
	}
	g.cap = cap;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			map_put(&g, m->keys[i], m->val[i], m->aux[i]);
	map_free(m);
	*m = g;
	return 0;
}

/* Returns 0, or -1 when the map is full (the entry is not kept). */
static int map_put(struct map *m, uint64_t k, uint64_t v, uint64_t a)
{
	if ((m->n + 1) * 2 > m->cap) {
		if (m->cap >= MAP_MAX_CAP || map_grow(m, m->cap ? m->cap * 2 : 1024) < 0)
			return -1;
	}
	size_t mask = m->cap - 1;
	for (size_t i = hash64(k) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == k || !m->keys[i]) {
			if (!m->keys[i])
				m->n++;
			m->keys[i] = k;
			m->val[i] = v;
			m->aux[i] = a;
			return 0;
		}
	}
}

static uint64_t *map_get(struct map *m, uint64_t k, uint64_t **aux)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = hash64(k) & mask; m->keys[i]; i = (i + 1) & mask)
		if (m->keys[i] == k) {
			if (aux)
				*aux = &m->aux[i];
			return &m->val[i];
		}
	return NULL;
}

/* Rebuilds m with only the entries keep() accepts (deletion without
 * tombstones; done once per window, never per event). */
static void map_filter(struct map *m, int (*keep)(uint64_t k, uint64_t v, uint64_t a, void *c),
		       void *ctx)
{
	struct map old = *m;
	memset(m, 0, sizeof(*m));
	size_t live = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i] && keep(old.keys[i], old.val[i], old.aux[i], ctx))
			live++;
	size_t cap = 1024;
	while (cap < live * 2 + 2)
		cap *= 2;
	if (live && map_grow(m, cap) == 0)
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i] && keep(old.keys[i], old.val[i], old.aux[i], ctx))
				map_put(m, old.keys[i], old.val[i], old.aux[i]);
	map_free(&old);
}

/* ---- state ------------------------------------------------------------- */

enum gev_kind { GEV_KERNEL = 1, GEV_MEMCPY = 2, GEV_MEMSET = 3, GEV_SYNC = 4 };

struct gev {
	uint64_t start, end; /* CLOCK_MONOTONIC ns */
	uint64_t bytes;
	const char *name; /* interned (kernels only) */
	uint32_t kind, device, context, stream, corr;
	union {
		struct { /* kernels */
			int32_t grid[3], block[3];
		};
		/* Event Sync and Stream Wait Event: the CUDA event waited on,
		 * the stream that recorded it (-1: not known) and CUPTI's
		 * correlation of the cudaEventRecord that did (0: not known). */
		struct {
			int32_t wait_stream;
			uint32_t wait_event, wait_record;
		};
	};
	uint32_t regs, shared;
	uint8_t copy_kind, src_kind, dst_kind;
	uint16_t mem_kind;
	uint32_t sync_type;
};

/* At most this many parsed events wait for their window (about 100 MB);
 * beyond it the oldest are lost and counted. */
#define MAX_PENDING (1u << 20)

static struct {
	struct gev *ev;
	size_t n, cap;
	uint64_t lost;
	int64_t clock_offset;
	struct map corr; /* CUPTI correlation + 1 -> external id; aux = time noted */
	struct map api;	 /* external id -> API start ns; aux = its correlation number */
	uint64_t next_corr; /* the last correlation number handed out */
	struct map names; /* CUPTI name pointer -> struct kname * */
	uint32_t ctx_dev[256]; /* context id -> device + 1, from kernel/copy records */
	struct tp_gpu_device dev[TP_GPU_MAX_DEVICES];
	int have_dev[TP_GPU_MAX_DEVICES];
	struct tp_doc props; /* deviceProperties, when props_ok */
	int props_ok;
	/* CUPTI's API records that came without an id of ours, for
	 * link_outer(): CUPTI correlation + 1 -> start (ns, host clock);
	 * aux = duration (ns, at most 2^32 - 1) << 32 | CUPTI's thread id. */
	struct map outer;
	/* CUDA event (context, id; event_key()) -> its last record: CUPTI
	 * correlation | stream << 32; aux = the time it was noted.  As
	 * Kineto, for the wait fields of the syncs on it. */
	struct map events;
	/* The API events noted for the windows not written yet
	 * (tp_gpu_note_api()), sorted by start when a window is written. */
	struct note {
		uint64_t start, end; /* ns */
		uint64_t ext;
		int64_t tid;
	} *notes;
	size_t nnotes, notes_cap;
	uint64_t next_flow; /* the last flow id handed out */
} G;

struct kname {
	char *mangled;
	char *shown;
};

static void names_free(void)
{
	for (size_t i = 0; i < G.names.cap; i++)
		if (G.names.keys[i]) {
			struct kname *k = (struct kname *)(uintptr_t)G.names.val[i];
			free(k->mangled);
			if (k->shown != k->mangled)
				free(k->shown);
			free(k);
		}
	map_free(&G.names);
}

void tp_gpu_reset(void)
{
	free(G.ev);
	map_free(&G.corr);
	map_free(&G.api);
	map_free(&G.outer);
	map_free(&G.events);
	free(G.notes);
	names_free();
	tp_doc_free(&G.props);
	memset(&G, 0, sizeof(G));
}

void tp_gpu_set_clock_offset(int64_t offset_ns)
{
	G.clock_offset = offset_ns;
}

uint64_t tp_gpu_pending(void)
{
	return G.n;
}

uint64_t tp_gpu_lost(void)
{
	return G.lost;
}

/* ---- kernel names ------------------------------------------------------- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static char *demangle(const char *s)
{
	static int looked;
	static demangle_fn fn;
	if (strncmp(s, "_Z", 2))
		return NULL;
	if (!looked) {
		looked = 1;
		/* Present in every C++ program (PyTorch); absent in plain C ones,
		 * which then show the mangled name, as nsys does without it. */
		fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	}
	if (!fn)
		return NULL;
	int status = -1;
	char *out = fn(s, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

const char *tp_gpu_intern_kernel_name(const char *mangled)
{
	if (!mangled)
		return "kernel";
	uint64_t key = (uint64_t)(uintptr_t)mangled;
	uint64_t *v = map_get(&G.names, key, NULL);
	if (v) {
		struct kname *k = (struct kname *)(uintptr_t)*v;
		/* CUPTI keeps one name string per kernel; a module unload may reuse
		 * the address for another one. */
		if (!strcmp(k->mangled, mangled))
			return k->shown;
	}
	struct kname *k = calloc(1, sizeof(*k));
	if (!k || !(k->mangled = strdup(mangled))) {
		free(k);
		return "kernel";
	}
	k->shown = demangle(mangled);
	if (!k->shown)
		k->shown = k->mangled;
	if (v) {
		/* Replace the stale entry; the old strings stay (rare, tiny). */
		*v = (uint64_t)(uintptr_t)k;
	} else if (map_put(&G.names, key, (uint64_t)(uintptr_t)k, 0) < 0) {
		/* Too many distinct kernels to remember: keep it unindexed. */
	}
	return k->shown;
}

/* ---- parsing ------------------------------------------------------------ */

/* Everything down to tp_gpu_parse_record() reads CUPTI's records: built
 * without the toolkit's CUPTI headers (CUDA_HOME without a toolkit), none of
 * it is used. */
#ifdef TP_GPU_HAVE_CUPTI
static uint64_t gpu_ns(uint64_t t)
{
	return (uint64_t)((int64_t)t - G.clock_offset);
}

/* A new pending GPU event with the fields every activity kind has (times in
 * CUPTI's clock); the caller fills the rest.  NULL when out of memory. */
static struct gev *new_event(unsigned kind, uint64_t start, uint64_t end, uint32_t device,
			     uint32_t context, uint32_t stream, uint32_t corr)
{
	if (G.n == G.cap) {
		if (G.cap >= MAX_PENDING) {
			/* Lose the oldest event to keep the newest. */
			memmove(G.ev, G.ev + 1, (G.n - 1) * sizeof(*G.ev));
			G.n--;
			G.lost++;
		} else {
			size_t cap = G.cap ? G.cap * 2 : 4096;
			struct gev *ev = realloc(G.ev, cap * sizeof(*ev));
			if (!ev) {
				G.lost++;
				return NULL;
			}
			G.ev = ev;
			G.cap = cap;
		}
	}
	struct gev *e = &G.ev[G.n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->start = gpu_ns(start);
	e->end = gpu_ns(end);
	e->device = device;
	e->context = context;
	e->stream = stream;
	e->corr = corr;
	return e;
}

static void note_ctx(uint32_t ctx, uint32_t dev)
{
	if (ctx < 256)
		G.ctx_dev[ctx] = dev + 1;
}

/* A runtime API record that came without an id of ours is kept for
 * link_outer(); one with ours needs nothing more (CUPTI writes a call's
 * external-correlation record just before its API record).  Driver records
 * are never needed: every driver call that can cause GPU work is interposed
 * and pushes its id, so it is never a hidden outer call. */
static int parse_api(const CUpti_ActivityAPI *r)
{
	uint64_t key = (uint64_t)r->correlationId + 1;
	if (r->kind != CUPTI_ACTIVITY_KIND_RUNTIME || map_get(&G.corr, key, NULL))
		return 0;
	uint64_t dur = r->end > r->start ? r->end - r->start : 0;
	if (dur > UINT32_MAX)
		dur = UINT32_MAX;
	return map_put(&G.outer, key, gpu_ns(r->start), dur << 32 | r->threadId) == 0;
}

/* Nonzero (the maps' empty key is 0). */
static uint64_t event_key(uint32_t context, uint32_t event)
{
	return 1ull << 63 | (uint64_t)(context & 0x7fffffffu) << 32 | event;
}
#endif

int tp_gpu_parse_record(const void *record)
{
#ifdef TP_GPU_HAVE_CUPTI
	const CUpti_Activity *a = record;
	struct gev *e;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL: {
		const CUpti_ActivityKernel10 *k = record;
		if (!(e = new_event(GEV_KERNEL, k->start, k->end, k->deviceId, k->contextId,
				    k->streamId, k->correlationId)))
			return 0;
		e->name = tp_gpu_intern_kernel_name(k->name);
		e->grid[0] = k->gridX;
		e->grid[1] = k->gridY;
		e->grid[2] = k->gridZ;
		e->block[0] = k->blockX;
		e->block[1] = k->blockY;
		e->block[2] = k->blockZ;
		e->regs = k->registersPerThread;
		e->shared = (uint32_t)(k->staticSharedMemory + k->dynamicSharedMemory);
		note_ctx(k->contextId, k->deviceId);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = record;
		if (!(e = new_event(GEV_MEMCPY, m->start, m->end, m->deviceId, m->contextId,
				    m->streamId, m->correlationId)))
			return 0;
		e->bytes = m->bytes;
		e->copy_kind = m->copyKind;
		e->src_kind = m->srcKind;
		e->dst_kind = m->dstKind;
		note_ctx(m->contextId, m->deviceId);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = record;
		if (!(e = new_event(GEV_MEMSET, m->start, m->end, m->deviceId, m->contextId,
				    m->streamId, m->correlationId)))
			return 0;
		e->bytes = m->bytes;
		e->mem_kind = m->memoryKind;
		note_ctx(m->contextId, m->deviceId);
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = record;
		/* The record has no device: the context's, learned from the
		 * kernels and copies, at write time. */
		if (!(e = new_event(GEV_SYNC, s->start, s->end, UINT32_MAX, s->contextId,
				    s->streamId, s->correlationId)))
			return 0;
		e->sync_type = (uint32_t)s->type;
		e->wait_stream = -1;
		if (s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE ||
		    s->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) {
			/* CUPTI writes a record's CUDA_EVENT record before the
			 * syncs that wait on it (buffers are in time order). */
			uint64_t *rec = map_get(&G.events, event_key(s->contextId, s->cudaEventId),
						NULL);
			e->wait_event = s->cudaEventId;
			if (rec) {
				e->wait_stream = (int32_t)(*rec >> 32);
				e->wait_record = (uint32_t)*rec;
			}
		}
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
		/* Every version starts with these fields. */
		const CUpti_ActivityCudaEvent *c = record;
		map_put(&G.events, event_key(c->contextId, c->eventId),
			(uint64_t)c->streamId << 32 | c->correlationId, tp_clock_monotonic_ns());
		return 1;
	}
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return parse_api(record);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
		const CUpti_ActivityExternalCorrelation *x = record;
		if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
			return 0;
		map_put(&G.corr, (uint64_t)x->correlationId + 1, x->externalId,
			tp_clock_monotonic_ns());
		return 1;
	}
	default:
		return 0;
	}
#else
	(void)record;
	return 0;
#endif
}

/* At most this many API events are noted for link_outer() (32 MB), as many
 * as GPU events may wait (MAX_PENDING); past it, GPU events of calls inside
 * a hidden runtime stay unlinked (written, without a correlation). */
#define MAX_NOTES (1u << 20)

uint64_t tp_gpu_note_api(int64_t tid, uint64_t start_ticks, uint64_t start_ns, uint64_t end_ns)
{
	/* GPU work will be correlated: keep the annotations that enclose it
	 * (gpu_user_annotation events, written with the window's GPU events). */
	tp_annos_keep();
	uint64_t corr = G.next_corr + 1;
	uint64_t ext = tp_gpu_ext_id(tid, start_ticks);
	if (map_put(&G.api, ext, start_ns, corr) != 0)
		return 0;
	if (G.nnotes == G.notes_cap && G.notes_cap < MAX_NOTES) {
		size_t cap = G.notes_cap ? G.notes_cap * 2 : 4096;
		struct note *n = realloc(G.notes, cap * sizeof(*n));
		if (n) {
			G.notes = n;
			G.notes_cap = cap;
		}
	}
	if (G.nnotes < G.notes_cap)
		G.notes[G.nnotes++] = (struct note){ start_ns, end_ns, ext, tid };
	return G.next_corr = corr;
}

static int note_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct note *)a)->start, y = ((const struct note *)b)->start;
	return (x > y) - (x < y);
}

/* Drops the notes that started before `before` (sorted or not). */
static void notes_drop_before(uint64_t before)
{
	size_t k = 0;
	for (size_t i = 0; i < G.nnotes; i++)
		if (G.notes[i].start >= before)
			G.notes[k++] = G.notes[i];
	G.nnotes = k;
}

/* Our API events may start this much before the CUPTI record of the call
 * that contains them: the same CLOCK_MONOTONIC reached two ways (TSC ticks
 * converted, CUPTI's timestamp callback) differs by well under this. */
#define LINK_SLACK_NS 2000

/* CUPTI gives a GPU event the correlation of the outermost CUDA call that
 * caused it, and records no driver call made inside a runtime call.  When
 * that outer call is one traceprof could not interpose (nvcc's static
 * runtime inside the program, the runtime inside cuBLAS and other NVIDIA
 * libraries), the id our driver wrapper pushed inside it reaches no record.
 * The outer call's API record still says when and on which thread it ran:
 * our API event on that thread that overlaps it most is the driver call it
 * made (measured on an H100: the runtime's own work is about a microsecond
 * on either side of it).  Links the correlation to that event's id and
 * returns the id, or 0.  Notes sorted by start. */
static uint64_t link_outer(uint32_t corr)
{
	uint64_t key = (uint64_t)corr + 1, *aux = NULL;
	uint64_t *start = map_get(&G.outer, key, &aux);
	if (!start)
		return 0;
	uint64_t s = *start, e = s + (*aux >> 32);
	/* -1 (a thread that never recorded, a platform whose CUPTI ids differ):
	 * any thread's overlap counts. */
	int64_t tid = tp_threads_tid_of_cupti((uint32_t)*aux);
	uint64_t from = s > LINK_SLACK_NS ? s - LINK_SLACK_NS : 0;
	size_t lo = 0, hi = G.nnotes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (G.notes[mid].start < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t best = 0, ext = 0;
	for (size_t i = lo; i < G.nnotes && G.notes[i].start <= e; i++) {
		const struct note *n = &G.notes[i];
		uint64_t a = n->start > s ? n->start : s, b = n->end < e ? n->end : e;
		if ((tid < 0 || n->tid == tid) && b > a && b - a > best) {
			best = b - a;
			ext = n->ext;
		}
	}
	if (ext)
		map_put(&G.corr, key, ext, tp_clock_monotonic_ns());
	return ext;
}

/* ---- writing ------------------------------------------------------------ */

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

static const char *sync_type_str(unsigned k)
{
	static const char *const s[] = { "Unknown", "Event Sync", "Stream Wait Event",
					 "Stream Sync", "Context Sync" };
	return k < sizeof(s) / sizeof(s[0]) ? s[k] : "Unknown";
}

static uint32_t event_device(const struct gev *e)
{
	if (e->device != UINT32_MAX)
		return e->device;
	if (e->context < 256 && G.ctx_dev[e->context])
		return G.ctx_dev[e->context] - 1;
	return 0;
}

/* corr: the correlation number of the API event that launched it in this
 * trace, or 0 when that event is not in it (then no "correlation", so that
 * no tool pairs it with an unrelated API event). */
static unsigned common_args(struct tp_arg *args, const struct gev *e, uint32_t dev, uint64_t corr)
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

/* Kineto's occupancy columns.  The estimate takes the per-SM limits of
 * threads, blocks, registers and shared memory (no allocation granularity),
 * so it may read a little high; Kineto's is CUDA's occupancy calculator. */
static void kernel_occupancy(struct tp_arg *args, unsigned *n, const struct gev *e, uint32_t dev)
{
	if (dev >= TP_GPU_MAX_DEVICES || !G.have_dev[dev] || G.dev[dev].num_sms <= 0 ||
	    G.dev[dev].warp_size <= 0)
		return;
	const struct tp_gpu_device *d = &G.dev[dev];
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

static void bandwidth(struct tp_arg *args, unsigned *n, const struct gev *e)
{
	args[(*n)++] = TP_ARG(u64, "bytes", e->bytes);
	if (e->end > e->start)
		args[(*n)++] = TP_ARG(f64, "memory bandwidth (GB/s)",
				      (double)e->bytes / (double)(e->end - e->start));
	else
		args[(*n)++] = TP_ARG(str, "memory bandwidth (GB/s)", "N/A", 3, 1);
}

/* The correlation number (this trace's, the API events' "correlation") of
 * the call CUPTI numbered corr, or -1 when it has none here: HTA pairs
 * wait_on_cuda_event_record_corr_id with the cudaEventRecord's
 * "correlation", so CUPTI's own number would name an unrelated call. */
static int64_t record_number(uint32_t corr)
{
	uint64_t *num;
	uint64_t *ext = corr ? map_get(&G.corr, (uint64_t)corr + 1, NULL) : NULL;
	if (!ext || !map_get(&G.api, *ext, &num) || !*num)
		return -1;
	return (int64_t)*num;
}

/* corr: the launching call's correlation number, or 0.  It is also the
 * slice-bound arrow's id (tp_event.flow_in; the call's slice has it as
 * flow_out, preload/cuda_events.c): the call's slice was written before
 * the per-arrow id of the FLOW_* events existed. */
static void write_event(struct tp_writer *out, const struct gev *e, uint32_t dev, uint64_t corr)
{
	char name[128];
	struct tp_arg args[16];
	int64_t grid[3], block[3];
	struct tp_event ev = {
		.kind = TP_EV_SLICE,
		.name = name,
		.pid = TP_GPU_PID(dev),
		.tid = (int32_t)e->stream,
		.ts = e->start,
		.end = e->end,
		.flow_in = corr,
		.args = args,
	};
	switch (e->kind) {
	case GEV_KERNEL:
		ev.cat = "kernel";
		ev.name = e->name;
		/* Interned for the process (tp_gpu_intern_kernel_name). */
		ev.name_stable = 1;
		break;
	case GEV_MEMCPY:
		ev.cat = "gpu_memcpy";
		tp_format(name, sizeof(name), "Memcpy %s (%s -> %s)", memcpy_kind_str(e->copy_kind),
			  memory_kind_str(e->src_kind), memory_kind_str(e->dst_kind));
		break;
	case GEV_MEMSET:
		ev.cat = "gpu_memset";
		tp_format(name, sizeof(name), "Memset (%s)", memory_kind_str(e->mem_kind));
		break;
	default:
		ev.cat = "cuda_sync";
		ev.name = sync_type_str(e->sync_type);
		ev.name_stable = 1;
		break;
	}
	ev.name_len = (uint32_t)strlen(ev.name);
	unsigned n = common_args(args, e, dev, corr);
	if (e->kind == GEV_KERNEL) {
		args[n++] = TP_ARG(u64, "registers per thread", e->regs);
		args[n++] = TP_ARG(u64, "shared memory", e->shared);
		int3_arg(&args[n++], "grid", 4, e->grid, grid);
		int3_arg(&args[n++], "block", 5, e->block, block);
		kernel_occupancy(args, &n, e, dev);
	} else if (e->kind == GEV_MEMCPY || e->kind == GEV_MEMSET) {
		bandwidth(args, &n, e);
	} else {
		const char *k = sync_type_str(e->sync_type);
		args[n++] = TP_ARG(str, "cuda_sync_kind", k, strlen(k), 1);
		if (e->sync_type == 1 || e->sync_type == 2) { /* Event Sync, Stream Wait Event */
			args[n++] = TP_ARG(i64, "wait_on_stream", e->wait_stream);
			args[n++] = TP_ARG(i64, "wait_on_cuda_event_record_corr_id",
					   record_number(e->wait_record));
			args[n++] = TP_ARG(u64, "wait_on_cuda_event_id", e->wait_event);
		}
	}
	ev.nargs = (uint16_t)n;
	tp_writer_event(out, &ev);
}

/* One end of an arrow (Kineto's "ac2g"): FLOW_OUT at the launching call,
 * FLOW_IN at the GPU event. */
static void write_flow(struct tp_writer *out, int kind, uint64_t id, int64_t pid, int64_t tid,
		       uint64_t ts)
{
	struct tp_event e = {
		.kind = (uint8_t)kind,
		.name_stable = 1,
		.name_len = 4,
		.cat = "ac2g",
		.name = "ac2g",
		.pid = pid,
		.tid = tid,
		.ts = ts,
		.end = ts,
		.id = id,
	};
	tp_writer_event(out, &e);
}

/* GPU processes sort after every host process (Kineto does the same). */
#define GPU_SORT_BASE 5000000

struct track {
	uint32_t dev;
	int32_t stream;
};

static int keep_api(uint64_t k, uint64_t v, uint64_t a, void *ctx)
{
	(void)k;
	(void)a;
	return v > *(uint64_t *)ctx;
}

/* How long a CUDA event's record is kept for the waits on it. */
#define EVENT_KEEP_NS 60000000000ull

static int keep_event(uint64_t k, uint64_t v, uint64_t a, void *ctx)
{
	(void)k;
	(void)v;
	return a >= *(uint64_t *)ctx;
}

static int keep_corr(uint64_t k, uint64_t v, uint64_t a, void *ctx)
{
	(void)k;
	(void)v;
	/* aux: the time it was noted; 0 once its GPU event is written. */
	return a != 0 && a > *(uint64_t *)ctx;
}

/* ---- gpu_user_annotation ------------------------------------------------
 *
 * Kineto's layout: on each stream that ran GPU work launched inside a CPU
 * user annotation (a step or a marker), one complete event of category
 * gpu_user_annotation with the annotation's name, on the GPU's pid and the
 * stream's tid, from the first such start to the last such end.  Holistic
 * Trace Analysis attributes each kernel to the innermost one that holds it.
 * The annotations come from the collector's store (collector/annos.h); a launch belongs to
 * every annotation of its thread open at the call's start. */

struct ga_launch {
	int64_t tid;
	uint64_t api; /* the call's start */
	uint32_t dev;
	int32_t stream;
	uint64_t start, end;
};

struct ga_span {
	size_t anno, next; /* next: the annotation's next span + 1, 0 at the end */
	uint32_t dev;
	int32_t stream;
	uint64_t start, end;
};

static int ga_launch_cmp(const void *a, const void *b)
{
	const struct ga_launch *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->api < y->api ? -1 : x->api > y->api;
}

static const struct tp_anno *ga_annos;

/* By thread, then start, longest first: a parent before its children. */
static int ga_anno_cmp(const void *a, const void *b)
{
	const struct tp_anno *x = &ga_annos[*(const size_t *)a];
	const struct tp_anno *y = &ga_annos[*(const size_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* Adds launch l to annotation k's span on l's stream.  head[k]: its first
 * span + 1.  Returns -1 when out of memory (the rest are then skipped). */
static int ga_add(struct ga_span **spans, size_t *n, size_t *cap, size_t *head, size_t k,
		  const struct ga_launch *l)
{
	for (size_t s = head[k]; s; s = (*spans)[s - 1].next) {
		struct ga_span *g = &(*spans)[s - 1];
		if (g->dev == l->dev && g->stream == l->stream) {
			if (l->start < g->start)
				g->start = l->start;
			if (l->end > g->end)
				g->end = l->end;
			return 0;
		}
	}
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct ga_span *p = realloc(*spans, c * sizeof(*p));
		if (!p)
			return -1;
		*spans = p;
		*cap = c;
	}
	(*spans)[*n] = (struct ga_span){ k, head[k], l->dev, l->stream, l->start, l->end };
	head[k] = ++*n;
	return 0;
}

static void write_gpu_annotations(struct tp_writer *out, struct ga_launch *ls, size_t nl,
				  int64_t pid)
{
	size_t na;
	ga_annos = tp_annos(&na);
	size_t *idx = malloc((na ? na : 1) * sizeof(*idx));
	size_t *head = calloc(na ? na : 1, sizeof(*head));
	size_t *stack = malloc((na ? na : 1) * sizeof(*stack));
	struct ga_span *spans = NULL;
	size_t nspans = 0, cap = 0, ni = 0;
	if (!idx || !head || !stack)
		goto out;
	for (size_t i = 0; i < na; i++)
		if (ga_annos[i].pid == pid)
			idx[ni++] = i;
	if (ni > 1)
		qsort(idx, ni, sizeof(*idx), ga_anno_cmp);
	if (nl > 1)
		qsort(ls, nl, sizeof(*ls), ga_launch_cmp);
	/* One sweep per thread: annotations open at each launch's call. */
	size_t a = 0, depth = 0;
	int64_t cur = 0;
	for (size_t i = 0; i < nl; i++) {
		const struct ga_launch *l = &ls[i];
		if (i == 0 || l->tid != cur) {
			cur = l->tid;
			depth = 0;
			while (a < ni && ga_annos[idx[a]].tid < cur)
				a++;
		}
		while (a < ni && ga_annos[idx[a]].tid == cur && ga_annos[idx[a]].start <= l->api) {
			while (depth && ga_annos[stack[depth - 1]].end < ga_annos[idx[a]].start)
				depth--;
			stack[depth++] = idx[a++];
		}
		size_t keep = 0;
		for (size_t d = 0; d < depth; d++)
			if (ga_annos[stack[d]].end >= l->api)
				stack[keep++] = stack[d];
		depth = keep;
		for (size_t d = 0; d < depth; d++)
			if (ga_add(&spans, &nspans, &cap, head, stack[d], l) < 0)
				goto write;
	}
write:
	for (size_t s = 0; s < nspans; s++) {
		const struct ga_span *g = &spans[s];
		const struct tp_anno *an = &ga_annos[g->anno];
		tp_writer_slice(out, "gpu_user_annotation", tp_anno_name(an), an->name_len,
				TP_GPU_PID(g->dev), g->stream, g->start, g->end, NULL, 0);
	}
out:
	free(idx);
	free(head);
	free(stack);
	free(spans);
}

void tp_gpu_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
			  int64_t pid)
{
	struct ga_launch *launches = NULL;
	size_t nlaunch = 0, caplaunch = 0;
	struct track tracks[512];
	int ntracks = 0;
	uint64_t devs = 0;
	size_t k = 0;
	if (G.nnotes > 1) /* qsort's base may not be NULL, even for 0 */
		qsort(G.notes, G.nnotes, sizeof(*G.notes), note_cmp);
	for (size_t i = 0; i < G.n; i++) {
		struct gev *e = &G.ev[i];
		uint64_t *aux = NULL, *api_corr = NULL;
		uint64_t *ext = map_get(&G.corr, (uint64_t)e->corr + 1, &aux);
		if (!ext && link_outer(e->corr))
			ext = map_get(&G.corr, (uint64_t)e->corr + 1, &aux);
		uint64_t *api = ext ? map_get(&G.api, *ext, &api_corr) : NULL;
		int in_api = api && *api >= first_ns && *api <= last_ns;
		int in_gpu = e->start >= first_ns && e->start <= last_ns;
		if (!in_api && !in_gpu) {
			/* Older than this window: no later window wants it. */
			if (e->start > last_ns || (api && *api > last_ns))
				G.ev[k++] = *e;
			else if (aux)
				*aux = 0;
			continue;
		}
		uint32_t dev = event_device(e);
		uint64_t corr = in_api ? *api_corr : 0;
		/* One id per arrow, not the correlation: a graph launch causes
		 * several kernels, and a viewer binds an id's start to one end
		 * only.  32 bits: traceprof merge moves each input's ids to its
		 * own range above them.  Writers that bind arrows to slices use
		 * the correlation instead (write_event()). */
		uint64_t flow = in_api ? (G.next_flow = G.next_flow % 0xffffffffu + 1) : 0;
		write_event(out, e, dev, corr);
		if (in_api) {
			int64_t tid = (int64_t)(*ext >> TP_GPU_EXT_TICK_BITS);
			write_flow(out, TP_EV_FLOW_OUT, flow, pid, tid, *api);
			write_flow(out, TP_EV_FLOW_IN, flow, TP_GPU_PID(dev), (int32_t)e->stream,
				   e->start);
			if (e->kind != GEV_SYNC && nlaunch == caplaunch) {
				size_t c = caplaunch ? caplaunch * 2 : 1024;
				struct ga_launch *p = realloc(launches, c * sizeof(*p));
				if (p) {
					launches = p;
					caplaunch = c;
				}
			}
			if (e->kind != GEV_SYNC && nlaunch < caplaunch)
				launches[nlaunch++] = (struct ga_launch){
					tid, *api, dev, (int32_t)e->stream, e->start, e->end
				};
		}
		if (aux)
			*aux = 0;
		if (dev < 64)
			devs |= 1ull << dev;
		int seen = 0;
		for (int t = 0; t < ntracks && !seen; t++)
			seen = tracks[t].dev == dev && tracks[t].stream == (int32_t)e->stream;
		if (!seen && ntracks < (int)(sizeof(tracks) / sizeof(tracks[0])))
			tracks[ntracks++] = (struct track){ dev, (int32_t)e->stream };
	}
	G.n = k;
	write_gpu_annotations(out, launches, nlaunch, pid);
	free(launches);
	/* Launches up to this window's end were written: their annotations
	 * are not needed again. */
	tp_annos_drop_before(last_ns + 1);
	for (uint32_t d = 0; d < 64; d++) {
		if (!(devs & (1ull << d)))
			continue;
		char name[32];
		tp_format(name, sizeof(name), "GPU %u", d);
		tp_writer_process(out, TP_GPU_PID(d), name, NULL, GPU_SORT_BASE + d);
	}
	for (int t = 0; t < ntracks; t++) {
		char name[32];
		tp_format(name, sizeof(name), "stream %d", tracks[t].stream);
		tp_writer_thread(out, TP_GPU_PID(tracks[t].dev), tracks[t].stream, name,
				 tracks[t].stream);
	}
	/* API records up to this window's end were written here or into an
	 * earlier window: no later window can link to them. */
	map_filter(&G.api, keep_api, &last_ns);
	uint64_t zero = 0;
	map_filter(&G.corr, keep_corr, &zero);
	/* The same for the calls' times, and CUPTI's records of the calls. */
	notes_drop_before(last_ns + 1);
	map_filter(&G.outer, keep_api, &last_ns);
	/* CUDA events recorded long before: a wait on one is reported with
	 * its stream unknown, which bounds the map. */
	uint64_t old = last_ns > EVENT_KEEP_NS ? last_ns - EVENT_KEEP_NS : 0;
	map_filter(&G.events, keep_event, &old);
}

void tp_gpu_prune(uint64_t now_ns, uint64_t keep_ns)
{
	uint64_t old = now_ns > EVENT_KEEP_NS ? now_ns - EVENT_KEEP_NS : 0;
	map_filter(&G.events, keep_event, &old);
	uint64_t before = now_ns > keep_ns ? now_ns - keep_ns : 0;
	size_t k = 0;
	for (size_t i = 0; i < G.n; i++)
		if (G.ev[i].end >= before)
			G.ev[k++] = G.ev[i];
	G.n = k;
	tp_annos_drop_before(before);
	map_filter(&G.api, keep_api, &before);
	map_filter(&G.corr, keep_corr, &before);
	notes_drop_before(before);
	map_filter(&G.outer, keep_api, &before);
}

/* ---- device properties -------------------------------------------------- */

void tp_gpu_set_device(int index, const struct tp_gpu_device *d)
{
	if (index < 0 || index >= TP_GPU_MAX_DEVICES)
		return;
	G.dev[index] = *d;
	G.have_dev[index] = 1;
	G.props_ok = 0;
}

const struct tp_doc *tp_gpu_device_properties(void)
{
	if (G.props_ok)
		return &G.props;
	struct tp_doc *d = &G.props;
	tp_doc_reset(d);
	int n = 0;
	tp_doc_array(d, NULL);
	for (int i = 0; i < TP_GPU_MAX_DEVICES; i++) {
		if (!G.have_dev[i])
			continue;
		const struct tp_gpu_device *p = &G.dev[i];
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
	G.props_ok = 1;
	return d;
}
