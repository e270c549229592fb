/* CUPTI activity records built by hand from the toolkit's
 * cupti_activity.h and parsed by collector/gpu.c, into a JSON trace kept in
 * memory: the fixture of the CUPTI decoding suites (test_cupti_convert.c,
 * test_cupti_fields.c). */
#ifndef TP_TEST_CUPTI_RECORDS_H
#define TP_TEST_CUPTI_RECORDS_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include <cupti_activity.h>

#include "collector/gpu.h"
#include "test/unit/writer_text.h"

#define HOST_PID 4242
#define HOST_TID 77

/* The file being written (the JSON writer; time base 0: ts = monotonic ns
 * / 1000) and everything written so far. */
static struct wt wt;
#define tr (wt.w)

static inline void trace_new(void)
{
	wt_open(&wt, NULL);
}

static inline const char *trace_text(void)
{
	return wt_text(&wt);
}

static inline void setup(void)
{
	tp_gpu_reset();
	trace_new();
}

static inline void teardown(void)
{
	wt_free(&wt);
	tp_gpu_reset();
}

static inline void ext_corr(uint32_t corr, uint64_t ext)
{
	CUpti_ActivityExternalCorrelation x;
	memset(&x, 0, sizeof(x));
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	x.externalId = ext;
	x.correlationId = corr;
	ck_assert_int_eq(tp_gpu_parse_record(&x), 1);
}

static inline void kernel(const char *name, uint64_t start, uint64_t end, uint32_t stream,
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
static inline int api_record(CUpti_ActivityKind kind, uint32_t corr, uint32_t thread,
			     uint64_t start, uint64_t end)
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

#endif
