/* CUPTI activity tracing (preload/cupti.h): loading, Kineto's settings,
 * buffers handed to the flush thread, device properties, and the footer.
 *
 * Threads:
 *   - tp_cupti_on_cuinit() runs once on the thread of the first successful
 *     cuInit: load, register callbacks, enable kinds.
 *   - CUPTI's buffer callbacks run on CUPTI's or the program's threads: they
 *     allocate, or push a completed buffer onto a lock-free list.
 *   - The flush thread parses buffers (collector/gpu.c), writes events, and
 *     queries device properties through the real driver.
 *   - An atexit handler, registered after libcupti was loaded and so run
 *     before libcupti's own exit handlers, flushes CUPTI one last time and
 *     copies the records out of its buffers; after it nothing calls CUPTI.
 *   - Another CUPTI client (torch.profiler, ...) registering its buffer
 *     callbacks, on its own thread (tp_cupti_client_register, through
 *     preload/cupti_hook.c): traceprof gives CUPTI up to it, or never loads
 *     it if that client came first. */
#include "preload/cupti.h"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/control.h"
#include "collector/flush.h"
#include "common/clock.h"
#include "common/log.h"
#include "preload/cuda_pack.h"
#include "preload/cupti_hook.h"
#include "preload/init.h"

_Atomic int tp_cupti_corr_on;

#define BUF_SIZE (4u << 20) /* Kineto's size */
#define MAX_BUFS 32	    /* at most 128 MB of CUPTI buffers */
#define BUF_HEADER 64	    /* struct buf lives just before the data */

enum state {
	ST_IDLE = 0,	/* not loaded (no successful cuInit yet, or off) */
	ST_LOADING = 1, /* tp_cupti_on_cuinit() at work */
	ST_ACTIVE = 2,	/* recording GPU activity */
	ST_FAILED = 3,	/* host-only mode; the warning was given */
	ST_STOPPED = 4, /* process exit: records copied out, CUPTI untouched */
	ST_YIELDING = 5, /* another client registers: giving CUPTI up */
	ST_YIELDED = 6,	 /* CUPTI belongs to another client; our buffers parsed */
};

struct buf {
	struct buf *next;
	size_t valid;
};
_Static_assert(sizeof(struct buf) <= BUF_HEADER, "header fits before the data");

/* Records copied out of CUPTI's buffers at exit, packed one after another
 * at 8-byte boundaries (record_size()), so that the flush thread parses them
 * without calling CUPTI. */
struct flat {
	struct flat *next;
	size_t len;
	_Alignas(8) unsigned char data[];
};

static struct {
	void *h;
	__typeof__(&cuptiGetVersion) GetVersion;
	__typeof__(&cuptiGetResultString) GetResultString;
	__typeof__(&cuptiActivityRegisterTimestampCallback) RegisterTimestampCallback;
	__typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
	__typeof__(&cuptiActivityEnable) Enable;
	__typeof__(&cuptiActivityDisable) Disable;
	__typeof__(&cuptiActivityFlushAll) FlushAll;
	__typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
	__typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDroppedRecords;
	__typeof__(&cuptiActivityPushExternalCorrelationId) PushExternalCorrelationId;
	__typeof__(&cuptiActivityPopExternalCorrelationId) PopExternalCorrelationId;
} C;

static _Atomic int state;
/* Whether our activity kinds are on (written under client_mu; the flush
 * thread's unlocked relaxed read is only a hint, checked again locked). */
static _Atomic int kinds_on;
static int mode = TP_CUPTI_OFF;
static uint32_t version;
static char status[200] = "off";

/* Serializes our registration (load()) with another client's, so that
 * exactly one of "it came first" and "it came after us" holds. */
static pthread_mutex_t client_mu = PTHREAD_MUTEX_INITIALIZER;
static int other_client; /* under client_mu: another client registered */
/* The footer's text after a yield: written once, before `yielded` is set
 * (release; the footer's acquire load pairs with it). */
static char yield_status[200];
static _Atomic int yielded;
static _Atomic uint64_t yield_ticks; /* when, on the records' clock */

static _Atomic(struct buf *) done;   /* completed buffers, newest first */
static _Atomic(struct flat *) flats; /* records copied at exit */
static _Atomic int nbufs;
static _Atomic uint64_t dropped, refused;
/* Set by the flush thread while it reads CUPTI buffers with
 * cuptiActivityGetNextRecord; the exit handler waits for it to clear. */
static _Atomic int flush_parsing;
static int props_done; /* flush thread */
/* Device properties, read on the thread that loaded CUPTI, right after
 * cuInit (the driver may be gone by the time an exit-time save runs).
 * Written before devs_ready's release store; the flush thread reads them
 * after its acquire load. */
static struct tp_gpu_device devs[TP_GPU_MAX_DEVICES];
static int devs_ok[TP_GPU_MAX_DEVICES];
static _Atomic int devs_ready;
static uint64_t last_flush_ns;

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
	/* CUPTI writes EXTERNAL_CORRELATION records only next to API records,
	 * so the runtime and driver kinds are on, as in Kineto; their records
	 * are skipped (the interposed calls are the host events). */
	CUPTI_ACTIVITY_KIND_DRIVER,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	/* Last, and optional (a CUPTI without it still records the rest):
	 * which stream recorded each CUDA event, for the syncs' wait fields
	 * (collector/gpu.c). */
	CUPTI_ACTIVITY_KIND_CUDA_EVENT,
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
static size_t nenabled; /* under client_mu: kinds[0..nenabled) are on */

/* The bytes of a record parse_flats() needs (0: not one of ours), rounded up
 * to keep the next one aligned. */
static size_t record_size(const CUpti_Activity *rec)
{
	size_t n;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		n = sizeof(CUpti_ActivityKernel10);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		n = sizeof(CUpti_ActivityMemcpy6);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		n = sizeof(CUpti_ActivityMemset4);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		n = sizeof(CUpti_ActivitySynchronization2);
		break;
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		n = sizeof(CUpti_ActivityExternalCorrelation);
		break;
	case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
		n = sizeof(CUpti_ActivityCudaEvent);
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		/* collector/gpu.c links GPU events through them. */
		n = sizeof(CUpti_ActivityAPI);
		break;
	default:
		return 0;
	}
	return (n + 7) & ~(size_t)7;
}

/* ---- callbacks ---------------------------------------------------------- */

static uint64_t CUPTIAPI timestamp(void)
{
	/* After a yield the records are another client's: CUPTI's own clock,
	 * CLOCK_REALTIME, which that client expects unless it registered a
	 * callback of its own (that replaces this one).  Relaxed: the flag is
	 * set before the client's registration goes through. */
	if (atomic_load_explicit(&yielded, memory_order_relaxed)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	/* The clock host events are converted to (common/clock.h). */
	return tp_clock_monotonic_ns();
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*buffer = NULL;
	*size = 0;
	/* Bounded: with every buffer waiting for the flush thread, CUPTI drops
	 * records and counts them (cuptiActivityGetNumDroppedRecords). */
	if (atomic_fetch_add_explicit(&nbufs, 1, memory_order_relaxed) >= MAX_BUFS) {
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
		return;
	}
	unsigned char *p = aligned_alloc(BUF_HEADER, BUF_HEADER + BUF_SIZE);
	if (!p) {
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
		return;
	}
	*buffer = p + BUF_HEADER;
	*size = BUF_SIZE;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	(void)size;
	if (!buffer)
		return;
	size_t n = 0;
	/* No lock of ours is held here (Kineto's deadlock with CUPTI's lock). */
	if (C.GetNumDroppedRecords(ctx, stream, &n) == CUPTI_SUCCESS && n)
		atomic_fetch_add_explicit(&dropped, n, memory_order_relaxed);
	struct buf *b = (struct buf *)(void *)(buffer - BUF_HEADER);
	b->valid = valid;
	struct buf *head = atomic_load_explicit(&done, memory_order_relaxed);
	do
		b->next = head;
	/* Release: the buffer's contents before its publication; pairs with the
	 * acquire exchange in take_done(). */
	while (!atomic_compare_exchange_weak_explicit(&done, &head, b, memory_order_release,
						      memory_order_relaxed));
}

/* ---- loading ------------------------------------------------------------ */

static const char *result_str(CUptiResult r)
{
	const char *s = NULL;
	if (C.GetResultString && C.GetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

/* The wrappers stop pushing ids: calls already past their test finish on
 * the path they took. */
static void stop_pushing(void)
{
	atomic_store_explicit(&tp_cupti_corr_on, 0, memory_order_relaxed);
	tp_control_set_full(TP_FULL_CUPTI, 0);
}

/* Our activity kinds off (client_mu held, or while loading under it). */
static void kinds_off_locked(void)
{
	while (nenabled > 0)
		C.Disable(kinds[--nenabled]);
	atomic_store_explicit(&kinds_on, 0, memory_order_relaxed);
}

/* Host-only mode from now on, with the one message of the process. */
static void give_up(const char *why)
{
	stop_pushing();
	kinds_off_locked();
	tp_format(status, sizeof(status), "unavailable: %s", why);
	if (mode == TP_CUPTI_ON)
		tp_error("TRACEPROF_CUPTI=on: no GPU timeline: %s; recording host-side CUDA calls "
			 "only",
			 why);
	else
		tp_warn("no GPU timeline (%s); recording host-side CUDA calls only "
			"(TRACEPROF_CUPTI=off silences this)",
			why);
	atomic_store_explicit(&state, ST_FAILED, memory_order_release);
}

struct loaded_cupti {
	char path[300];
};

/* dl_iterate_phdr callback: the path of a loaded libcupti.so*, if any. */
static int find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct loaded_cupti *found = data;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "libcupti.so", 11))
		return 0;
	tp_format(found->path, sizeof(found->path), "%s", name);
	return 1;
}

static void *open_cupti(char *err, size_t errlen)
{
	const char *env_home = getenv("CUDA_HOME");
	char p1[600], p2[600];
	tp_format(p1, sizeof(p1), "%s/lib64/libcupti.so", env_home ? env_home : TRACEPROF_CUDA_HOME);
	tp_format(p2, sizeof(p2), "%s/extras/CUPTI/lib64/libcupti.so",
		  env_home ? env_home : TRACEPROF_CUDA_HOME);
	/* A libcupti the process already has (PyTorch's, from its wheel or a
	 * toolkit) first: a second copy would compete with it for the driver's
	 * callbacks.  The version check in load() still applies to it. */
	void *loaded = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (loaded)
		return loaded;
	/* Another CUPTI (another CUDA major's, e.g. a PyTorch built for CUDA
	 * 12): loading ours next to it could break the program's own
	 * profiling, so stay host-only. */
	struct loaded_cupti other = { "" };
	if (dl_iterate_phdr(find_cupti, &other) && other.path[0]) {
		tp_format(err, (int)errlen,
			  "another CUPTI is already loaded (%s); a second one would compete with "
			  "it",
			  other.path);
		return NULL;
	}
	/* Then the toolkit this library was built against: its record layouts
	 * are the ones collector/gpu.c reads. */
	const char *const tries[] = { TRACEPROF_CUDA_HOME "/lib64/libcupti.so.13", "libcupti.so.13",
				      p1, p2, "libcupti.so" };
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		void *h = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	const char *e = dlerror();
	tp_format(err, (int)errlen, "cannot load libcupti (%s)", e ? e : "not found");
	return NULL;
}

/* A lookup with libc's dlsym, never our hook (preload/cuda_dlsym.c), which
 * would hand out our wrappers of the driver and our interposed
 * cuptiActivityRegisterCallbacks. */
static void *real_sym(void *h, const char *name)
{
	tp_dlsym_fn dl = (tp_dlsym_fn)tp_cuda_dlsym_resolve();
	return dl ? dl(h, name) : NULL;
}

#define RESOLVE(field, sym, required)                                                   \
	do {                                                                            \
		C.field = (__typeof__(C.field))real_sym(C.h, #sym);                     \
		if (!C.field && (required)) {                                           \
			tp_format(err, sizeof(err), "libcupti lacks %s", #sym);         \
			give_up(err);                                           \
			return;                                                 \
		}                                                                       \
	} while (0)

static void at_exit(void);
static void after_fork_child(void);

/* Turns our activity kinds on or off (client_mu held).  Off, CUPTI adds
 * nothing measurable to the program's CUDA calls (bench/gpu: about 2.6 us a
 * launch while on, even in steps that record nothing), and the wrappers push
 * no ids.  Returns 0, or -1 after give_up(). */
static int set_kinds_locked(int on)
{
	if (on) {
		for (; nenabled < NKINDS; nenabled++) {
			CUptiResult r = C.Enable(kinds[nenabled]);
			if (r != CUPTI_SUCCESS && kinds[nenabled] == CUPTI_ACTIVITY_KIND_CUDA_EVENT) {
				tp_debug("cuptiActivityEnable(CUDA_EVENT): %s; syncs on CUDA "
					 "events without their wait fields", result_str(r));
				break;
			}
			if (r != CUPTI_SUCCESS) {
				char err[300];
				tp_format(err, sizeof(err), "cuptiActivityEnable(%d): %s",
					  (int)kinds[nenabled], result_str(r));
				give_up(err);
				return -1;
			}
		}
		atomic_store_explicit(&tp_cupti_corr_on, 1, memory_order_relaxed);
		/* Launches and copies then take the path that pushes their ids. */
		tp_control_set_full(TP_FULL_CUPTI, 1);
		atomic_store_explicit(&kinds_on, 1, memory_order_relaxed);
	} else {
		stop_pushing();
		kinds_off_locked();
		/* Hands over what was recorded, for the windows still to come. */
		C.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	return 0;
}

static int wants_gpu(enum tp_action a)
{
	return a == TP_ACT_WARMUP || tp_action_records(a);
}

/* Whether CUPTI should record now: in WARMUP and recording steps, as
 * torch.profiler does, and also in the step before one (the flush thread
 * switches the kinds on within TRACEPROF_FLUSH_MS, so that a window without
 * warm-up still gets its first kernels) and the step after one (kernels
 * still running when a window's last step ends keep their records). */
static int gpu_wanted(void)
{
	uint64_t s = tp_control_current_step();
	return wants_gpu(tp_control_action(s)) || wants_gpu(tp_control_action(s + 1)) ||
	       (s > 0 && wants_gpu(tp_control_action(s - 1)));
}

static void query_devices(void);

static void load_locked(void)
{
	char err[300];
	CUptiResult r;
	C.h = open_cupti(err, sizeof(err));
	if (!C.h) {
		give_up(err);
		return;
	}
	RESOLVE(GetVersion, cuptiGetVersion, 1);
	RESOLVE(GetResultString, cuptiGetResultString, 0);
	RESOLVE(RegisterTimestampCallback, cuptiActivityRegisterTimestampCallback, 0);
	RESOLVE(RegisterCallbacks, cuptiActivityRegisterCallbacks, 1);
	RESOLVE(Enable, cuptiActivityEnable, 1);
	RESOLVE(Disable, cuptiActivityDisable, 1);
	RESOLVE(FlushAll, cuptiActivityFlushAll, 1);
	RESOLVE(GetNextRecord, cuptiActivityGetNextRecord, 1);
	RESOLVE(GetNumDroppedRecords, cuptiActivityGetNumDroppedRecords, 1);
	RESOLVE(PushExternalCorrelationId, cuptiActivityPushExternalCorrelationId, 1);
	RESOLVE(PopExternalCorrelationId, cuptiActivityPopExternalCorrelationId, 1);
	if ((r = C.GetVersion(&version)) != CUPTI_SUCCESS) {
		tp_format(err, sizeof(err), "cuptiGetVersion: %s", result_str(r));
		give_up(err);
		return;
	}
	/* Record layouts change between CUDA major versions. */
	if (version / 10000 != CUPTI_API_VERSION / 10000) {
		tp_format(err, sizeof(err), "libcupti API version %u, traceprof was built for %u",
			  version, (unsigned)CUPTI_API_VERSION);
		give_up(err);
		return;
	}
	/* Before any kind is enabled, so that every record uses it; without it
	 * CUPTI's clock is CLOCK_REALTIME, shifted back to ours when parsed. */
	if (!C.RegisterTimestampCallback ||
	    C.RegisterTimestampCallback(timestamp) != CUPTI_SUCCESS)
		tp_gpu_set_clock_offset(tp_clock_wall_offset_ns());
	if ((r = C.RegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
		tp_format(err, sizeof(err), "cuptiActivityRegisterCallbacks: %s", result_str(r));
		give_up(err);
		return;
	}
	/* Every kind once, so that a CUPTI that refuses one says so now. */
	if (set_kinds_locked(1) < 0)
		return;
	tp_format(status, sizeof(status), "active");
	atexit(at_exit);
	pthread_atfork(NULL, NULL, after_fork_child);
	query_devices();
	/* Release pairs with the acquire loads of the flush thread. */
	atomic_store_explicit(&state, ST_ACTIVE, memory_order_release);
	if (!gpu_wanted())
		set_kinds_locked(0);
	tp_debug("CUPTI %u: loaded; GPU activity recorded in WARMUP and recording steps",
		 version);
}

static void load(void)
{
	pthread_mutex_lock(&client_mu);
	if (other_client)
		give_up("another CUPTI client, such as torch.profiler, registered its activity "
			"callbacks first and keeps CUPTI");
	else
		load_locked();
	pthread_mutex_unlock(&client_mu);
}

/* Gives CUPTI up to another client that is about to register (client_mu
 * held, state ST_YIELDING): our partly filled buffers come back to our own
 * callbacks while they are still the registered ones, our kinds go off (the
 * client enables what it wants), and no call pushes our ids any more.  A
 * call that read tp_cupti_corr_on just before may still push one id into the
 * client's records. */
static void yield(void)
{
	stop_pushing();
	C.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	kinds_off_locked();
	unsigned long long step = (unsigned long long)tp_control_current_step();
	tp_format(yield_status, sizeof(yield_status),
		  "yielded at step %llu: another CUPTI client registered its activity callbacks",
		  step);
	atomic_store_explicit(&yield_ticks, tp_clock_now(), memory_order_relaxed);
	/* Release pairs with the acquire loads of the footer and of
	 * cupti_pass(): the text and the time before the flag. */
	atomic_store_explicit(&yielded, 1, memory_order_release);
	/* Release pairs with the flush thread's acquire loads: it parses what
	 * the flush above handed over, and calls CUPTI no more. */
	atomic_store_explicit(&state, ST_YIELDED, memory_order_release);
	tp_warn("another CUPTI client (torch.profiler?) took the GPU activity records at step "
		"%llu; traceprof leaves CUPTI to it and records host-side CUDA calls only from "
		"here on",
		step);
}

CUptiResult tp_cupti_client_register(tp_cupti_register_fn real, CUpti_BuffersCallbackRequestFunc req,
				     CUpti_BuffersCallbackCompleteFunc complete)
{
	/* NULL callbacks: CUPTI refuses them and changes nothing. */
	if (!req || !complete)
		return real(req, complete);
	int saved = errno;
	pthread_mutex_lock(&client_mu);
	other_client = 1;
	int expect = ST_ACTIVE;
	if (atomic_compare_exchange_strong_explicit(&state, &expect, ST_YIELDING,
						    memory_order_acq_rel, memory_order_relaxed))
		yield();
	errno = saved;
	CUptiResult r = real(req, complete);
	pthread_mutex_unlock(&client_mu);
	return r;
}

void tp_cupti_on_cuinit(int result)
{
	if (mode == TP_CUPTI_OFF || !tp_preload_active())
		return;
	if (atomic_load_explicit(&state, memory_order_relaxed) != ST_IDLE)
		return;
	if (result != 0 && mode != TP_CUPTI_ON)
		return; /* no GPU here: a later successful cuInit may still come */
	int expect = ST_IDLE;
	/* Exactly one caller loads; a cuInit re-entered from CUPTI's own set-up
	 * sees ST_LOADING and returns. */
	if (!atomic_compare_exchange_strong_explicit(&state, &expect, ST_LOADING,
						     memory_order_acq_rel, memory_order_relaxed))
		return;
	if (result != 0) {
		/* TRACEPROF_CUPTI=on: try anyway, so the message names the cause. */
		tp_debug("cuInit returned %d; loading CUPTI anyway (TRACEPROF_CUPTI=on)", result);
	}
	load();
}

/* Both preserve errno: the generated wrappers do not save it around them
 * (the program must see the errno its CUDA call left). */
int tp_cupti_push_slow(uint64_t ext)
{
	int saved = errno;
	int ok = C.PushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ext) ==
		 CUPTI_SUCCESS;
	errno = saved;
	return ok;
}

void tp_cupti_pop_slow(void)
{
	int saved = errno;
	uint64_t last;
	C.PopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
	errno = saved;
}

/* ---- exit and fork ------------------------------------------------------ */

/* Copies the records of one CUPTI buffer into slots (exit only). */
static void flatten(struct buf *b)
{
	uint8_t *data = (uint8_t *)b + BUF_HEADER;
	size_t total = 0;
	CUpti_Activity *rec = NULL;
	while (C.GetNextRecord(data, b->valid, &rec) == CUPTI_SUCCESS)
		total += record_size(rec);
	struct flat *f = malloc(sizeof(*f) + total);
	if (f) {
		f->len = 0;
		rec = NULL;
		while (C.GetNextRecord(data, b->valid, &rec) == CUPTI_SUCCESS) {
			size_t sz = record_size(rec);
			if (!sz || f->len + sz > total)
				continue;
			/* The record's own size may be less than sz (padding). */
			memcpy(f->data + f->len, rec, sz);
			f->len += sz;
		}
		struct flat *head = atomic_load_explicit(&flats, memory_order_relaxed);
		do
			f->next = head;
		/* Pairs with the acquire exchange in parse_flats(). */
		while (!atomic_compare_exchange_weak_explicit(&flats, &head, f,
							      memory_order_release,
							      memory_order_relaxed));
	}
	free(b);
	atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
}

static void at_exit(void)
{
	/* After a yield, CUPTI is another client's: only our buffers are
	 * copied out. */
	int expect = ST_ACTIVE;
	if (!atomic_compare_exchange_strong_explicit(&state, &expect, ST_STOPPED,
						     memory_order_acq_rel, memory_order_relaxed) &&
	    (expect != ST_YIELDED ||
	     !atomic_compare_exchange_strong_explicit(&state, &expect, ST_STOPPED,
						      memory_order_acq_rel, memory_order_relaxed)))
		return;
	int ours = expect == ST_ACTIVE;
	/* The flush thread switches kinds under client_mu (cupti_pass()). */
	pthread_mutex_lock(&client_mu);
	stop_pushing();
	/* Wait (bounded: a pass parses at most a few buffers) until the flush
	 * thread is out of cuptiActivityGetNextRecord; it sees ST_STOPPED next. */
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 2000 && atomic_load_explicit(&flush_parsing, memory_order_acquire); i++)
		nanosleep(&ms, NULL);
	if (ours) {
		C.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		kinds_off_locked();
	}
	pthread_mutex_unlock(&client_mu);
	/* Pairs with the release CAS in buffer_completed(). */
	struct buf *b = atomic_exchange_explicit(&done, NULL, memory_order_acquire);
	struct buf *rev = NULL;
	while (b) {
		struct buf *next = b->next;
		b->next = rev;
		rev = b;
		b = next;
	}
	/* Oldest first; flats is a stack, so push the newest first. */
	struct buf *order[4 * MAX_BUFS];
	int n = 0;
	for (b = rev; b && n < (int)(sizeof(order) / sizeof(order[0])); b = b->next)
		order[n++] = b;
	while (n-- > 0)
		flatten(order[n]);
}

static void after_fork_child(void)
{
	/* CUDA does not survive fork: the child records host events only. */
	stop_pushing();
	atomic_store_explicit(&state, ST_FAILED, memory_order_relaxed);
	atomic_store_explicit(&done, NULL, memory_order_relaxed);
	atomic_store_explicit(&flats, NULL, memory_order_relaxed);
	atomic_store_explicit(&yielded, 0, memory_order_relaxed);
	tp_gpu_reset();
	tp_format(status, sizeof(status), "off in forked child");
}

/* ---- flush thread ------------------------------------------------------- */

static void parse_done(void)
{
	/* Pairs with the release CAS in buffer_completed(). */
	struct buf *b = atomic_exchange_explicit(&done, NULL, memory_order_acquire);
	struct buf *rev = NULL;
	while (b) {
		struct buf *next = b->next;
		b->next = rev;
		rev = b;
		b = next;
	}
	for (b = rev; b;) {
		struct buf *next = b->next;
		CUpti_Activity *rec = NULL;
		uint8_t *data = (uint8_t *)b + BUF_HEADER;
		while (C.GetNextRecord(data, b->valid, &rec) == CUPTI_SUCCESS)
			tp_gpu_parse_record(rec);
		free(b);
		atomic_fetch_sub_explicit(&nbufs, 1, memory_order_relaxed);
		b = next;
	}
}

static void parse_flats(void)
{
	/* Pairs with the release CAS in flatten(). */
	struct flat *f = atomic_exchange_explicit(&flats, NULL, memory_order_acquire);
	struct flat *rev = NULL;
	while (f) {
		struct flat *next = f->next;
		f->next = rev;
		rev = f;
		f = next;
	}
	for (f = rev; f;) {
		struct flat *next = f->next;
		for (size_t off = 0; off < f->len;) {
			const CUpti_Activity *rec = (const CUpti_Activity *)(void *)(f->data + off);
			tp_gpu_parse_record(rec);
			off += record_size(rec);
		}
		free(f);
		f = next;
	}
}

/* Parses whatever CUPTI handed over; flush = 1 forces CUPTI to hand over
 * its partly filled buffers first. */
static void collect(int flush)
{
	atomic_store_explicit(&flush_parsing, 1, memory_order_seq_cst);
	/* Seq-cst against the exit handler's state change: either it sees
	 * flush_parsing set and waits, or we see ST_STOPPED and stay out. */
	int st = atomic_load_explicit(&state, memory_order_seq_cst);
	if (st == ST_ACTIVE || st == ST_YIELDED) {
		if (flush && st == ST_ACTIVE)
			C.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		parse_done();
	}
	atomic_store_explicit(&flush_parsing, 0, memory_order_release);
	parse_flats();
}

/* Whether the flush thread has GPU records to parse: CUPTI records for us,
 * or did until exit or another client took it. */
static int has_records(int st)
{
	return st == ST_ACTIVE || st == ST_STOPPED || st == ST_YIELDED;
}

static void cupti_pass(uint64_t now_ns)
{
	int st = atomic_load_explicit(&state, memory_order_acquire);
	if (!has_records(st))
		return;
	tp_gpu_flows_on = 1;
	if (st == ST_ACTIVE) {
		int want = gpu_wanted();
		if (want != atomic_load_explicit(&kinds_on, memory_order_relaxed)) {
			pthread_mutex_lock(&client_mu);
			/* Not after exit or a yield took CUPTI (both under the lock). */
			if (atomic_load_explicit(&state, memory_order_acquire) == ST_ACTIVE &&
			    want != atomic_load_explicit(&kinds_on, memory_order_relaxed))
				set_kinds_locked(want);
			pthread_mutex_unlock(&client_mu);
		}
	}
	/* Calls after a yield pushed no id: no number for them. */
	if (atomic_load_explicit(&yielded, memory_order_acquire))
		tp_gpu_flows_until = atomic_load_explicit(&yield_ticks, memory_order_relaxed);
	/* Completed buffers only; CUPTI fills one before handing it over, and a
	 * window forces the rest out when it closes. */
	if (st == ST_ACTIVE && now_ns - last_flush_ns > 500000000ull) {
		last_flush_ns = now_ns;
		C.FlushAll(0);
	}
	collect(0);
	/* Nothing records: GPU events older than 10 s cannot belong to a window
	 * still waiting to be written. */
	if (!tp_action_records(tp_control_action(tp_control_current_step())))
		tp_gpu_prune(now_ns, 10000000000ull);
}

static void cupti_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns,
				int64_t pid)
{
	if (!has_records(atomic_load_explicit(&state, memory_order_acquire)))
		return;
	collect(1);
	tp_gpu_window_events(out, first_ns, last_ns, pid);
}

/* The footer's status text.  `status` is written only while loading (state
 * ST_LOADING), before the release store of the state that ends it, so it is
 * read only after an acquire load has seen another state. */
static const char *status_text(void)
{
	if (atomic_load_explicit(&yielded, memory_order_acquire))
		return yield_status;
	if (atomic_load_explicit(&state, memory_order_acquire) == ST_LOADING)
		return "loading";
	return status;
}

static void cupti_footer(struct tp_doc *d)
{
	tp_doc_object(d, "gpu");
	tp_doc_str(d, "cupti", status_text());
	if (version)
		tp_doc_u64(d, "cupti_version", version);
	tp_doc_u64(d, "cupti_records_dropped", atomic_load_explicit(&dropped, memory_order_relaxed));
	tp_doc_u64(d, "cupti_buffers_refused", atomic_load_explicit(&refused, memory_order_relaxed));
	tp_doc_u64(d, "gpu_events_lost", tp_gpu_lost());
	tp_doc_end(d);
}

static void query_devices(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return;
	__typeof__(&cuDeviceGetCount) get_count = real_sym(h, "cuDeviceGetCount");
	__typeof__(&cuDeviceGet) get = real_sym(h, "cuDeviceGet");
	__typeof__(&cuDeviceGetName) get_name = real_sym(h, "cuDeviceGetName");
	__typeof__(&cuDeviceTotalMem) total = real_sym(h, "cuDeviceTotalMem_v2");
	__typeof__(&cuDeviceGetAttribute) attr = real_sym(h, "cuDeviceGetAttribute");
	int n = 0;
	if (!get_count || !get || !get_name || !total || !attr || get_count(&n) != CUDA_SUCCESS) {
		dlclose(h);
		return;
	}
	for (int i = 0; i < n && i < TP_GPU_MAX_DEVICES; i++) {
		CUdevice dev;
		if (get(&dev, i) != CUDA_SUCCESS)
			continue;
		struct tp_gpu_device d;
		memset(&d, 0, sizeof(d));
		get_name(d.name, sizeof(d.name), dev);
		size_t mem = 0;
		if (total(&mem, dev) == CUDA_SUCCESS)
			d.total_global_mem = mem;
		const struct {
			int *out;
			CUdevice_attribute a;
		} q[] = {
			{ &d.compute_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR },
			{ &d.compute_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR },
			{ &d.max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK },
			{ &d.max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR },
			{ &d.regs_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK },
			{ &d.warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE },
			{ &d.shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK },
			{ &d.num_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT },
			{ &d.regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR },
			{ &d.shared_per_block_optin,
			  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN },
			{ &d.shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR },
			{ &d.max_blocks_per_sm, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR },
		};
		for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++)
			if (attr(q[k].out, q[k].a, dev) != CUDA_SUCCESS)
				*q[k].out = 0;
		devs[i] = d;
		devs_ok[i] = 1;
	}
	dlclose(h);
	/* Pairs with the acquire load in cupti_device_properties(). */
	atomic_store_explicit(&devs_ready, 1, memory_order_release);
}

static const struct tp_doc *cupti_device_properties(void)
{
	if (!props_done && atomic_load_explicit(&devs_ready, memory_order_acquire)) {
		props_done = 1;
		for (int i = 0; i < TP_GPU_MAX_DEVICES; i++)
			if (devs_ok[i])
				tp_gpu_set_device(i, &devs[i]);
	}
	return props_done ? tp_gpu_device_properties() : NULL;
}

static int cupti_init(const struct tp_config *cfg)
{
	mode = cfg->cupti;
	if (mode == TP_CUPTI_OFF) {
		tp_format(status, sizeof(status), "off");
		return 0;
	}
	tp_format(status, sizeof(status), "not loaded: no successful cuInit");
	return 0;
}

static const struct tp_flush_plugin cupti_plugin = {
	.name = "cupti",
	.init = cupti_init,
	.pass = cupti_pass,
	.window_events = cupti_window_events,
	.footer = cupti_footer,
	.device_properties = cupti_device_properties,
};

__attribute__((constructor(200))) static void cupti_register(void)
{
	tp_flush_register(&cupti_plugin);
}
