/* Unit tests for collector/cupti_queue.c: CUPTI's buffers handed over by
 * callbacks on other threads (as CUPTI's own thread does) while the flush
 * thread drains: every record decoded once, drops and refusals counted
 * exactly, and the exit handshake (no call into CUPTI after close, the
 * records copied out and decoded later). */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cupti_activity.h>

#include "collector/cupti_queue.h"
#include "collector/gpu.h"

#include "test/unit/check_main.h"

#define PRODUCERS 4
#define BUFS_EACH 300
#define RECS_EACH 8
#define NRECS (PRODUCERS * BUFS_EACH * RECS_EACH)
#define DROPS_EACH 3

/* How often the decoder was handed each record (its memset's `bytes` is its
 * number): the fake cuptiActivityGetNextRecord counts what it returns, and
 * the queue decodes every record it returns. */
static int seen[NRECS];
static _Atomic int walks_after_close; /* next_record or sync after close() */
static _Atomic int closed_now;
static _Atomic int syncs;

static size_t rec_size(void)
{
	return (sizeof(CUpti_ActivityMemset4) + 7) & ~(size_t)7;
}

/* CUPTI's buffer layout as the stand-in writes it: records one after
 * another at 8-byte aligned offsets. */
static CUptiResult CUPTIAPI next_record(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
	if (atomic_load(&closed_now))
		atomic_fetch_add(&walks_after_close, 1);
	size_t off = *record ? (size_t)((uint8_t *)*record - buffer) + rec_size() : 0;
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(void *)(buffer + off);
	const CUpti_ActivityMemset4 *m = (const void *)*record;
	if (m->bytes < NRECS)
		seen[m->bytes]++;
	return CUPTI_SUCCESS;
}

static void sync_fn(int how)
{
	(void)how;
	if (atomic_load(&closed_now))
		atomic_fetch_add(&walks_after_close, 1);
	atomic_fetch_add(&syncs, 1);
}

static const struct tp_cupti_source src = { next_record, sync_fn };

/* Fills a buffer with records first..first+n-1 (memsets). */
static size_t fill(uint8_t *buf, size_t size, uint64_t first, int n)
{
	size_t used = 0;
	for (int i = 0; i < n && used + rec_size() <= size; i++) {
		CUpti_ActivityMemset4 m;
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.start = 1000 + first + (uint64_t)i;
		m.end = m.start + 10;
		m.streamId = 7;
		m.contextId = 1;
		m.bytes = first + (uint64_t)i;
		memcpy(buf + used, &m, sizeof(m));
		used += rec_size();
	}
	return used;
}

static _Atomic int producers_done;
static _Atomic uint64_t refused_seen;

/* One of CUPTI's threads: asks for a buffer (again when refused, as CUPTI
 * asks at its next record), fills it, hands it back. */
static void *producer(void *arg)
{
	int p = (int)(intptr_t)arg;
	for (int b = 0; b < BUFS_EACH; b++) {
		size_t size;
		uint8_t *buf;
		while (!(buf = tp_cupti_queue_alloc(&size))) {
			atomic_fetch_add(&refused_seen, 1);
			sched_yield();
		}
		uint64_t first = ((uint64_t)p * BUFS_EACH + (uint64_t)b) * RECS_EACH;
		size_t valid = fill(buf, size, first, RECS_EACH);
		tp_cupti_queue_push(buf, valid, DROPS_EACH);
	}
	atomic_fetch_add(&producers_done, 1);
	return NULL;
}

static void no_calls_after_close(void)
{
	int n = atomic_load(&walks_after_close);
	ck_assert_msg(n == 0, "%d calls into CUPTI after tp_cupti_queue_close()", n);
}

static void setup(void)
{
	tp_gpu_reset();
	memset(seen, 0, sizeof(seen));
}

static void check_all_once(void)
{
	for (int i = 0; i < NRECS; i++)
		ck_assert_msg(seen[i] == 1, "record %d decoded %d times", i, seen[i]);
	ck_assert_uint_eq(tp_gpu_pending(), NRECS);
}

START_TEST(test_handoff_from_other_threads)
{
	tp_cupti_queue_open(&src);
	pthread_t th[PRODUCERS];
	for (int p = 0; p < PRODUCERS; p++)
		ck_assert_int_eq(pthread_create(&th[p], NULL, producer, (void *)(intptr_t)p), 0);
	/* The flush thread: drains while the buffers come in. */
	while (atomic_load(&producers_done) < PRODUCERS)
		tp_cupti_queue_drain(0);
	for (int p = 0; p < PRODUCERS; p++)
		pthread_join(th[p], NULL);
	tp_cupti_queue_drain(TP_CUPTI_SYNC_FLUSH);
	check_all_once();
	ck_assert_uint_eq(tp_cupti_queue_dropped(), (uint64_t)PRODUCERS * BUFS_EACH * DROPS_EACH);
	ck_assert_uint_eq(tp_cupti_queue_refused(), atomic_load(&refused_seen));
	ck_assert_int_gt(atomic_load(&syncs), 0);
	/* Every buffer came back: a whole queue's worth can be handed out. */
	uint8_t *bufs[TP_CUPTI_QUEUE_MAX];
	size_t size;
	for (int i = 0; i < TP_CUPTI_QUEUE_MAX; i++)
		ck_assert_ptr_nonnull(bufs[i] = tp_cupti_queue_alloc(&size));
	for (int i = 0; i < TP_CUPTI_QUEUE_MAX; i++)
		tp_cupti_queue_push(bufs[i], 0, 0);
	tp_cupti_queue_drain(0);
}
END_TEST

START_TEST(test_queue_full_counted)
{
	tp_cupti_queue_open(&src);
	uint8_t *bufs[TP_CUPTI_QUEUE_MAX];
	size_t size = 1;
	for (int i = 0; i < TP_CUPTI_QUEUE_MAX; i++)
		ck_assert_ptr_nonnull(bufs[i] = tp_cupti_queue_alloc(&size));
	ck_assert_ptr_null(tp_cupti_queue_alloc(&size));
	ck_assert_uint_eq(size, 0);
	ck_assert_ptr_null(tp_cupti_queue_alloc(&size));
	ck_assert_uint_eq(tp_cupti_queue_refused(), 2);
	/* A completed buffer with CUPTI's dropped count: counted even when
	 * empty. */
	tp_cupti_queue_push(bufs[0], fill(bufs[0], 1 << 20, 5, 2), 7);
	tp_cupti_queue_drain(0);
	ck_assert_int_eq(seen[5] + seen[6], 2);
	ck_assert_uint_eq(tp_cupti_queue_dropped(), 7);
	ck_assert_ptr_nonnull(bufs[0] = tp_cupti_queue_alloc(&size));
	ck_assert_ptr_null(tp_cupti_queue_alloc(&size));
	ck_assert_uint_eq(tp_cupti_queue_refused(), 3);
	for (int i = 0; i < TP_CUPTI_QUEUE_MAX; i++)
		tp_cupti_queue_push(bufs[i], 0, 0);
	tp_cupti_queue_drain(0);
}
END_TEST

/* Exit: after close() the flush thread calls CUPTI no more; the records of
 * the last buffers are copied out on the exiting thread and decoded by the
 * next drain, once. */
START_TEST(test_close_then_copy_out)
{
	ck_assert_int_eq(tp_cupti_queue_opened(), 0);
	tp_cupti_queue_drain(TP_CUPTI_SYNC_FLUSH);
	ck_assert_int_eq(atomic_load(&syncs), 0); /* not opened: nothing to call */
	tp_cupti_queue_open(&src);
	ck_assert_int_eq(tp_cupti_queue_opened(), 1);
	size_t size;
	uint8_t *a = tp_cupti_queue_alloc(&size), *b = tp_cupti_queue_alloc(&size);
	tp_cupti_queue_push(a, fill(a, size, 0, 100), 0);
	tp_cupti_queue_close();
	atomic_store(&closed_now, 1);
	tp_cupti_queue_push(b, fill(b, size, 100, NRECS - 100), 1); /* CUPTI's last flush */
	tp_cupti_queue_drain(TP_CUPTI_SYNC_FLUSH);
	no_calls_after_close();
	ck_assert_uint_eq(tp_gpu_pending(), 0);
	atomic_store(&closed_now, 0);
	tp_cupti_queue_copy_out(); /* the exiting thread, CUPTI still there */
	atomic_store(&closed_now, 1);
	tp_cupti_queue_drain(TP_CUPTI_SYNC_FLUSH);
	no_calls_after_close();
	/* The copies are decoded without next_record (which copy_out called
	 * twice a record: to size, to copy): the decoder's count says it. */
	ck_assert_uint_eq(tp_gpu_pending(), NRECS);
	tp_cupti_queue_drain(0);
	ck_assert_uint_eq(tp_gpu_pending(), NRECS);
	ck_assert_int_eq(atomic_load(&syncs), 0);
	ck_assert_uint_eq(tp_cupti_queue_dropped(), 1);
}
END_TEST

/* close() waits for a drain that is inside CUPTI (its sync here). */
static _Atomic int in_sync, leave_sync;

static void slow_sync(int how)
{
	(void)how;
	atomic_store(&in_sync, 1);
	while (!atomic_load(&leave_sync))
		sched_yield();
	struct timespec ms = { 0, 20000000 };
	nanosleep(&ms, NULL);
	atomic_store(&in_sync, 0);
}

static const struct tp_cupti_source slow = { next_record, slow_sync };

static void *drainer(void *arg)
{
	(void)arg;
	tp_cupti_queue_drain(0);
	return NULL;
}

START_TEST(test_close_waits_for_the_drain)
{
	tp_cupti_queue_open(&slow);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, drainer, NULL), 0);
	while (!atomic_load(&in_sync))
		sched_yield();
	atomic_store(&leave_sync, 1);
	tp_cupti_queue_close();
	ck_assert_msg(!atomic_load(&in_sync), "close() returned while the flush thread was in CUPTI");
	pthread_join(th, NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cupti_queue");
	TCase *tc = tcase_create("queue");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_handoff_from_other_threads);
	tcase_add_test(tc, test_queue_full_counted);
	tcase_add_test(tc, test_close_then_copy_out);
	tcase_add_test(tc, test_close_waits_for_the_drain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(suite());
}
