/* Unit tests for collector/gpu.c: CUPTI activity records (built by hand from
 * the toolkit's cupti_activity.h) become Kineto-style GPU events, ac2g flows
 * and GPU track metadata, on the host clock, in the right window. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_activity.h>

#include "collector/convert.h"
#include "collector/cuda_kernels.h"
#include "collector/cuda_record.h"
#include "collector/emit.h"
#include "collector/gpu.h"
#include "collector/kernel_names.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "format/writer.h"

#include "test/unit/check_main.h"
#include "test/unit/writer_text.h"

#define HOST_PID 4242
#define HOST_TID 77

/* The file being written (the JSON writer; time base 0: ts = monotonic ns
 * / 1000) and everything written so far. */
static struct wt wt;
#define tr (wt.w)

static void trace_new(void)
{
	wt_open(&wt, NULL);
}

static const char *trace_text(void)
{
	return wt_text(&wt);
}

static void setup(void)
{
	tp_gpu_reset();
	trace_new();
}

static void teardown(void)
{
	wt_free(&wt);
	tp_gpu_reset();
}

static void ext_corr(uint32_t corr, uint64_t ext)
{
	CUpti_ActivityExternalCorrelation x;
	memset(&x, 0, sizeof(x));
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	x.externalId = ext;
	x.correlationId = corr;
	ck_assert_int_eq(tp_gpu_parse_record(&x), 1);
}

static void kernel(const char *name, uint64_t start, uint64_t end, uint32_t stream,
		   uint32_t corr)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start;
	k.end = end;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = stream;
	k.correlationId = corr;
	k.name = name;
	k.gridX = 132;
	k.gridY = 2;
	k.gridZ = 1;
	k.blockX = 256;
	k.blockY = 1;
	k.blockZ = 1;
	k.registersPerThread = 32;
	k.staticSharedMemory = 1024;
	k.dynamicSharedMemory = 3072;
	ck_assert_int_eq(tp_gpu_parse_record(&k), 1);
}

/* A CUPTI runtime or driver API record (CUPTI's thread id and clock). */
static int api_record(CUpti_ActivityKind kind, uint32_t corr, uint32_t thread, uint64_t start,
		      uint64_t end)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.correlationId = corr;
	a.threadId = thread;
	a.start = start;
	a.end = end;
	return tp_gpu_parse_record(&a);
}

#define HAS(s) ck_assert_msg(strstr(trace_text(), (s)) != NULL, "missing %s in %s", (s), \
			     trace_text())
#define HASNT(s) ck_assert_msg(strstr(trace_text(), (s)) == NULL, "unexpected %s in %s", \
			       (s), trace_text())

START_TEST(test_kernel_event_and_flow)
{
	uint64_t api_ticks = 0x123456789ull;
	uint64_t ext = tp_gpu_ext_id(HOST_TID, api_ticks);
	/* The API record was converted (convert.c) at 1000 ns, as the
	 * process's first: its event was written with "correlation":1. */
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, api_ticks, 1000, 1500), 1);
	ext_corr(9, ext);
	kernel("my_kernel", 5000, 7500, 7, 9);
	ck_assert_uint_eq(tp_gpu_pending(), 1);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	/* The kernel carries the API event's number, not CUPTI's 9. */
	HAS("{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"my_kernel\",\"pid\":1000000000,\"tid\":7,"
	    "\"ts\":5.000,\"dur\":2.500,\"args\":{\"device\":0,\"context\":1,\"stream\":7,"
	    "\"correlation\":1,\"registers per thread\":32,\"shared memory\":4096,"
	    "\"grid\":[132,2,1],\"block\":[256,1,1]");
	/* The flow starts at the API event's start on its host thread and ends
	 * at the kernel, bound to the enclosing slice. */
	HAS("{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":4242,\"tid\":77,"
	    "\"ts\":1.000}");
	HAS("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1000000000,"
	    "\"tid\":7,\"ts\":5.000}");
	HASNT("\"correlation\":9");
	HAS("\"name\":\"process_name\"");
	HAS("\"GPU 0\"");
	HAS("\"stream 7\"");
	HAS("\"process_sort_index\"");
	ck_assert_uint_eq(tp_gpu_pending(), 0);
}
END_TEST

/* A runtime traceprof cannot interpose (nvcc's static cudart, the one inside
 * cuBLAS): the kernel carries the correlation of that runtime call, which
 * came with no id of ours, and CUPTI records no driver call made inside it.
 * Our API event on the same thread that overlaps the runtime call's record
 * most is its driver call.  Threads are real ones registered with the
 * collector: CUPTI names them by the low 32 bits of pthread_self(). */
struct other_thread {
	uint32_t cupti;
	int64_t tid;
};

static void *register_other(void *arg)
{
	struct other_thread *o = arg;
	struct tp_thread *t = tp_thread_create_self();
	ck_assert_ptr_nonnull(t);
	o->cupti = t->cupti_thread;
	o->tid = t->tid;
	return NULL;
}

START_TEST(test_hidden_runtime_link)
{
	struct tp_thread *me = tp_emit_self();
	ck_assert_ptr_nonnull(me);
	ck_assert_uint_eq(me->cupti_thread, (uint32_t)(uintptr_t)pthread_self());
	struct other_thread other;
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, register_other, &other), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(tp_threads_tid_of_cupti(other.cupti), other.tid);
	const uint32_t mine = me->cupti_thread;

	/* 1: the driver call inside runtime call 30, starting 300 ns before
	 * CUPTI's record of it (two ways to the same clock). */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 500, 9700, 10900), 1);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 30, mine, 10000, 11000), 1);
	kernel("hidden_launch", 12000, 12500, 7, 30);
	/* 2, 3: two of our calls overlap runtime call 31; the longer overlap
	 * wins. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 600, 20000, 20400), 2);
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 700, 20500, 22000), 3);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 31, mine, 20000, 22100), 1);
	kernel("longest_overlap", 23000, 23100, 7, 31);
	/* 4: ours, at the time of another thread's runtime call 32: not linked. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 800, 30000, 31000), 4);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 32, other.cupti, 29900, 31100), 1);
	kernel("other_thread", 32000, 32100, 7, 32);
	/* 5: a CUPTI thread id no registered thread has: any thread's call. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 900, 40000, 41000), 5);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 33, 0xdead0000u, 39900, 41100), 1);
	kernel("unknown_thread", 42000, 42100, 7, 33);
	/* A runtime call that contains none of ours. */
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 34, mine, 50000, 51000), 1);
	kernel("nothing_inside", 52000, 52100, 7, 34);
	/* A driver record without an id is never a hidden outer call (every
	 * driver call that can cause GPU work pushes its own): not kept. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 1000, 60000, 61000), 6);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_DRIVER, 35, mine, 59900, 61100), 0);
	kernel("driver_outer", 62000, 62100, 7, 35);

	tp_gpu_window_events(tr, 0, 100000, HOST_PID);
	HAS("\"name\":\"hidden_launch\",\"pid\":1000000000,\"tid\":7,\"ts\":12.000,\"dur\":0.500,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":1,");
	HAS("\"name\":\"longest_overlap\",\"pid\":1000000000,\"tid\":7,\"ts\":23.000,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":3,");
	HAS("\"name\":\"other_thread\",\"pid\":1000000000,\"tid\":7,\"ts\":32.000,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"registers");
	HAS("\"name\":\"unknown_thread\",\"pid\":1000000000,\"tid\":7,\"ts\":42.000,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":5,");
	HAS("\"name\":\"nothing_inside\",\"pid\":1000000000,\"tid\":7,\"ts\":52.000,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"registers");
	HAS("\"name\":\"driver_outer\",\"pid\":1000000000,\"tid\":7,\"ts\":62.000,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"registers");
	/* The arrow of the first starts at our driver call, on our thread. */
	char want[160];
	snprintf(want, sizeof(want),
		 "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":4242,"
		 "\"tid\":%lld,\"ts\":9.700}",
		 (long long)me->tid);
	HAS(want);
}
END_TEST

/* A graph launch: one API event, two kernels with its correlation.  Each
 * arrow has an id of its own (a viewer binds one start to one end). */
START_TEST(test_graph_launch_arrows)
{
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, 700, 3000, 3500), 1);
	ext_corr(40, tp_gpu_ext_id(HOST_TID, 700));
	kernel("graph_a", 4000, 4100, 7, 40);
	kernel("graph_b", 4200, 4300, 7, 40);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"name\":\"graph_a\",\"pid\":1000000000,\"tid\":7,\"ts\":4.000,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":1,");
	HAS("\"name\":\"graph_b\",\"pid\":1000000000,\"tid\":7,\"ts\":4.200,\"dur\":0.100,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":1,");
	HAS("{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":4242,\"tid\":77,"
	    "\"ts\":3.000}");
	HAS("{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":4242,\"tid\":77,"
	    "\"ts\":3.000}");
	HAS("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":1000000000,"
	    "\"tid\":7,\"ts\":4.000}");
	HAS("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":1000000000,"
	    "\"tid\":7,\"ts\":4.200}");
}
END_TEST

START_TEST(test_no_flow_without_api)
{
	/* No external correlation: the kernel is written by its time, alone. */
	kernel("lonely", 2000, 3000, 3, 11);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"name\":\"lonely\"");
	HASNT("\"ph\":\"s\"");
	HASNT("\"ph\":\"f\"");
	/* No API event to pair with: no correlation either. */
	HASNT("\"correlation\"");
}
END_TEST

START_TEST(test_correlation_pairs_api_and_gpu)
{
	/* Three API events of two threads, numbered as they are written; the
	 * GPU events find their own through CUPTI's correlation ids, in any
	 * order. */
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, 100, 1000, 1500), 1);
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID + 1, 100, 1500, 2000), 2);
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, 200, 2000, 2500), 3);
	ext_corr(40, tp_gpu_ext_id(HOST_TID, 200));
	ext_corr(41, tp_gpu_ext_id(HOST_TID + 1, 100));
	ext_corr(42, tp_gpu_ext_id(HOST_TID, 100));
	kernel("k3", 6000, 6500, 7, 40);
	kernel("k2", 5000, 5500, 7, 41);
	kernel("k1", 4000, 4500, 7, 42);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"name\":\"k1\",\"pid\":1000000000,\"tid\":7,\"ts\":4.000,\"dur\":0.500,\"args\":{"
	    "\"device\":0,\"context\":1,\"stream\":7,\"correlation\":1,");
	HAS("\"name\":\"k2\",\"pid\":1000000000,\"tid\":7,\"ts\":5.000,\"dur\":0.500,\"args\":{"
	    "\"device\":0,\"context\":1,\"stream\":7,\"correlation\":2,");
	HAS("\"name\":\"k3\",\"pid\":1000000000,\"tid\":7,\"ts\":6.000,\"dur\":0.500,\"args\":{"
	    "\"device\":0,\"context\":1,\"stream\":7,\"correlation\":3,");
	/* Arrows are numbered in the order the GPU events are written (k3, k2,
	 * k1): the second one starts at k2's launch, on its own thread. */
	HAS("\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,\"pid\":4242,\"tid\":78,"
	    "\"ts\":1.500}");

	/* The next window: a kernel of a launch written into the first one
	 * is placed by its time, unpaired, and numbers keep growing. */
	wt_free(&wt);
	trace_new();
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, 300, 20000, 20500), 4);
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, 400, 21000, 21500), 5);
	ext_corr(50, tp_gpu_ext_id(HOST_TID, 400));
	ext_corr(51, tp_gpu_ext_id(HOST_TID, 100)); /* forgotten after window 1 */
	kernel("late_k1", 22000, 23000, 7, 51);
	kernel("k5", 24000, 25000, 7, 50);
	tp_gpu_window_events(tr, 15000, 30000, HOST_PID);
	HAS("\"name\":\"late_k1\",\"pid\":1000000000,\"tid\":7,\"ts\":22.000,\"dur\":1.000,\"args\":{"
	    "\"device\":0,\"context\":1,\"stream\":7,\"registers per thread\"");
	HAS("\"name\":\"k5\",\"pid\":1000000000,\"tid\":7,\"ts\":24.000,\"dur\":1.000,\"args\":{"
	    "\"device\":0,\"context\":1,\"stream\":7,\"correlation\":5,");
	HASNT("\"correlation\":1,");
	/* Arrow ids count arrows, on from the first window's three; the
	 * unpaired kernel has none. */
	HAS("\"id\":4,");
	HASNT("\"id\":5,");
	HASNT("\"id\":1,");
}
END_TEST

START_TEST(test_kernel_after_window_follows_its_launch)
{
	/* Launched inside the window, run after its end: it belongs to it. */
	uint64_t ext = tp_gpu_ext_id(HOST_TID, 42);
	tp_gpu_note_api(HOST_TID, 42, 9000, 9500);
	ext_corr(5, ext);
	kernel("late", 20000, 21000, 7, 5);
	tp_gpu_window_events(tr, 1000, 10000, HOST_PID);
	HAS("\"name\":\"late\"");
	HAS("\"ph\":\"s\"");
}
END_TEST

START_TEST(test_convert_writes_the_pair)
{
	/* convert.c numbers an API event while CUPTI records (flows on) and
	 * writes the number in its args; its kernel gets the same. */
	struct tp_thread th;
	memset(&th, 0, sizeof(th));
	th.tid = HOST_TID;
	struct tp_record r;
	memset(&r, 0, sizeof(r));
	r.kind = TP_REC_API;
	r.start = 1000000;
	r.end = 1002000;
	/* cuGraphLaunch: one that CUPTI links GPU work to (TP_CUDA_F_CORR),
	 * decoded by collector/cuda_decode.c. */
	r.id = TP_CUDA_NFUNCS;
	for (uint32_t i = 0; i < TP_CUDA_NFUNCS; i++)
		if (!strcmp(tp_cuda_fns[i].name, "cuGraphLaunch"))
			r.id = i;
	ck_assert_uint_lt(r.id, TP_CUDA_NFUNCS);
	ck_assert(tp_cuda_fns[r.id].flags & TP_CUDA_F_CORR);
	tp_gpu_flows_start();
	tp_convert_record(tr, &th, &r, HOST_PID);
	tp_gpu_flows_off();
	HAS("\"name\":\"cuGraphLaunch\"");
	HAS("\"args\":{\"result\":0,\"correlation\":1,\"graph exec\"");
	uint64_t b = tp_clock_to_ns(r.start);
	ext_corr(77, tp_gpu_ext_id(HOST_TID, r.start));
	kernel("paired", b + 5000, b + 6000, 7, 77);
	tp_gpu_window_events(tr, b, b + 10000, HOST_PID);
	HAS("\"name\":\"paired\"");
	HAS("\"stream\":7,\"correlation\":1,");
	/* Not recording GPU activity: no number. */
	tp_convert_record(tr, &th, &r, HOST_PID);
	HAS("\"args\":{\"result\":0,\"graph exec\"");
}
END_TEST

START_TEST(test_windows_split_events)
{
	kernel("before", 100, 200, 1, 1);
	kernel("inside", 2000, 2100, 1, 2);
	kernel("after", 50000, 50100, 1, 3);
	tp_gpu_window_events(tr, 1000, 10000, HOST_PID);
	HAS("\"name\":\"inside\"");
	HASNT("\"name\":\"before\"");
	HASNT("\"name\":\"after\"");
	/* "before" is older than the window: gone; "after" waits. */
	ck_assert_uint_eq(tp_gpu_pending(), 1);
	wt_free(&wt);
	trace_new();
	tp_gpu_window_events(tr, 40000, 60000, HOST_PID);
	HAS("\"name\":\"after\"");
	ck_assert_uint_eq(tp_gpu_pending(), 0);
}
END_TEST

START_TEST(test_memcpy_memset_sync)
{
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 4000;
	m.start = 1000;
	m.end = 3000;
	m.deviceId = 1;
	m.contextId = 2;
	m.streamId = 13;
	m.correlationId = 21;
	ck_assert_int_eq(tp_gpu_parse_record(&m), 1);
	CUpti_ActivityMemset4 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.bytes = 100;
	s.start = 4000;
	s.end = 4000;
	s.deviceId = 1;
	s.contextId = 2;
	s.streamId = 13;
	s.correlationId = 22;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	ck_assert_int_eq(tp_gpu_parse_record(&s), 1);
	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof(y));
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	y.start = 5000;
	y.end = 6000;
	y.contextId = 2; /* device 1, learned from the copy */
	y.streamId = 13;
	y.correlationId = 23;
	ck_assert_int_eq(tp_gpu_parse_record(&y), 1);
	/* An API record that came with an id of ours: nothing to keep. */
	ext_corr(24, tp_gpu_ext_id(HOST_TID, 5));
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.correlationId = 24;
	ck_assert_int_eq(tp_gpu_parse_record(&a), 0);

	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"pid\":1000000001,"
	    "\"tid\":13,\"ts\":1.000,\"dur\":2.000,\"args\":{\"device\":1,\"context\":2,"
	    "\"stream\":13,\"bytes\":4000,\"memory bandwidth (GB/s)\":2}");
	HAS("\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":1000000001,\"tid\":13,"
	    "\"ts\":4.000,\"dur\":0.000,\"args\":{\"device\":1,\"context\":2,\"stream\":13,"
	    "\"bytes\":100,\"memory bandwidth (GB/s)\":\"N/A\"}");
	HAS("\"cat\":\"cuda_sync\",\"name\":\"Stream Sync\",\"pid\":1000000001,\"tid\":13,"
	    "\"ts\":5.000,\"dur\":1.000,\"args\":{\"device\":1,\"context\":2,\"stream\":13,"
	    "\"cuda_sync_kind\":\"Stream Sync\"}");
	HAS("\"GPU 1\"");
}
END_TEST

static void sync_record(CUpti_ActivitySynchronizationType type, uint64_t start, uint32_t stream,
			uint32_t event, uint32_t corr)
{
	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof(y));
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = type;
	y.start = start;
	y.end = start + 1000;
	y.contextId = 1;
	y.streamId = stream;
	y.cudaEventId = event;
	y.correlationId = corr;
	ck_assert_int_eq(tp_gpu_parse_record(&y), 1);
}

/* Kineto's wait fields (issue 20 item 5): a sync on a CUDA event names the
 * stream that recorded it and the cudaEventRecord's correlation number. */
START_TEST(test_sync_wait_fields)
{
	/* cudaEventRecord(event 5, stream 9): numbered 1 by convert.c; CUPTI
	 * calls it 300 and writes its CUDA_EVENT record. */
	ck_assert_uint_eq(tp_gpu_note_api(HOST_TID, 700, 1000, 1100), 1);
	ext_corr(300, tp_gpu_ext_id(HOST_TID, 700));
	CUpti_ActivityCudaEvent2 c;
	memset(&c, 0, sizeof(c));
	c.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	c.correlationId = 300;
	c.contextId = 1;
	c.streamId = 9;
	c.eventId = 5;
	ck_assert_int_eq(tp_gpu_parse_record(&c), 1);
	/* Stream 7 waits on it; the host waits on it; then on an event whose
	 * record CUPTI did not report; a stream sync has no event. */
	sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 2000, 7, 5, 301);
	sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 4000, 0xffffffffu, 5, 302);
	sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 6000, 0xffffffffu, 6, 303);
	sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 8000, 7, 0xffffffffu, 304);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"name\":\"Stream Wait Event\",\"pid\":1000000000,\"tid\":7,\"ts\":2.000,"
	    "\"dur\":1.000,\"args\":{\"device\":0,\"context\":1,\"stream\":7,"
	    "\"cuda_sync_kind\":\"Stream Wait Event\",\"wait_on_stream\":9,"
	    "\"wait_on_cuda_event_record_corr_id\":1,\"wait_on_cuda_event_id\":5}");
	HAS("\"ts\":4.000,\"dur\":1.000,\"args\":{\"device\":0,\"context\":1,\"stream\":-1,"
	    "\"cuda_sync_kind\":\"Event Sync\",\"wait_on_stream\":9,"
	    "\"wait_on_cuda_event_record_corr_id\":1,\"wait_on_cuda_event_id\":5}");
	HAS("\"cuda_sync_kind\":\"Event Sync\",\"wait_on_stream\":-1,"
	    "\"wait_on_cuda_event_record_corr_id\":-1,\"wait_on_cuda_event_id\":6}");
	HAS("\"ts\":8.000,\"dur\":1.000,\"args\":{\"device\":0,\"context\":1,\"stream\":7,"
	    "\"cuda_sync_kind\":\"Stream Sync\"}");
}
END_TEST

START_TEST(test_clock_offset)
{
	/* Without our timestamp callback CUPTI reports CLOCK_REALTIME: the
	 * offset brings it back onto the host events' monotonic clock. */
	tp_gpu_set_clock_offset(1000000);
	kernel("shifted", 1003000, 1004000, 1, 1);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"name\":\"shifted\",\"pid\":1000000000,\"tid\":1,\"ts\":3.000,\"dur\":1.000");
}
END_TEST

START_TEST(test_device_properties_and_occupancy)
{
	ck_assert_ptr_null(tp_gpu_device_properties());
	struct tp_gpu_device d;
	memset(&d, 0, sizeof(d));
	strcpy(d.name, "NVIDIA H100 80GB HBM3");
	d.total_global_mem = 85520809984ull;
	d.compute_major = 9;
	d.compute_minor = 0;
	d.max_threads_per_block = 1024;
	d.max_threads_per_sm = 2048;
	d.regs_per_block = 65536;
	d.warp_size = 32;
	d.shared_per_block = 49152;
	d.num_sms = 132;
	d.regs_per_sm = 65536;
	d.shared_per_block_optin = 232448;
	d.shared_per_sm = 233472;
	d.max_blocks_per_sm = 32;
	tp_gpu_set_device(0, &d);
	const struct tp_doc *doc = tp_gpu_device_properties();
	ck_assert_ptr_nonnull(doc);
	/* As the JSON writer writes the document in a file's header. */
	struct wt dw;
	wt_open(&dw, doc);
	const char *p = strstr(wt_text(&dw), "[{\"id\"");
	ck_assert_ptr_nonnull(p);
	char *line = strndup(p, strcspn(p, "\n"));
	ck_assert_str_eq(line, "[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
			    "\"totalGlobalMem\":85520809984,\"computeMajor\":9,\"computeMinor\":0,"
			    "\"maxThreadsPerBlock\":1024,\"maxThreadsPerMultiprocessor\":2048,"
			    "\"regsPerBlock\":65536,\"warpSize\":32,\"sharedMemPerBlock\":49152,"
			    "\"numSms\":132,\"regsPerMultiprocessor\":65536,"
			    "\"sharedMemPerBlockOptin\":232448,"
			    "\"sharedMemPerMultiprocessor\":233472}],");
	free(line);
	wt_free(&dw);
	/* 264 blocks of 256 threads on 132 SMs: 2 blocks, 16 warps per SM; 8
	 * blocks could fit (threads), so all 16 of 64 warps run: 25 %. */
	kernel("occ", 1000, 2000, 7, 1);
	tp_gpu_window_events(tr, 0, 10000, HOST_PID);
	HAS("\"blocks per SM\":2,\"warps per SM\":16,\"est. achieved occupancy %\":25}");
}
END_TEST

START_TEST(test_kernel_names_interned)
{
	char a[] = "kernel_a";
	const char *n1 = tp_gpu_intern_kernel_name(a);
	const char *n2 = tp_gpu_intern_kernel_name(a);
	ck_assert_ptr_eq(n1, n2);
	ck_assert_str_eq(n1, "kernel_a");
	/* The same address reused for another name. */
	strcpy(a, "kernel_b");
	ck_assert_str_eq(tp_gpu_intern_kernel_name(a), "kernel_b");
	ck_assert_str_eq(tp_gpu_intern_kernel_name(NULL), "kernel");
}
END_TEST

START_TEST(test_kernel_names_once)
{
	/* One copy per kernel for the process: the GPU event's name (from
	 * CUPTI) and the API event's (from __cudaRegisterFunction's
	 * registry) are the same string, demangled once. */
	char cupti[] = "_Z6kernelPf";
	const char *gpu = tp_gpu_intern_kernel_name(cupti);
	static const char stub;
	tp_cuda_kernels_register(&stub, "_Z6kernelPf");
	uint32_t len = 0;
	const char *api = tp_cuda_kernels_name_len(&stub, &len);
	ck_assert_ptr_eq(api, gpu);
	ck_assert_ptr_eq(tp_kernel_name_shown("_Z6kernelPf", NULL), gpu);
	ck_assert_uint_eq(len, strlen(gpu));
}
END_TEST

START_TEST(test_prune_and_ext_id)
{
	kernel("old", 1000, 2000, 1, 1);
	kernel("new", 900000000, 900001000, 1, 2);
	tp_gpu_prune(905000000, 10000000);
	ck_assert_uint_eq(tp_gpu_pending(), 1);
	/* Thread id and the low tick bits, recoverable on the flush side. */
	uint64_t e = tp_gpu_ext_id(4194303, ~0ull);
	ck_assert_uint_eq(e >> TP_GPU_EXT_TICK_BITS, 4194303);
	ck_assert_uint_eq(e & ((1ull << TP_GPU_EXT_TICK_BITS) - 1),
			  (1ull << TP_GPU_EXT_TICK_BITS) - 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cupti_convert");
	TCase *tc = tcase_create("gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_kernel_event_and_flow);
	tcase_add_test(tc, test_no_flow_without_api);
	tcase_add_test(tc, test_hidden_runtime_link);
	tcase_add_test(tc, test_graph_launch_arrows);
	tcase_add_test(tc, test_correlation_pairs_api_and_gpu);
	tcase_add_test(tc, test_convert_writes_the_pair);
	tcase_add_test(tc, test_kernel_after_window_follows_its_launch);
	tcase_add_test(tc, test_windows_split_events);
	tcase_add_test(tc, test_memcpy_memset_sync);
	tcase_add_test(tc, test_clock_offset);
	tcase_add_test(tc, test_device_properties_and_occupancy);
	tcase_add_test(tc, test_sync_wait_fields);
	tcase_add_test(tc, test_kernel_names_interned);
	tcase_add_test(tc, test_kernel_names_once);
	tcase_add_test(tc, test_prune_and_ext_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(suite());
}
