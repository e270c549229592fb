/* The footer (collector/footer.c): the losses of the process's fixed
 * tables are written there, not only counted: thread names past the 1024
 * kept (thread_names_lost), kernel registrations past the table
 * (kernel_names_lost), annotations past the GPU side's store
 * (gpu_annotations_lost). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collector/annos.h"
#include "collector/cuda_kernels.h"
#include "collector/flush_int.h"
#include "collector/nvtx_decode.h"

#include "test/unit/check_main.h"

/* The value of the footer's top-level member `key`, or UINT64_MAX when
 * the footer has none. */
static uint64_t member(const char *key)
{
	struct tp_doc d;
	tp_doc_init(&d);
	struct tp_win w;
	memset(&w, 0, sizeof(w));
	tp_fl_footer(&w, &d, 0, 1, 0, 0);
	uint64_t v = UINT64_MAX;
	int depth = 0;
	for (size_t i = 0; i < d.n; i++) {
		const struct tp_doc_node *x = &d.nodes[i];
		if (x->kind == TP_DOC_END) {
			depth--;
			continue;
		}
		if (!depth && x->kind == TP_DOC_VALUE && tp_doc_key(&d, x) &&
		    !strcmp(tp_doc_key(&d, x), key))
			v = x->u;
		if (x->kind != TP_DOC_VALUE)
			depth++;
	}
	tp_doc_free(&d);
	return v;
}

START_TEST(test_thread_names_lost)
{
	ck_assert_uint_eq(member("thread_names_lost"), 0);
	char name[16];
	for (int i = 0; i < 1100; i++) {
		int n = snprintf(name, sizeof(name), "t%d", i);
		tp_nvtx_thread_name_set(1000000 + i, name, (size_t)n);
	}
	/* The same name again takes no slot, a new one would. */
	tp_nvtx_thread_name_set(1000000, "t0", 2);
	ck_assert_uint_eq(member("thread_names_lost"), 1100 - 1024);
}
END_TEST

START_TEST(test_kernel_names_lost)
{
	ck_assert_uint_eq(member("kernel_names_lost"), 0);
	/* A million kernels fill the table; three more do not fit. */
	for (uintptr_t i = 0; i < (1u << 20) + 3; i++)
		tp_cuda_kernels_register((const void *)(0x10000 + 16 * i), "_Z1kv");
	ck_assert_uint_eq(member("kernel_names_lost"), 3);
}
END_TEST

START_TEST(test_gpu_annotations_lost)
{
	ck_assert_uint_eq(member("gpu_annotations_lost"), 0);
	tp_annos_keep();
	for (uint32_t i = 0; i < TP_ANNOS_MAX + 2; i++)
		tp_annos_add(1, 1, "fwd", 3, i, i + 1);
	ck_assert_uint_eq(member("gpu_annotations_lost"), 2);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("footer");
	TCase *tc = tcase_create("footer");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_thread_names_lost);
	tcase_add_test(tc, test_kernel_names_lost);
	tcase_add_test(tc, test_gpu_annotations_lost);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
