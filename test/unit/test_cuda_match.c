/* The CUDA name logic behind the dlsym and cuGetProcAddress hooks
 * (preload/resolve/cuda_match.c) over the generated table, and the argument packing
 * (collector/cuda_record.h).  cuGetProcAddress's answer is matched against the
 * real address of every variant of the symbol; here the "real addresses" are
 * fake ones chosen per test. */
#include <check.h>
#include <string.h>

#include "preload/resolve/cuda_match.c"

#include "test/unit/check_main.h"

START_TEST(test_table_sorted_and_consistent)
{
	ck_assert_int_gt(TP_CUDA_NFUNCS, 0);
	ck_assert_int_eq(TP_CUDA_NFUNCS, TP_CUDA_NRUNTIME + TP_CUDA_NDRIVER);
	for (int i = 1; i < TP_CUDA_NFUNCS; i++)
		ck_assert_msg(strcmp(tp_cuda_fns[i - 1].name, tp_cuda_fns[i].name) < 0,
			      "not sorted: %s >= %s", tp_cuda_fns[i - 1].name, tp_cuda_fns[i].name);
	for (int i = 0; i < TP_CUDA_NFUNCS; i++) {
		const char *n = tp_cuda_fns[i].name;
		int drv = !strncmp(n, "cu", 2) && strncmp(n, "cuda", 4);
		ck_assert_msg(tp_cuda_fns[i].lib == (drv ? TP_CUDA_LIB_DRIVER : TP_CUDA_LIB_RUNTIME),
			      "%s in the wrong library", n);
	}
}
END_TEST

START_TEST(test_correlating_calls)
{
	/* The generator flags exactly the calls whose GPU activity CUPTI can
	 * link (their wrappers push an external id): the flush side numbers
	 * those API events and no others. */
	int n = 0;
	for (int i = 0; i < TP_CUDA_NFUNCS; i++) {
		unsigned d = tp_cuda_fns[i].dec;
		int want = d == TP_CUDA_DEC_LAUNCH_RT || d == TP_CUDA_DEC_LAUNCH_DRV ||
			   d == TP_CUDA_DEC_MEMCPY || d == TP_CUDA_DEC_MEMSET ||
			   d == TP_CUDA_DEC_SYNC || d == TP_CUDA_DEC_GRAPH;
		ck_assert_msg(!!(tp_cuda_fns[i].flags & TP_CUDA_F_CORR) == want, "%s: flag %d",
			      tp_cuda_fns[i].name, tp_cuda_fns[i].flags);
		n += want;
	}
	ck_assert_int_gt(n, 50);
	int k = tp_cuda_find("cudaLaunchKernel");
	ck_assert_int_ge(k, 0);
	ck_assert(tp_cuda_fns[k].flags & TP_CUDA_F_CORR);
	k = tp_cuda_find("cudaGetDeviceCount");
	ck_assert_int_ge(k, 0);
	ck_assert(!(tp_cuda_fns[k].flags & TP_CUDA_F_CORR));
}
END_TEST

START_TEST(test_find_exact_names_only)
{
	const char *present[] = { "cuGetProcAddress", "cuGetProcAddress_v2", "cuMemAlloc", "cuMemAlloc_v2",
				  "cuMemcpyHtoD_v2_ptds", "cuLaunchKernel_ptsz", "cudaMalloc",
				  "cudaLaunchKernel", "cudaMemcpy_ptds", "__cudaRegisterFunction",
				  "__cudaLaunchKernel", "__cudaPushCallConfiguration", "__cudaGetKernel" };
	for (size_t i = 0; i < sizeof(present) / sizeof(*present); i++) {
		int id = tp_cuda_find(present[i]);
		ck_assert_msg(id >= 0, "%s not found", present[i]);
		ck_assert_str_eq(tp_cuda_fns[id].name, present[i]);
	}
	/* Prefixes and libraries built on CUDA are not CUDA functions
	 * (HAMi-core's "cu" prefix also caught cudnn and recursed). */
	const char *absent[] = { "cu", "cuMemAllo", "cuMemAlloc_v9", "cudnnCreate", "cublasCreate_v2",
				 "cudaMallocX", "", "zzz" };
	for (size_t i = 0; i < sizeof(absent) / sizeof(*absent); i++)
		ck_assert_msg(tp_cuda_find(absent[i]) < 0, "%s found", absent[i]);
	ck_assert_int_lt(tp_cuda_find(NULL), 0);
}
END_TEST

START_TEST(test_is_variant)
{
	ck_assert(tp_cuda_is_variant("cuMemAlloc", "cuMemAlloc"));
	ck_assert(tp_cuda_is_variant("cuMemAlloc", "cuMemAlloc_v2"));
	ck_assert(tp_cuda_is_variant("cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds"));
	ck_assert(tp_cuda_is_variant("cuLaunchKernel", "cuLaunchKernel_ptsz"));
	ck_assert(tp_cuda_is_variant("cuCtxCreate", "cuCtxCreate_v4"));
	ck_assert(!tp_cuda_is_variant("cuMemAlloc", "cuMemAllocAsync"));
	ck_assert(!tp_cuda_is_variant("cuMemAlloc", "cuMemAllocHost_v2"));
	ck_assert(!tp_cuda_is_variant("cuMemcpyHtoD", "cuMemcpyHtoDAsync_v2"));
	ck_assert(!tp_cuda_is_variant("cuMemAlloc", "cuMemAlloc_vx"));
	ck_assert(!tp_cuda_is_variant("cuMemAlloc", "cuMemAlloc_v2_ptdsx"));
}
END_TEST

/* Fake real addresses: id -> 0x1000 + 16 * id, except ids listed as
 * unknown (NULL). */
static int unknown_id = -1;
static void *fake_real(void *ctx, uint32_t id)
{
	(void)ctx;
	return (int)id == unknown_id ? NULL : (void *)(uintptr_t)(0x1000 + 16 * (uintptr_t)id);
}

static void *addr_of(const char *name)
{
	int id = tp_cuda_find(name);
	ck_assert_msg(id >= 0, "%s missing", name);
	return fake_real(NULL, (uint32_t)id);
}

START_TEST(test_match_exact_variant)
{
	/* The driver answers per version and flags; the wrapper chosen is the
	 * one of exactly the function it answered with. */
	const char *cases[][2] = {
		{ "cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds" }, /* flags 2 */
		{ "cuMemcpyHtoD", "cuMemcpyHtoD_v2" },	    /* flags 0 */
		{ "cuMemcpyHtoD", "cuMemcpyHtoD" },	    /* legacy version */
		{ "cuMemAlloc", "cuMemAlloc" },
		{ "cuMemAlloc", "cuMemAlloc_v2" },
		{ "cuLaunchKernel", "cuLaunchKernel_ptsz" },
		{ "cuGetProcAddress", "cuGetProcAddress_v2" }, /* itself */
		{ "cuGetProcAddress", "cuGetProcAddress" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int id = tp_cuda_match_variant(cases[i][0], addr_of(cases[i][1]), fake_real, NULL);
		ck_assert_msg(id >= 0, "%s -> %s: no match", cases[i][0], cases[i][1]);
		ck_assert_str_eq(tp_cuda_fns[id].name, cases[i][1]);
	}
}
END_TEST

START_TEST(test_match_never_null_or_other_function)
{
	ck_assert_int_lt(tp_cuda_match_variant("cuMemAlloc", NULL, fake_real, NULL), 0);
	ck_assert_int_lt(tp_cuda_match_variant(NULL, addr_of("cuMemAlloc"), fake_real, NULL), 0);
	/* An address of another function (cuMemAllocAsync starts with the same
	 * letters) is not a variant of cuMemAlloc. */
	ck_assert_int_lt(tp_cuda_match_variant("cuMemAlloc", addr_of("cuMemAllocAsync"), fake_real, NULL), 0);
	ck_assert_int_lt(tp_cuda_match_variant("cuMemAlloc", (void *)0x7, fake_real, NULL), 0);
	/* A variant whose real address is unknown is never matched. */
	unknown_id = tp_cuda_find("cuMemAlloc_v2");
	ck_assert_int_lt(tp_cuda_match_variant("cuMemAlloc", addr_of("cuMemAlloc_v2"), fake_real, NULL), 0);
	unknown_id = -1;
	ck_assert_int_lt(tp_cuda_match_variant("cuNoSuchThing", (void *)0x1000, fake_real, NULL), 0);
}
END_TEST

START_TEST(test_packing)
{
	uint64_t g = tp_cuda_pack_dim3(2147483647u, 65535, 7);
	ck_assert_uint_eq(g & 0xffffffffu, 2147483647u);
	ck_assert_uint_eq((g >> 32) & 0xffff, 65535);
	ck_assert_uint_eq(g >> 48, 7);
	uint64_t b = tp_cuda_pack_block(1024, 1024, 64, 232448);
	ck_assert_uint_eq(b & 0x7ff, 1024);
	ck_assert_uint_eq((b >> 11) & 0x7ff, 1024);
	ck_assert_uint_eq((b >> 22) & 0x3ff, 64);
	ck_assert_uint_eq(b >> 32, 232448);
	uint64_t k = tp_cuda_pack_bytes_kind(1ull << 40, 3);
	ck_assert_uint_eq(k & ((1ull << 56) - 1), 1ull << 40);
	ck_assert_uint_eq(k >> 56, 3);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("cuda_match");
	TCase *tc = tcase_create("cuda_match");
	tcase_add_test(tc, test_table_sorted_and_consistent);
	tcase_add_test(tc, test_correlating_calls);
	tcase_add_test(tc, test_find_exact_names_only);
	tcase_add_test(tc, test_is_variant);
	tcase_add_test(tc, test_match_exact_variant);
	tcase_add_test(tc, test_match_never_null_or_other_function);
	tcase_add_test(tc, test_packing);
	suite_add_tcase(su, tc);
	return tp_check_run(su);
}
