/* TEST STAND-IN, NOT NVIDIA'S CUPTI.
 *
 * A libcupti.so.13 for traceprof's tests on machines without a GPU, where the
 * real CUPTI cannot record anything.  It implements the activity calls that
 * preload/cupti.c makes, with the real header's record layouts, and pretends
 * that every call made between cuptiActivityPushExternalCorrelationId and the
 * matching pop launched one kernel: it hands out a correlation id of its own
 * (starting at 1001, so that it never equals traceprof's numbers by
 * accident), and on the next flush delivers, as CUPTI does, an
 * EXTERNAL_CORRELATION record (that id -> the pushed external id) and a
 * CONCURRENT_KERNEL record named "standin_kernel" on device 0, stream 7,
 * starting 1 us after the push on the registered timestamp clock.  Records
 * go to the buffer callbacks registered when they are flushed, and are made
 * only while both kinds are enabled: a second client (a test program acting
 * as torch.profiler) gets its own pushes' records once it has registered and
 * enabled them.
 *
 * Built as build/standin/libcupti.so.13 with that soname; a test preloads it
 * so that traceprof finds it already loaded, as in a PyTorch process.  With
 * FAKE_CUPTI_REPORT set it prints at exit, on stderr, how many ids were
 * pushed, how many kernels it made up, and how many times the kernel kind
 * was switched on and off ("fake_cupti: pushes=N kernels=N on=N off=N").
 *
 * With FAKE_CUPTI_WORKER set, a thread of the stand-in's own also delivers
 * the pending records every 100 us, as CUPTI's worker thread hands over
 * buffers while the program runs, so that buffers arrive on a thread other
 * than the one that flushes; FAKE_CUPTI_PER_BUFFER=N puts at most N kernels
 * in a buffer, and FAKE_CUPTI_DROPPED=N makes cuptiActivityGetNumDroppedRecords
 * say N for every completed buffer.  The report then has a second line:
 * "fake_cupti: buffers=N refused=N dropped=N" (buffers handed back, requests
 * that got none, drops reported).
 *
 * A program that plays a runtime traceprof cannot interpose (the runtime
 * inside cuBLAS) calls fake_cupti_runtime_enter() and fake_cupti_runtime_exit()
 * around its driver call, as that runtime reports its own calls to CUPTI
 * (test/programs/gpu_die.c with FAKE_CUPTI_HIDDEN_RUNTIME).  A kernel pushed
 * in between comes as real CUPTI gives it when the outermost call is hidden:
 * no EXTERNAL_CORRELATION record, but a RUNTIME API record of its
 * correlation from the enter to the exit (around traceprof's own driver
 * call), with the calling thread's id (the low 32 bits of pthread_self(), as
 * traceprof registers it), handed over only once the exit came.  traceprof
 * links it to its own call on that thread that overlaps it most.
 * (FAKE_CUDA_LAUNCH_US, fake_cuda.c, makes that call long enough for the
 * overlap to outweigh the two clocks' skew.) */
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SI __attribute__((visibility("default")))

enum { MAX_PENDING = 4096 };

struct pending {
	CUpti_ExternalCorrelationKind kind;
	uint64_t ext;
	uint32_t corr;
	uint64_t start;
	/* Pushed inside fake_cupti_runtime_enter/exit: a RUNTIME record
	 * [rt_start, rt_end] on thread rt_thread, not the id's; rt_end is 0
	 * until the exit. */
	int hidden;
	uint64_t rt_start, rt_end;
	uint32_t rt_thread;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_TimestampCallbackFunc clock_fn;
static struct pending pend[MAX_PENDING];
static int npend;
static uint32_t next_corr = 1001;
static int enabled_kernels, enabled_ext; /* under mu */
static int pushes, made, ons, offs;	 /* under mu */
static int bufs, refusals;		 /* under mu */
static _Atomic unsigned long long drops_said;
static int per_buffer = 1 << 30, drop_each;
static __thread uint64_t pushed[16];
static __thread int depth;
/* The hidden runtime call this thread is in: its start (0: none) and the
 * correlation of the kernel pushed inside it (0: none yet). */
static __thread uint64_t rt_start;
static __thread uint32_t rt_corr;

static void start_worker(void);

static uint64_t now_ns(void)
{
	if (clock_fn)
		return clock_fn();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

SI CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

SI CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "stand-in: success" : "stand-in: error";
	return CUPTI_SUCCESS;
}

SI CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	clock_fn = f;
	return CUPTI_SUCCESS;
}

SI CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
							CUpti_BuffersCallbackCompleteFunc done)
{
	requested = req;
	completed = done;
	start_worker();
	return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, int on)
{
	pthread_mutex_lock(&mu);
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
		if (on && !enabled_kernels)
			ons++;
		else if (!on && enabled_kernels)
			offs++;
		enabled_kernels = on;
	}
	else if (kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
		enabled_ext = on;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

__attribute__((destructor)) static void report(void)
{
	if (!getenv("FAKE_CUPTI_REPORT"))
		return;
	pthread_mutex_lock(&mu);
	fprintf(stderr, "fake_cupti: pushes=%d kernels=%d on=%d off=%d\n", pushes, made, ons, offs);
	if (getenv("FAKE_CUPTI_WORKER"))
		fprintf(stderr, "fake_cupti: buffers=%d refused=%d dropped=%llu\n", bufs, refusals,
			drops_said);
	pthread_mutex_unlock(&mu);
}

SI CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 1);
}

SI CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 0);
}

SI CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
							   size_t *dropped)
{
	*dropped = (size_t)drop_each;
	drops_said += (unsigned long long)drop_each;
	return CUPTI_SUCCESS;
}

SI CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
								uint64_t id)
{
	if (depth < 16)
		pushed[depth] = id;
	depth++;
	pthread_mutex_lock(&mu);
	pushes++;
	if (enabled_kernels && enabled_ext && npend < MAX_PENDING) {
		int hidden = rt_start && !rt_corr;
		if (hidden)
			rt_corr = next_corr;
		pend[npend++] = (struct pending){ kind,	     id,       next_corr++,
						  now_ns() + 1000, hidden, rt_start,
						  0,	     (uint32_t)(uintptr_t)pthread_self() };
		made++;
	}
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

SI CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
							       uint64_t *last)
{
	if (depth <= 0)
		return CUPTI_ERROR_INVALID_OPERATION;
	depth--;
	if (last)
		*last = depth < 16 ? pushed[depth] : 0;
	return CUPTI_SUCCESS;
}

/* A hidden runtime call begins on this thread (see the top). */
SI void fake_cupti_runtime_enter(void);
SI void fake_cupti_runtime_enter(void)
{
	rt_start = now_ns();
	rt_corr = 0;
}

/* It ends: its record can be handed over. */
SI void fake_cupti_runtime_exit(void);
SI void fake_cupti_runtime_exit(void)
{
	uint64_t end = now_ns();
	if (rt_corr) {
		pthread_mutex_lock(&mu);
		for (int i = npend - 1; i >= 0; i--)
			if (pend[i].corr == rt_corr) {
				pend[i].rt_end = end;
				break;
			}
		pthread_mutex_unlock(&mu);
	}
	rt_start = 0;
	rt_corr = 0;
}

static size_t record_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return sizeof(CUpti_ActivityAPI);
	default:
		return 0;
	}
}

/* Records are packed one after another, each at an 8-byte aligned offset. */
static size_t aligned(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Hands the pending records over in buffers (mu held). */
static void deliver(void)
{
	int i = 0;
	/* A hidden runtime call's record waits for its exit, and the rest
	 * after it, in order. */
	int ready = 0;
	while (ready < npend && (!pend[ready].hidden || pend[ready].rt_end))
		ready++;
	while (i < ready && requested && completed) {
		uint8_t *buf = NULL;
		size_t size = 0, maxrec = 0, used = 0;
		requested(&buf, &size, &maxrec);
		if (!buf) {
			refusals++; /* kept pending: handed over next time */
			break;
		}
		const size_t need = aligned(sizeof(CUpti_ActivityExternalCorrelation)) +
				    aligned(sizeof(CUpti_ActivityAPI)) +
				    aligned(sizeof(CUpti_ActivityKernel10));
		for (int n = 0; i < ready && used + need <= size && n < per_buffer; i++, n++) {
			if (pend[i].hidden) {
				CUpti_ActivityAPI a;
				memset(&a, 0, sizeof(a));
				a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
				a.start = pend[i].rt_start;
				a.end = pend[i].rt_end;
				a.correlationId = pend[i].corr;
				a.threadId = pend[i].rt_thread;
				memcpy(buf + used, &a, sizeof(a));
				used += aligned(sizeof(a));
			} else {
				CUpti_ActivityExternalCorrelation x;
				memset(&x, 0, sizeof(x));
				x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
				x.externalKind = pend[i].kind;
				x.externalId = pend[i].ext;
				x.correlationId = pend[i].corr;
				memcpy(buf + used, &x, sizeof(x));
				used += aligned(sizeof(x));
			}
			CUpti_ActivityKernel10 k;
			memset(&k, 0, sizeof(k));
			k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
			k.start = pend[i].start;
			k.end = pend[i].start + 2000;
			k.deviceId = 0;
			k.contextId = 1;
			k.streamId = 7;
			k.correlationId = pend[i].corr;
			k.name = "standin_kernel";
			k.gridX = k.gridY = k.gridZ = 1;
			k.blockX = 32;
			k.blockY = k.blockZ = 1;
			memcpy(buf + used, &k, sizeof(k));
			used += aligned(sizeof(k));
		}
		bufs++;
		completed(NULL, 0, buf, size, used);
	}
	memmove(pend, pend + i, (size_t)(npend - i) * sizeof(pend[0]));
	npend -= i;
}

SI CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	pthread_mutex_lock(&mu);
	deliver();
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
}

static void *worker(void *arg)
{
	struct timespec t = { 0, 100000 };
	for (;;) {
		nanosleep(&t, NULL);
		pthread_mutex_lock(&mu);
		deliver();
		pthread_mutex_unlock(&mu);
	}
	return arg;
}

/* The worker, once, when the first client registers (FAKE_CUPTI_WORKER). */
static void start_worker(void)
{
	static int started;
	if (started || !getenv("FAKE_CUPTI_WORKER"))
		return;
	started = 1;
	const char *n = getenv("FAKE_CUPTI_PER_BUFFER");
	if (n && atoi(n) > 0)
		per_buffer = atoi(n);
	n = getenv("FAKE_CUPTI_DROPPED");
	if (n)
		drop_each = atoi(n);
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) == 0)
		pthread_detach(th);
}

SI CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
						    CUpti_Activity **record)
{
	size_t off = 0;
	if (*record) {
		size_t n = record_size(*record);
		if (!n)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)((uint8_t *)*record - buffer) + aligned(n);
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(void *)(buffer + off);
	return CUPTI_SUCCESS;
}
