/* Unit tests for collector/gpu.c's pairing of CUPTI activity records with
 * the API calls that caused them: Kineto-style GPU events, ac2g flows and
 * correlation numbers, on the host clock, in the right window (the records'
 * own fields: test_cupti_fields.c). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_activity.h>

#include "collector/convert.h"
#include "collector/cuda_kernels.h"
#include "collector/cuda_record.h"
#include "collector/hot.h"
#include "collector/gpu.h"
#include "collector/kernel_names.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "format/writer.h"

#include "test/unit/check_main.h"
#include "test/unit/writer_text.h"
#include "test/unit/cupti_records.h"

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

/* While a window records, each drain writes a kernel linked through a
 * hidden runtime call's record only once every call of ours on that thread
 * that can overlap the record is noted, so that the link is the window
 * end's: a call converted late (its thread preempted before the commit)
 * must not lose its kernel to a shorter neighbour, whatever other threads'
 * later calls were converted meanwhile (issue 44: the 1 ms lag of time that
 * this replaced linked such a kernel to the neighbour). */
START_TEST(test_hidden_runtime_streamed)
{
	struct tp_thread *me = tp_emit_self();
	ck_assert_ptr_nonnull(me);
	const uint32_t mine = me->cupti_thread;
	/* 1: a short call of ours inside runtime call 40; 2: another thread's
	 * call 2 ms later, converted before our second call inside 40. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 500, 10100, 10200), 1);
	ck_assert_uint_eq(tp_gpu_note_api(me->tid + 1, 600, 2000000, 2000100), 2);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 40, mine, 10000, 11000), 1);
	kernel("streamed_late", 12000, 12500, 7, 40);
	tp_gpu_stream_events(tr, 0, 10000000, HOST_PID);
	HASNT("streamed_late");
	ck_assert_uint_eq(tp_gpu_pending(), 1);
	/* 3: the launch, longer, inside 40 too; nothing of ours after it yet. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 700, 10300, 10950), 3);
	tp_gpu_stream_events(tr, 0, 10000000, HOST_PID);
	HASNT("streamed_late");
	/* 4: our next call, after 40 ended: now 40's calls are all known. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 800, 20000, 20100), 4);
	tp_gpu_stream_events(tr, 0, 10000000, HOST_PID);
	HAS("\"name\":\"streamed_late\",\"pid\":1000000000,\"tid\":7,\"ts\":12.000,\"dur\":0.500,"
	    "\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":3,");
	ck_assert_uint_eq(tp_gpu_pending(), 0);
	/* 5: a record of a thread traceprof does not know (any thread's call
	 * counts): linked at the window's end only. */
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 900, 30000, 31000), 5);
	ck_assert_uint_eq(tp_gpu_note_api(me->tid, 1000, 40000, 40100), 6);
	ck_assert_int_eq(api_record(CUPTI_ACTIVITY_KIND_RUNTIME, 41, 0xdead0000u, 29900, 31100), 1);
	kernel("unknown_streamed", 32000, 32100, 7, 41);
	tp_gpu_stream_events(tr, 0, 10000000, HOST_PID);
	HASNT("unknown_streamed");
	tp_gpu_window_events(tr, 0, 10000000, HOST_PID);
	HAS("\"name\":\"unknown_streamed\",\"pid\":1000000000,\"tid\":7,\"ts\":32.000,"
	    "\"dur\":0.100,\"args\":{\"device\":0,\"context\":1,\"stream\":7,\"correlation\":5,");
	/* Each written once. */
	const char *t = trace_text(), *a = strstr(t, "\"streamed_late\"");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(strstr(a + 1, "\"streamed_late\""));
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
	tcase_add_test(tc, test_hidden_runtime_streamed);
	tcase_add_test(tc, test_graph_launch_arrows);
	tcase_add_test(tc, test_correlation_pairs_api_and_gpu);
	tcase_add_test(tc, test_convert_writes_the_pair);
	tcase_add_test(tc, test_kernel_after_window_follows_its_launch);
	tcase_add_test(tc, test_windows_split_events);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(suite());
}
