/* Unit tests for common/demangle.c: names stay as they are while no
 * demangler is loaded, and a real libstdc++ loaded later (dlopen, as a
 * Python extension would) is found and used. */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/demangle.h"

#include "test/unit/check_main.h"

static void *load_libstdcxx(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		printf("SKIP: libstdc++.so.6 cannot be loaded (%s)\n", dlerror());
		exit(77);
	}
	return h;
}

START_TEST(test_not_mangled)
{
	char buf[16];
	ck_assert_ptr_null(tp_demangle(NULL));
	ck_assert_ptr_null(tp_demangle("main"));
	ck_assert_ptr_null(tp_demangle("_"));
	ck_assert_ptr_null(tp_demangle("__Z3foov")); /* not "_Z" */
	const char *name = "vecAdd";
	ck_assert_ptr_eq(tp_demangle_into(name, buf, sizeof(buf)), name);
}
END_TEST

START_TEST(test_found_when_loaded_later)
{
	/* This C program has no libstdc++ of its own. */
	if (dlsym(RTLD_DEFAULT, "__cxa_demangle")) {
		printf("note: __cxa_demangle is loaded already (a sanitizer runtime's?): nothing to check\n");
		return;
	}
	ck_assert_ptr_null(tp_demangle("_Z6vecAddPfS_i"));
	load_libstdcxx();
	char *d = tp_demangle("_Z6vecAddPfS_i");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d, "vecAdd(float*, float*, int)");
	free(d);
}
END_TEST

START_TEST(test_real_names)
{
	load_libstdcxx();
	char *d = tp_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_");
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq(d, "void at::native::vectorized_elementwise_kernel<4, "
			    "at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
			    "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)");
	free(d);
	/* Malformed: NULL, and the display form falls back to the input. */
	ck_assert_ptr_null(tp_demangle("_Z!!"));
	char buf[8];
	ck_assert_str_eq(tp_demangle_into("_Z!!", buf, sizeof(buf)), "_Z!!");
	/* Cut to the buffer, NUL-terminated. */
	const char *s = tp_demangle_into("_Z6vecAddPfS_i", buf, sizeof(buf));
	ck_assert_ptr_eq(s, buf);
	ck_assert_str_eq(s, "vecAdd(");
}
END_TEST

/* P<X, X, X, X> with X the previous such P, as back-references: 14 levels,
 * 241 bytes, would demangle to about 5 GB.  It must not be demangled at
 * all (the bound comes from the mangled name), quickly, and be counted. */
static char *blowup_name(int levels)
{
	char *s = malloc(64 + (size_t)levels * 24);
	ck_assert_ptr_nonnull(s);
	strcpy(s, "_Z6kernelI1PIiiE");
	for (int k = 2; k <= levels; k++) {
		char ref[8];
		int idx = k - 1; /* candidate k: S<k-1>_ in base 36 */
		snprintf(ref, sizeof(ref), "S%c_", idx < 10 ? '0' + idx : 'A' + idx - 10);
		strcat(s, "S0_I");
		for (int i = 0; i < 4; i++)
			strcat(s, ref);
		strcat(s, "E");
	}
	strcat(s, "EvT_");
	return s;
}

START_TEST(test_blowup_not_demangled)
{
	load_libstdcxx();
	char *name = blowup_name(14);
	uint64_t before = tp_demangle_refused_count();
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	char *d = tp_demangle(name);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	ck_assert_msg(d == NULL, "demangled to %zu bytes", d ? strlen(d) : 0);
	ck_assert_uint_eq(tp_demangle_refused_count(), before + 1);
	ck_assert_msg(ms < 100, "took %.1f ms", ms);
	char buf[64];
	ck_assert_ptr_eq(tp_demangle_into(name, buf, sizeof(buf)), name);
	free(name);
}
END_TEST

START_TEST(test_long_name_cut)
{
	load_libstdcxx();
	/* 7 levels: 78 KB demangled, under the work bound: cut to 4 KiB. */
	char *name = blowup_name(7);
	uint64_t before = tp_demangle_cut_count();
	char *d = tp_demangle(name);
	ck_assert_ptr_nonnull(d);
	size_t n = strlen(d);
	ck_assert_uint_le(n, TP_DEMANGLE_MAX);
	ck_assert_uint_ge(n, TP_DEMANGLE_MAX - 8);
	ck_assert_str_eq(d + n - 3, "...");
	ck_assert_int_eq(strncmp(d, "void kernel<P<int, int>, P<P<int, int>", 38), 0);
	ck_assert_uint_eq(tp_demangle_cut_count(), before + 1);
	free(d);
	free(name);
	/* A short one is whole and not counted. */
	d = tp_demangle("_Z6vecAddPfS_i");
	ck_assert_str_eq(d, "vecAdd(float*, float*, int)");
	ck_assert_uint_eq(tp_demangle_cut_count(), before + 1);
	free(d);
}
END_TEST

static Suite *demangle_suite(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("demangle");
	tcase_add_test(tc, test_not_mangled);
	tcase_add_test(tc, test_found_when_loaded_later);
	tcase_add_test(tc, test_real_names);
	tcase_add_test(tc, test_blowup_not_demangled);
	tcase_add_test(tc, test_long_name_cut);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(demangle_suite());
}
