/* Store: records moved out of a ring come back in order, whole groups, and
 * never more than the budget's chunks are mapped; what does not fit stays
 * in the ring. */
#include <check.h>
#include <string.h>

#include "collector/ring.h"
#include "collector/store.h"

#include "test/unit/check_main.h"

struct seqs {
	uint64_t n, next, bad;
};

static void check_seq(const struct tp_record *r, void *ctx)
{
	struct seqs *s = ctx;
	if (r->arg[0] != s->next)
		s->bad++;
	for (unsigned i = 0; i < r->nextra; i++)
		if (r[1 + i].arg[0] != ~r->arg[0])
			s->bad++;
	s->next = r->arg[0] + 1;
	s->n++;
}

static int put(struct tp_ring *r, uint64_t seq, unsigned nextra)
{
	int64_t h = tp_ring_reserve(r, 1 + nextra);
	if (h < 0)
		return 0;
	for (unsigned i = 0; i <= nextra; i++) {
		struct tp_record *x = tp_ring_slot(r, (uint64_t)h + i);
		memset(x, 0, sizeof(*x));
		x->arg[0] = i ? ~seq : seq;
	}
	tp_ring_slot(r, (uint64_t)h)->nextra = (uint8_t)nextra;
	tp_ring_commit(r, (uint64_t)h, 1 + nextra);
	return 1;
}

START_TEST(test_budget_bounds_and_order_holds)
{
	/* Two chunks: 2 x 16383 records at most. */
	tp_store_configure(2 * TP_STORE_CHUNK_BYTES);
	ck_assert_int_eq(tp_store_enabled(), 1);
	struct tp_ring r;
	ck_assert_int_eq(tp_ring_init(&r, 1u << 16), 0);
	struct tp_store_queue q = { 0 };
	struct seqs s = { 0 };
	uint64_t seq = 0, records = 0;
	for (int round = 0; round < 6; round++) {
		/* Fill the ring with groups of 1 to 9 records. */
		while (put(&r, seq, (unsigned)(seq % 9)))
			records += 1 + seq++ % 9;
		uint64_t moved = tp_store_take(&q, &r);
		ck_assert_uint_gt(moved, 0);
		ck_assert_uint_le(tp_store_bytes(), 2 * TP_STORE_CHUNK_BYTES);
		ck_assert_uint_eq(q.records, moved);
		/* The budget is full: the ring keeps the rest. */
		ck_assert_uint_eq(tp_store_take(&q, &r), 0);
		ck_assert_uint_gt(atomic_load(&r.head) - atomic_load(&r.tail), 0);
		/* Half now, the rest after the ring's turn. */
		tp_store_convert(&q, check_seq, &s, 1000);
		tp_store_convert(&q, check_seq, &s, UINT64_MAX);
		ck_assert_uint_eq(q.records, 0);
		tp_ring_consume(&r, check_seq, &s);
	}
	ck_assert_uint_eq(s.n, seq);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_le(tp_store_peak_bytes(), 2 * TP_STORE_CHUNK_BYTES);
	(void)records;
	tp_ring_destroy(&r);
}
END_TEST

START_TEST(test_zero_budget_takes_nothing)
{
	tp_store_configure(0);
	ck_assert_int_eq(tp_store_enabled(), 0);
	struct tp_ring r;
	ck_assert_int_eq(tp_ring_init(&r, 64), 0);
	ck_assert_int_eq(put(&r, 0, 0), 1);
	struct tp_store_queue q = { 0 };
	ck_assert_uint_eq(tp_store_take(&q, &r), 0);
	ck_assert_uint_eq(tp_store_bytes(), 0);
	tp_ring_destroy(&r);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_budget_bounds_and_order_holds);
	tcase_add_test(tc, test_zero_budget_takes_nothing);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
