/* Unit tests for collector/gpu.c: the fields of CUPTI's copy, memset,
 * synchronization and device records, the clock offset, kernel names kept
 * once, and pruning (pairing with API calls: test_cupti_convert.c). */
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
	Suite *s = suite_create("cupti_fields");
	TCase *tc = tcase_create("gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
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
