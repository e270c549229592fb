/* The live file's "top" over a window's parts (collector/live_top.c): the
 * exact sums by name over every part's table, whatever each part's own
 * ranking; the same name in two categories summed; names cut to fit. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "collector/live_top.h"
#include "format/aggregate.h"
#include "format/event.h"

#include "test/unit/check_main.h"

static void slice(struct tp_agg *a, const char *name, const char *cat, uint64_t s, uint64_t e)
{
	struct tp_event ev = {
		.kind = TP_EV_SLICE,
		.nargs = 1,
		.name_len = (uint32_t)strlen(name),
		.cat = cat,
		.name = name,
		.pid = 7,
		.tid = 1,
		.ts = s,
		.end = e,
	};
	tp_agg_event(a, &ev);
}

/* Part p: 40 names of its own with 100 each (p0-00 .. p0-39), then "x"
 * with `x` (one call).  x is the 41st row of each part's own ranking. */
static struct tp_agg *part(int p, uint64_t x)
{
	struct tp_agg *a = tp_agg_new(0);
	ck_assert_ptr_nonnull(a);
	char name[32];
	uint64_t t = 0;
	for (int i = 0; i < 40; i++, t += 1000) {
		snprintf(name, sizeof(name), "p%d-%02d", p, i);
		slice(a, name, "cuda_runtime", t, t + 100);
	}
	slice(a, "x", "cuda_runtime", t, t + x);
	return a;
}

START_TEST(test_sum_over_parts_is_exact)
{
	struct tp_agg *a[3] = { part(0, 50), part(1, 60), NULL };
	struct tp_live_top top[TP_LIVE_TOP];
	int n = tp_live_top_of(a, 3, top);
	ck_assert_int_eq(n, TP_LIVE_TOP);
	/* 50 + 60: above every name's 100, though in no part's first 40. */
	ck_assert_str_eq(top[0].name, "x");
	ck_assert_uint_eq(top[0].total, 110);
	ck_assert_uint_eq(top[0].calls, 2);
	/* Then 100 each, in the order summed. */
	ck_assert_str_eq(top[1].name, "p0-00");
	ck_assert_str_eq(top[9].name, "p0-08");
	ck_assert_uint_eq(top[9].total, 100);
	/* One part alone: x is the last of 41. */
	ck_assert_int_eq(tp_live_top_of(a, 1, top), TP_LIVE_TOP);
	ck_assert_str_eq(top[0].name, "p0-00");
	/* No table, or only empty ones: none. */
	ck_assert_int_eq(tp_live_top_of(a + 2, 1, top), 0);
	ck_assert_int_eq(tp_live_top_of(a, 0, top), 0);
	tp_agg_free(a[0]);
	tp_agg_free(a[1]);
}
END_TEST

START_TEST(test_categories_summed_and_names_cut)
{
	struct tp_agg *a = tp_agg_new(0);
	ck_assert_ptr_nonnull(a);
	slice(a, "copy", "cuda_runtime", 0, 30);
	slice(a, "copy", "gpu_memcpy", 100, 140);
	char longname[400];
	memset(longname, 'k', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	slice(a, longname, "kernel", 200, 250);
	struct tp_live_top top[TP_LIVE_TOP];
	ck_assert_int_eq(tp_live_top_of(&a, 1, top), 2);
	ck_assert_str_eq(top[0].name, "copy");
	ck_assert_uint_eq(top[0].total, 70);
	ck_assert_uint_eq(top[0].calls, 2);
	ck_assert_uint_eq(strlen(top[1].name), TP_LIVE_TOP_NAME - 1);
	ck_assert_uint_eq(top[1].total, 50);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_many_names_grow_the_table)
{
	/* More names than the first table holds (4096 rows: it grows). */
	struct tp_agg *a[4];
	char name[32];
	for (int p = 0; p < 4; p++) {
		a[p] = tp_agg_new(0);
		ck_assert_ptr_nonnull(a[p]);
		for (int i = 0; i < 3000; i++) {
			snprintf(name, sizeof(name), "n%d-%d", p, i);
			slice(a[p], name, "cpu_op", (uint64_t)i * 10, (uint64_t)i * 10 + 1 + (i == 2999 && p == 3));
		}
	}
	struct tp_live_top top[TP_LIVE_TOP];
	ck_assert_int_eq(tp_live_top_of(a, 4, top), TP_LIVE_TOP);
	ck_assert_str_eq(top[0].name, "n3-2999");
	ck_assert_uint_eq(top[0].total, 2);
	ck_assert_str_eq(top[1].name, "n0-0");
	for (int p = 0; p < 4; p++)
		tp_agg_free(a[p]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("live_top");
	TCase *tc = tcase_create("sum");
	tcase_add_test(tc, test_sum_over_parts_is_exact);
	tcase_add_test(tc, test_categories_summed_and_names_cut);
	tcase_add_test(tc, test_many_names_grow_the_table);
	suite_add_tcase(s, tc);
	return tp_check_run(s);
}
