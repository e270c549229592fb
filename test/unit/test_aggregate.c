/* Unit tests for format/aggregate.c: self times as summary nests slices
 * (by start, the longer first) whatever order the slices arrive in: children
 * first (a slice is recorded when it ends), parents first, GPU annotations
 * after all their stream's kernels; steps; the bounds and what they count. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/aggregate.h"

#include "test/unit/check_main.h"

/* A slice of nlen bytes at name, in category cat. */
static void slice_n(struct tp_agg *a, const char *name, uint32_t nlen, const char *cat, int stable,
		    int64_t tid, uint64_t s, uint64_t e)
{
	struct tp_event ev = {
		.kind = TP_EV_SLICE,
		.name_stable = (uint8_t)stable,
		.nargs = 1, /* as most events have: the fast path ignores it */
		.name_len = nlen,
		.cat = cat,
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

static void slice_as(struct tp_agg *a, const char *name, int stable, int64_t tid, uint64_t s,
		     uint64_t e)
{
	slice_n(a, name, (uint32_t)strlen(name), "user_annotation", stable, tid, s, e);
}

static void slice(struct tp_agg *a, const char *name, int64_t tid, uint64_t s, uint64_t e)
{
	slice_as(a, name, 0, tid, s, e);
}

/* The value at index `col` of the row named `name` (2 calls, 3 total, 4
 * self, 5 min, 6 max), or -1; of category cat when not NULL. */
static int64_t cell_cat(const struct tp_doc *d, const char *name, const char *cat, int col)
{
	for (size_t i = 0; i + 7 < d->n; i++) {
		const struct tp_doc_node *x = &d->nodes[i];
		if (x->kind != TP_DOC_ARRAY || tp_doc_key(d, x))
			continue;
		const struct tp_doc_node *nm = &d->nodes[i + 1];
		if (nm->kind != TP_DOC_VALUE || nm->type != TP_VAL_STR ||
		    strcmp(tp_doc_text(d, nm), name))
			continue;
		const struct tp_doc_node *ct = &d->nodes[i + 2];
		if (cat && (ct->kind != TP_DOC_VALUE || ct->type != TP_VAL_STR ||
			    strcmp(tp_doc_text(d, ct), cat)))
			continue;
		const struct tp_doc_node *v = &d->nodes[i + 1 + col];
		return v->type == TP_VAL_I64 ? v->i : (int64_t)v->u;
	}
	return -1;
}

static int64_t cell(const struct tp_doc *d, const char *name, int col)
{
	return cell_cat(d, name, NULL, col);
}

/* The rows of the table. */
static int rows(const struct tp_doc *d)
{
	int n = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->nodes[i].kind == TP_DOC_ARRAY && !tp_doc_key(d, &d->nodes[i]) &&
		    i + 1 < d->n && d->nodes[i + 1].type == TP_VAL_STR)
			n++;
	return n;
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

/* Stable names are found by address (format/aggregate.c's cache and fast
 * path: a slice of the last thread seen, after all on its stack, whose name
 * the cache knows).  Each case below runs slices one after another on one
 * thread, so that every slice after the first of a name takes that path. */
#define RUN(a, name, nlen, cat, tid, n, t0)                                                 \
	for (uint64_t i_ = 0; i_ < (n); i_++)                                                \
		slice_n(a, name, nlen, cat, 1, tid, (t0) + 10 * i_, (t0) + 10 * i_ + 4 + i_ % 3)

START_TEST(test_stable_same_text)
{
	/* One text at three addresses (a literal of this program, a copy on
	 * the stack, one on the heap): one row. */
	static const char lit[] = "cudaLaunchKernel";
	char stack[sizeof(lit)];
	memcpy(stack, lit, sizeof(lit));
	char *heap = strdup(lit);
	ck_assert_ptr_nonnull(heap);
	struct tp_agg *a = tp_agg_new(0);
	RUN(a, lit, 16, "cuda_runtime", 1, 5, 0);
	RUN(a, stack, 16, "cuda_runtime", 1, 5, 1000);
	RUN(a, heap, 16, "cuda_runtime", 1, 5, 2000);
	RUN(a, lit, 16, "cuda_runtime", 1, 5, 3000);
	/* The same address, other lengths or category: other rows. */
	RUN(a, lit, 10, "cuda_runtime", 1, 3, 4000);
	RUN(a, lit, 16, "cuda_driver", 1, 3, 5000);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(rows(&d), 3);
	ck_assert_int_eq(cell_cat(&d, "cudaLaunchKernel", "cuda_runtime", 2), 20);
	/* Durations 4, 5, 6, 4, 5 in each run of 5. */
	ck_assert_int_eq(cell_cat(&d, "cudaLaunchKernel", "cuda_runtime", 3), 4 * 24);
	ck_assert_int_eq(cell_cat(&d, "cudaLaunchKernel", "cuda_runtime", 4), 4 * 24);
	ck_assert_int_eq(cell_cat(&d, "cudaLaunchKernel", "cuda_runtime", 5), 4);
	ck_assert_int_eq(cell_cat(&d, "cudaLaunchKernel", "cuda_runtime", 6), 6);
	ck_assert_int_eq(cell_cat(&d, "cudaLaunch", "cuda_runtime", 2), 3);
	ck_assert_int_eq(cell_cat(&d, "cudaLaunchKernel", "cuda_driver", 2), 3);
	ck_assert_int_eq((int64_t)member(&d, "span_ns"), 5020 + 6);
	tp_doc_free(&d);
	tp_agg_free(a);
	free(heap);
}
END_TEST

START_TEST(test_stable_reused_address)
{
	/* A stable name's buffer given another text of the same length
	 * (format/event.h: freed and reused): another row, at every length the
	 * cache compares differently (short, 8 to 16, 17 to 32, longer), and
	 * on the stack and the heap. */
	static const char *const texts[][2] = {
		{ "kA", "kB" },
		{ "kernel_0123A", "kernel_0123B" },
		{ "Akernel_0123456789abc", "Bkernel_0123456789abc" },
		{ "void at::native::vectorized_elementwise_kernel<4, A>",
		  "void at::native::vectorized_elementwise_kernel<4, B>" },
	};
	for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		for (int on_heap = 0; on_heap < 2; on_heap++) {
			uint32_t n = (uint32_t)strlen(texts[k][0]);
			char stack[64];
			char *buf = on_heap ? malloc(n + 1) : stack;
			ck_assert_ptr_nonnull(buf);
			struct tp_agg *a = tp_agg_new(0);
			memcpy(buf, texts[k][0], n + 1);
			RUN(a, buf, n, "kernel", 9, 4, 0);
			memcpy(buf, texts[k][1], n + 1);
			RUN(a, buf, n, "kernel", 9, 6, 1000);
			memcpy(buf, texts[k][0], n + 1);
			RUN(a, buf, n, "kernel", 9, 2, 2000);
			struct tp_doc d;
			doc_of(a, &d);
			ck_assert_msg(cell(&d, texts[k][0], 2) == 6 && cell(&d, texts[k][1], 2) == 6,
				      "%s: %lld and %lld calls, not 6 and 6 (%s)", texts[k][0],
				      (long long)cell(&d, texts[k][0], 2),
				      (long long)cell(&d, texts[k][1], 2),
				      on_heap ? "heap" : "stack");
			ck_assert_int_eq(cell(&d, texts[k][1], 3), 4 + 5 + 6 + 4 + 5 + 6);
			tp_doc_free(&d);
			tp_agg_free(a);
			if (on_heap)
				free(buf);
		}
	}
}
END_TEST

START_TEST(test_fast_path_span_threads)
{
	/* Runs of two threads in turn (the first slice of a run finds its
	 * thread again, then the cache): nesting per thread as ever, and the
	 * span from the earliest start to the latest end, however the slices
	 * that hold them came. */
	struct tp_agg *a = tp_agg_new(0);
	RUN(a, "child", 5, "cpu_op", 1, 4, 1000); /* 1000 .. 1036 */
	RUN(a, "other", 5, "cpu_op", 2, 4, 500);  /* 500 .. 536 */
	RUN(a, "child", 5, "cpu_op", 1, 4, 1100); /* 1100 .. 1136 */
	RUN(a, "other", 5, "cpu_op", 2, 3, 5000); /* .. 5026: the latest end */
	slice_n(a, "parent", 6, "cpu_op", 1, 1, 990, 1200);
	RUN(a, "late", 4, "cpu_op", 1, 3, 1300);
	struct tp_doc d;
	doc_of(a, &d);
	ck_assert_int_eq(cell(&d, "child", 2), 8);
	ck_assert_int_eq(cell(&d, "parent", 4), 210 - 2 * (4 + 5 + 6 + 4));
	ck_assert_int_eq(cell(&d, "other", 4), 4 + 5 + 6 + 4 + 4 + 5 + 6);
	ck_assert_int_eq((int64_t)member(&d, "span_ns"), 5026 - 500);
	tp_doc_free(&d);
	tp_agg_free(a);
	/* The earliest start in the fast path's slices: never, as the first
	 * slice of a thread takes the slow path; here the earliest is the
	 * first of thread 3, written after others. */
	struct tp_agg *b = tp_agg_new(0);
	RUN(b, "x", 1, "cpu_op", 1, 3, 100);
	RUN(b, "x", 1, "cpu_op", 3, 3, 10);
	RUN(b, "x", 1, "cpu_op", 1, 3, 200);
	doc_of(b, &d);
	ck_assert_int_eq((int64_t)member(&d, "span_ns"), 226 - 10);
	ck_assert_int_eq(cell(&d, "x", 2), 9);
	tp_doc_free(&d);
	tp_agg_free(b);
	/* In the next file, whose threads' stacks are kept (room from the
	 * first slice on): a thread whose first slice has no duration (never
	 * on its stack, but its name then in the cache), then one that starts
	 * before it, the earliest of the file. */
	struct tp_agg *c = tp_agg_new(0);
	ck_assert_ptr_eq(c, b);
	slice_n(c, "x", 1, "cpu_op", 1, 1, 100, 100);
	slice_n(c, "x", 1, "cpu_op", 1, 1, 95, 99);
	RUN(c, "x", 1, "cpu_op", 1, 3, 100);
	RUN(c, "x", 1, "cpu_op", 3, 3, 110);
	doc_of(c, &d);
	ck_assert_int_eq((int64_t)member(&d, "span_ns"), 136 - 95);
	ck_assert_int_eq(cell(&d, "x", 2), 8);
	tp_doc_free(&d);
	tp_agg_free(c);
}
END_TEST

/* tp_agg_top (the live file's "top"): the largest totals first, at most
 * max, ties in the order the rows came; the stable names of the fast path
 * counted as the others. */
START_TEST(test_top)
{
	struct tp_agg *a = tp_agg_new(0);
	ck_assert_ptr_nonnull(a);
	struct tp_agg_top t[3];
	ck_assert_uint_eq(tp_agg_top(a, t, 3), 0);
	static const char sync[] = "cudaStreamSynchronize";
	for (int i = 0; i < 5; i++)
		slice_as(a, sync, 1, 1, 1000 * i, 1000 * i + 30); /* 5 calls, 150 */
	slice(a, "big", 1, 10000, 10400);			    /* 1 call, 400 */
	slice(a, "tie1", 2, 0, 100);
	slice(a, "tie2", 2, 200, 300);
	slice(a, "small", 2, 400, 401);
	size_t n = tp_agg_top(a, t, 3);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq((int)t[0].nlen, 3);
	ck_assert(!memcmp(t[0].name, "big", 3) && t[0].total == 400 && t[0].calls == 1);
	ck_assert(t[1].nlen == strlen(sync) && !memcmp(t[1].name, sync, t[1].nlen));
	ck_assert(t[1].total == 150 && t[1].calls == 5);
	ck_assert(!memcmp(t[2].name, "tie1", 4) && t[2].total == 100);
	ck_assert_uint_eq(tp_agg_top(a, t, 1), 1);
	ck_assert(!memcmp(t[0].name, "big", 3));
	ck_assert_uint_eq(tp_agg_top(a, t, 0), 0);
	tp_agg_free(a);
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
	tcase_add_test(tc, test_stable_same_text);
	tcase_add_test(tc, test_stable_reused_address);
	tcase_add_test(tc, test_fast_path_span_threads);
	tcase_add_test(tc, test_top);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(aggregate_suite());
}
