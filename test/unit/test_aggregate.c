/* Unit tests for format/aggregate.c: self times as summary nests slices
 * (by start, the longer first) whatever order the slices arrive in: children
 * first (a slice is recorded when it ends), parents first, GPU annotations
 * after all their stream's kernels; steps; the bounds and what they count. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "format/aggregate.h"

#include "test/unit/check_main.h"

static void slice_as(struct tp_agg *a, const char *name, int stable, int64_t tid, uint64_t s,
		     uint64_t e)
{
	struct tp_event ev = {
		.kind = TP_EV_SLICE,
		.name_stable = (uint8_t)stable,
		.nargs = 0,
		.name_len = (uint32_t)strlen(name),
		.cat = "user_annotation",
		.name = name,
		.pid = 7,
		.tid = tid,
		.ts = s,
		.end = e,
		.args = NULL,
		TP_EV_NO_EXTRAS,
	};
	tp_agg_event(a, &ev);
}

static void slice(struct tp_agg *a, const char *name, int64_t tid, uint64_t s, uint64_t e)
{
	slice_as(a, name, 0, tid, s, e);
}

/* The value at index `col` of the row named `name` (2 calls, 3 total, 4
 * self, 5 min, 6 max), or -1. */
static int64_t cell(const struct tp_doc *d, const char *name, int col)
{
	for (size_t i = 0; i + 7 < d->n; i++) {
		const struct tp_doc_node *x = &d->nodes[i];
		if (x->kind != TP_DOC_ARRAY || tp_doc_key(d, x))
			continue;
		const struct tp_doc_node *nm = &d->nodes[i + 1];
		if (nm->kind != TP_DOC_VALUE || nm->type != TP_VAL_STR ||
		    strcmp(tp_doc_text(d, nm), name))
			continue;
		const struct tp_doc_node *v = &d->nodes[i + 1 + col];
		return v->type == TP_VAL_I64 ? v->i : (int64_t)v->u;
	}
	return -1;
}

static uint64_t member(const struct tp_doc *d, const char *key)
{
	for (size_t i = 0; i < d->n; i++) {
		const char *k = tp_doc_key(d, &d->nodes[i]);
		if (k && !strcmp(k, key))
			return d->nodes[i].u;
	}
	return UINT64_MAX;
}

static void doc_of(struct tp_agg *a, struct tp_doc *d)
{
	tp_doc_init(d);
	tp_agg_doc(a, d);
	ck_assert(!d->error);
}

START_TEST(test_children_first)
{
	struct tp_agg *a = tp_agg_new(3);
	ck_assert_ptr_nonnull(a);
	/* P [0,100] with c1 [10,20] (holding g [12,15]) and c2 [30,40];
	 * arrival by end. */
	slice(a, "g", 1, 12, 15);
	slice(a, "c", 1, 10, 20);
	slice(a, "c", 1, 30, 40);
	slice(a, "P", 1, 0, 100);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "P", 4), 80);
	ck_assert_int_eq(cell(&d, "c", 4), 17);
	ck_assert_int_eq(cell(&d, "c", 2), 2);
	ck_assert_int_eq(cell(&d, "c", 3), 20);
	ck_assert_int_eq(cell(&d, "c", 5), 10);
	ck_assert_int_eq(cell(&d, "g", 4), 3);
	ck_assert_int_eq((int64_t)member(&d, "span_ns"), 100);
	ck_assert_int_eq((int64_t)member(&d, "rank"), 3);
	tp_doc_free(&d);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_parents_first)
{
	struct tp_agg *a = tp_agg_new(0);
	slice(a, "P", 1, 0, 100);
	slice(a, "c", 1, 10, 20);
	slice(a, "g", 1, 12, 15);
	slice(a, "c", 1, 30, 40);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "P", 4), 80);
	ck_assert_int_eq(cell(&d, "c", 4), 17);
	tp_doc_free(&d);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_late_child_after_step)
{
	/* A step is written after all it holds; a start/end range ended on
	 * another thread may come later still.  P [5,40] holds c [10,20] and
	 * the late L [25,35]: P's self is 15 whether the step came between. */
	struct tp_agg *a = tp_agg_new(0);
	slice(a, "c", 1, 10, 20);
	slice(a, "P", 1, 5, 40);
	slice(a, "ProfilerStep#1", 1, 0, 100);
	slice(a, "L", 1, 25, 35);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "P", 4), 15);
	ck_assert_int_eq(cell(&d, "L", 4), 10);
	tp_doc_free(&d);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_annotations_after_kernels)
{
	/* Two annotations on one stream, written after all four kernels. */
	struct tp_agg *a = tp_agg_new(0);
	slice(a, "k", 9, 10, 20);
	slice(a, "k", 9, 30, 40);
	slice(a, "k", 9, 50, 60);
	slice(a, "k", 9, 70, 80);
	slice(a, "A1", 9, 5, 45);
	slice(a, "A2", 9, 48, 85);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "A1", 4), 20);
	ck_assert_int_eq(cell(&d, "A2", 4), 17);
	ck_assert_int_eq(cell(&d, "k", 4), 40);
	tp_doc_free(&d);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_threads_ties_steps)
{
	struct tp_agg *a = tp_agg_new(0);
	/* Equal start: the longer is the parent; other threads do not nest. */
	slice(a, "short", 1, 0, 10);
	slice(a, "other", 2, 0, 50);
	slice(a, "long", 1, 0, 30);
	slice(a, "ProfilerStep#4", 1, 0, 60);
	slice(a, "ProfilerStep#x", 1, 70, 80);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "long", 4), 20);
	ck_assert_int_eq(cell(&d, "short", 4), 10);
	ck_assert_int_eq(cell(&d, "other", 4), 50);
	/* A step is not a row; a name that only looks like one is. */
	ck_assert_int_eq(cell(&d, "ProfilerStep#4", 2), -1);
	ck_assert_int_eq(cell(&d, "ProfilerStep#x", 2), 1);
	tp_doc_free(&d);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_bounds)
{
	struct tp_agg *a = tp_agg_new(0);
	char name[32];
	/* More sequential children than a stack holds, then their parent:
	 * folded, and still subtracted whole. */
	uint64_t n = 3 * TP_AGG_STACK_MAX;
	for (uint64_t i = 0; i < n; i++)
		slice(a, "child", 1, 10 + 10 * i, 15 + 10 * i);
	slice(a, "parent", 1, 0, 20 + 10 * n);
	/* More names than the table holds. */
	for (int i = 0; i < TP_AGG_MAX_ROWS + 5; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		slice(a, name, 3, 1, 2);
	}
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "parent", 4), (int64_t)(20 + 10 * n - 5 * n));
	ck_assert_uint_gt(member(&d, "self_folded"), 0);
	ck_assert_uint_eq(member(&d, "names_cut"), 7); /* child and parent took two rows */
	ck_assert_uint_eq(member(&d, "calls_cut"), 7);
	tp_doc_free(&d);
	tp_agg_free(a);
}
END_TEST

START_TEST(test_reuse)
{
	/* A table freed is kept, emptied, for the next file: nothing of the
	 * first file shows in the second, whose threads, names and stacks
	 * start anew (a kept stack, a new thread, a stack beyond what is
	 * kept). */
	struct tp_agg *a = tp_agg_new(1);
	ck_assert_ptr_nonnull(a);
	for (uint64_t i = 0; i < 3000; i++)
		slice(a, "old", 1 + (int64_t)(i % 3), 10 * i, 10 * i + 5);
	for (uint64_t i = 0; i < 2000; i++)
		slice(a, "deep", 4, 10 * i, 10 * i + 5); /* a stack of 2048: not kept */
	slice(a, "ProfilerStep#1", 1, 0, 100000);
	/* The second file's names, first seen in another order. */
	slice(a, "P", 6, 0, 1);
	slice_as(a, "c", 1, 6, 2, 3); /* a stable name: remembered by address */
	slice_as(a, "c", 1, 6, 6, 7);
	slice(a, "g", 6, 8, 9);
	tp_agg_free(a);
	struct tp_agg *b = tp_agg_new(2);
	ck_assert_ptr_nonnull(b);
	slice(b, "g", 2, 12, 15);
	slice_as(b, "c", 1, 2, 10, 20);
	slice(b, "P", 2, 0, 100);
	slice_as(b, "c", 1, 4, 200, 230);
	slice_as(b, "c", 1, 5, 300, 310);
	slice(b, "P", 5, 290, 320);
	struct tp_doc d;
	doc_of(b, &d);
	ck_assert_int_eq(cell(&d, "old", 2), -1);
	ck_assert_int_eq(cell(&d, "deep", 2), -1);
	ck_assert_int_eq(cell(&d, "P", 2), 2);
	ck_assert_int_eq(cell(&d, "P", 4), 90 + 20);
	ck_assert_int_eq(cell(&d, "c", 2), 3);
	ck_assert_int_eq(cell(&d, "c", 4), 7 + 30 + 10);
	ck_assert_int_eq((int64_t)member(&d, "span_ns"), 320);
	ck_assert_int_eq((int64_t)member(&d, "rank"), 2);
	ck_assert_uint_eq(member(&d, "self_folded"), 0);
	tp_doc_free(&d);
	/* Two tables at once: the second is a new one. */
	struct tp_agg *c = tp_agg_new(3);
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_ne(b, c);
	tp_agg_free(b);
	tp_agg_free(c);
}
END_TEST

static Suite *aggregate_suite(void)
{
	Suite *s = suite_create("aggregate");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_children_first);
	tcase_add_test(tc, test_parents_first);
	tcase_add_test(tc, test_late_child_after_step);
	tcase_add_test(tc, test_annotations_after_kernels);
	tcase_add_test(tc, test_threads_ties_steps);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_reuse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(aggregate_suite());
}
