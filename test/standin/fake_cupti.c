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
 * was switched on and off ("fake_cupti: pushes=N kernels=N on=N off=N"). */
#include <cupti.h>
#include <pthread.h>
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
static __thread uint64_t pushed[16];
static __thread int depth;

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
	if (getenv("FAKE_CUPTI_REPORT"))
		fprintf(stderr, "fake_cupti: pushes=%d kernels=%d on=%d off=%d\n", pushes, made, ons,
			offs);
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
	*dropped = 0;
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
		pend[npend++] = (struct pending){ kind, id, next_corr++, now_ns() + 1000 };
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

static size_t record_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return sizeof(CUpti_ActivityExternalCorrelation);
	default:
		return 0;
	}
}

/* Records are packed one after another, each at an 8-byte aligned offset. */
static size_t aligned(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

SI CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	pthread_mutex_lock(&mu);
	int i = 0;
	while (i < npend && requested && completed) {
		uint8_t *buf = NULL;
		size_t size = 0, maxrec = 0, used = 0;
		requested(&buf, &size, &maxrec);
		if (!buf)
			break;
		const size_t need = aligned(sizeof(CUpti_ActivityExternalCorrelation)) +
				    aligned(sizeof(CUpti_ActivityKernel10));
		for (; i < npend && used + need <= size; i++) {
			CUpti_ActivityExternalCorrelation x;
			memset(&x, 0, sizeof(x));
			x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
			x.externalKind = pend[i].kind;
			x.externalId = pend[i].ext;
			x.correlationId = pend[i].corr;
			memcpy(buf + used, &x, sizeof(x));
			used += aligned(sizeof(x));
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
		completed(NULL, 0, buf, size, used);
	}
	memmove(pend, pend + i, (size_t)(npend - i) * sizeof(pend[0]));
	npend -= i;
	pthread_mutex_unlock(&mu);
	return CUPTI_SUCCESS;
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
