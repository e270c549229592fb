/* Ring: wrap-around, groups with extras across the end, overflow accounting,
 * and a two-thread stress that proves read + dropped == produced. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector/hot.h"
#include "collector/ring.h"

#include "test/unit/check_main.h"

struct sink {
	uint64_t n;
	uint64_t next_seq;
	int out_of_order;
	uint64_t extras_ok;
};

static void count(const struct tp_record *r, void *ctx)
{
	struct sink *s = ctx;
	if (r->arg[0] < s->next_seq)
		s->out_of_order++;
	s->next_seq = r->arg[0] + 1;
	s->n++;
	if (r->nextra) {
		const unsigned char *x = (const unsigned char *)(r + 1);
		int ok = 1;
		for (unsigned i = 0; i < r->nextra * 64u; i++)
			if (x[i] != (unsigned char)(r->arg[0] + i))
				ok = 0;
		s->extras_ok += ok;
	}
}

static int put(struct tp_ring *r, uint64_t seq, unsigned nextra)
{
	int64_t h = tp_ring_reserve(r, 1 + nextra);
	if (h < 0) {
		tp_ring_drop(r);
		return 0;
	}
	struct tp_record *slot = tp_ring_slot(r, (uint64_t)h);
	memset(slot, 0, sizeof(*slot));
	slot->arg[0] = seq;
	slot->nextra = (uint8_t)nextra;
	for (unsigned i = 0; i < nextra; i++) {
		unsigned char *x = (unsigned char *)tp_ring_slot(r, (uint64_t)h + 1 + i);
		for (unsigned k = 0; k < 64; k++)
			x[k] = (unsigned char)(seq + i * 64 + k);
	}
	tp_ring_commit(r, (uint64_t)h, 1 + nextra);
	return 1;
}

START_TEST(test_init_rejects_bad_sizes)
{
	struct tp_ring r;
	ck_assert_int_lt(tp_ring_init(&r, 15), 0);
	ck_assert_int_lt(tp_ring_init(&r, 100), 0);
	ck_assert_int_eq(tp_ring_init(&r, 16), 0);
	tp_ring_destroy(&r);
}
END_TEST

START_TEST(test_full_ring_drops_and_counts)
{
	struct tp_ring r;
	ck_assert_int_eq(tp_ring_init(&r, 16), 0);
	int kept = 0;
	for (int i = 0; i < 40; i++)
		kept += put(&r, (uint64_t)i, 0);
	ck_assert_int_eq(kept, 16);
	ck_assert_uint_eq(atomic_load(&r.dropped), 24);
	ck_assert_uint_eq((uint64_t)kept + atomic_load(&r.dropped), 40);
	struct sink s = { 0 };
	ck_assert_uint_eq(tp_ring_consume(&r, count, &s), 16);
	ck_assert_uint_eq(s.n, 16);
	ck_assert_int_eq(s.out_of_order, 0);
	/* Space again after the consumer freed it. */
	ck_assert_int_eq(put(&r, 100, 0), 1);
	tp_ring_destroy(&r);
}
END_TEST

START_TEST(test_wraparound_with_extras)
{
	struct tp_ring r;
	ck_assert_int_eq(tp_ring_init(&r, 16), 0);
	struct sink s = { 0 };
	uint64_t seq = 0, put_n = 0;
	/* Groups of 1..4 slots, consumed every few puts, so groups straddle the
	 * end of the slot array many times. */
	for (int round = 0; round < 500; round++) {
		for (int k = 0; k < 3; k++) {
			unsigned nextra = (unsigned)((round + k) % 4);
			put_n += put(&r, seq++, nextra);
		}
		tp_ring_consume(&r, count, &s);
	}
	ck_assert_uint_eq(s.n, put_n);
	ck_assert_int_eq(s.out_of_order, 0);
	ck_assert_uint_eq(atomic_load(&r.dropped) + put_n, seq);
	tp_ring_destroy(&r);
}
END_TEST

/* Resident pages of the ring's slots, asked of the kernel (mincore). */
static size_t resident_pages(const struct tp_ring *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)(r->mask + 1) * sizeof(struct tp_record);
	size_t n = (bytes + page - 1) / page, k = 0;
	unsigned char *vec = calloc(n, 1);
	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(r->slots, bytes, vec), 0);
	for (size_t i = 0; i < n; i++)
		k += vec[i] & 1;
	free(vec);
	return k;
}

static void discard(const struct tp_record *r, void *ctx)
{
	(void)r;
	(void)ctx;
}

/* Issue 17, item 4: a thread that records a few events must not cost the
 * whole ring (4 MiB with the default 65536 records). */
START_TEST(test_ring_starts_small_and_grows_ahead)
{
	struct tp_ring r;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	ck_assert_int_eq(tp_ring_init(&r, 65536), 0);
	if (tp_ring_resident_bytes(&r) == 65536 * 64) {
		/* A kernel before 5.14 has no MADV_POPULATE_WRITE: whole, as before. */
		tp_ring_destroy(&r);
		return;
	}
	ck_assert_uint_eq(tp_ring_resident_bytes(&r), TP_RING_FIRST_BYTES);
	ck_assert_uint_le(resident_pages(&r), TP_RING_FIRST_BYTES / page);
	/* Less than half of the resident part used: nothing more yet. */
	for (uint64_t i = 0; i < 100; i++)
		ck_assert(put(&r, i, 0));
	tp_ring_prefault(&r);
	ck_assert_uint_eq(tp_ring_resident_bytes(&r), TP_RING_FIRST_BYTES);
	/* Past half: the flush thread doubles it ahead of the producer. */
	for (uint64_t i = 100; i < 600; i++)
		ck_assert(put(&r, i, 0));
	tp_ring_prefault(&r);
	ck_assert_uint_eq(tp_ring_resident_bytes(&r), 2 * TP_RING_FIRST_BYTES);
	ck_assert_uint_ge(resident_pages(&r), 2 * TP_RING_FIRST_BYTES / page);
	/* A producer far ahead: twice its head at once, at most the ring. */
	for (uint64_t i = 600; i < 20000; i++)
		ck_assert(put(&r, i, 0));
	tp_ring_prefault(&r);
	ck_assert_uint_eq(tp_ring_resident_bytes(&r), 65536 * 64);
	/* Destroyed: the pages go, the accounting stays. */
	tp_ring_consume(&r, discard, NULL);
	tp_ring_drop(&r);
	tp_ring_destroy(&r);
	ck_assert_ptr_null(r.slots);
	ck_assert_uint_eq(tp_ring_resident_bytes(&r), 0);
	ck_assert_uint_eq(atomic_load(&r.head), 20000);
	ck_assert_uint_eq(atomic_load(&r.tail), 20000);
	ck_assert_uint_eq(atomic_load(&r.dropped), 1);
	/* An emptied ring reads as empty and stays so. */
	ck_assert_uint_eq(tp_ring_consume(&r, discard, NULL), 0);
	tp_ring_destroy(&r);
}
END_TEST

struct stress {
	struct tp_ring ring;
	uint64_t n;
	_Atomic int done;
};

static void *producer(void *arg)
{
	struct stress *st = arg;
	for (uint64_t i = 0; i < st->n; i++)
		put(&st->ring, i, (unsigned)(i % 3));
	atomic_store(&st->done, 1);
	return NULL;
}

START_TEST(test_stress_read_plus_dropped_equals_produced)
{
	struct stress st = { .n = 2000000 };
	ck_assert_int_eq(tp_ring_init(&st.ring, 1024), 0);
	pthread_t th;
	pthread_create(&th, NULL, producer, &st);
	struct sink s = { 0 };
	while (!atomic_load(&st.done))
		tp_ring_consume(&st.ring, count, &s);
	pthread_join(th, NULL);
	tp_ring_consume(&st.ring, count, &s);
	uint64_t dropped = atomic_load(&st.ring.dropped);
	ck_assert_uint_eq(s.n + dropped, st.n);
	ck_assert_int_eq(s.out_of_order, 0);
	tp_ring_destroy(&st.ring);
}
END_TEST

struct named {
	int n;
	int flags[2], nextra[2];
	size_t len[2];
	char text1[16];
};

static void collect_named(const struct tp_record *r, void *ctx)
{
	struct named *c = ctx;
	if (c->n >= 2)
		return;
	c->flags[c->n] = r->flags;
	c->nextra[c->n] = r->nextra;
	const char *x = (const char *)(r + 1);
	c->len[c->n] = strnlen(x, (size_t)r->nextra * 64);
	if (c->n == 1)
		strncpy(c->text1, x, sizeof(c->text1) - 1);
	c->n++;
}

START_TEST(test_emit_named_truncates_and_flags)
{
	struct tp_thread *t = tp_thread_create_self();
	ck_assert_ptr_nonnull(t);
	char big[2000];
	memset(big, 'x', sizeof(big));
	struct tp_record rec = { 0 };
	rec.kind = TP_REC_INSTANT;
	tp_emit_named(t, &rec, big, sizeof(big));
	struct tp_record rec2 = { 0 };
	rec2.kind = TP_REC_INSTANT;
	tp_emit_named(t, &rec2, "short", 5);
	struct named seen = { 0 };
	ck_assert_uint_eq(tp_ring_consume(&t->ring, collect_named, &seen), 2);
	ck_assert_int_eq(seen.n, 2);
	ck_assert_int_eq(seen.flags[0] & (TP_RF_STRING | TP_RF_TRUNC), TP_RF_STRING | TP_RF_TRUNC);
	ck_assert_int_eq(seen.nextra[0], TP_REC_MAX_EXTRA);
	ck_assert_uint_eq(seen.len[0], TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES - 1);
	ck_assert_int_eq(seen.flags[1] & TP_RF_TRUNC, 0);
	ck_assert_str_eq(seen.text1, "short");
}
END_TEST

static int wakes;

static void count_wake(void)
{
	wakes++;
}

/* The high-water mark: a producer wakes the flush thread when its ring is
 * half full, at most once per half ring, and a full ring that drops every
 * call does not wake on each. */
START_TEST(test_high_water_wakes_once_per_half_ring)
{
	struct tp_ring r;
	ck_assert_int_eq(tp_ring_init(&r, 64), 0);
	tp_ring_set_wake(count_wake);
	wakes = 0;
	uint64_t seq = 0;
	for (int i = 0; i < 31; i++)
		ck_assert_int_eq(put(&r, seq++, 0), 1);
	ck_assert_int_eq(wakes, 0);
	ck_assert_int_eq(put(&r, seq++, 0), 1); /* the 33rd record: half full */
	ck_assert_int_eq(put(&r, seq++, 0), 1);
	ck_assert_int_eq(wakes, 1);
	while (put(&r, seq++, 0))
		;
	ck_assert_int_eq(wakes, 2); /* full */
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(put(&r, seq++, 0), 0);
	ck_assert_int_eq(wakes, 2); /* dropping: no wake per call */
	struct sink s = { 0 };
	ck_assert_uint_eq(tp_ring_consume(&r, count, &s), 64);
	/* A drained ring: the next half ring goes without a wake. */
	for (int i = 0; i < 32; i++)
		ck_assert_int_eq(put(&r, seq++, 0), 1);
	ck_assert_int_eq(wakes, 2);
	ck_assert_int_eq(put(&r, seq++, 0), 1);
	ck_assert_int_eq(wakes, 3);
	tp_ring_set_wake(NULL);
	tp_ring_destroy(&r);
}
END_TEST

/* tp_ring_take(): a refused group stays in the ring, in order. */
static uint64_t taken_records;

static int take_upto(const struct tp_record *rec, unsigned n, void *ctx)
{
	if (taken_records + n > 10)
		return 0;
	taken_records += n;
	count(rec, ctx);
	return 1;
}

START_TEST(test_take_stops_where_refused)
{
	struct tp_ring r;
	ck_assert_int_eq(tp_ring_init(&r, 64), 0);
	for (uint64_t i = 0; i < 8; i++)
		ck_assert_int_eq(put(&r, i, (unsigned)(i % 2)), 1); /* 12 records */
	struct sink s = { 0 };
	taken_records = 0;
	/* Groups of 1 and 2 records: 1+2+1+2+1+2+1 = 10, the next would pass it. */
	ck_assert_uint_eq(tp_ring_take(&r, take_upto, &s), 10);
	struct sink rest = { .next_seq = s.next_seq };
	ck_assert_uint_eq(tp_ring_consume(&r, count, &rest), 1);
	ck_assert_int_eq(rest.out_of_order, 0);
	ck_assert_uint_eq(rest.next_seq, 8);
	tp_ring_destroy(&r);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("ring");
	TCase *tc = tcase_create("ring");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_init_rejects_bad_sizes);
	tcase_add_test(tc, test_ring_starts_small_and_grows_ahead);
	tcase_add_test(tc, test_full_ring_drops_and_counts);
	tcase_add_test(tc, test_wraparound_with_extras);
	tcase_add_test(tc, test_stress_read_plus_dropped_equals_produced);
	tcase_add_test(tc, test_emit_named_truncates_and_flags);
	tcase_add_test(tc, test_high_water_wakes_once_per_half_ring);
	tcase_add_test(tc, test_take_stops_where_refused);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
