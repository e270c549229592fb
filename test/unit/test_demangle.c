/* Unit tests for common/demangle.c: names stay as they are while no
 * demangler is loaded, and a real libstdc++ loaded later (dlopen, as a
 * Python extension would) is found and used. */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static Suite *demangle_suite(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("demangle");
	tcase_add_test(tc, test_not_mangled);
	tcase_add_test(tc, test_found_when_loaded_later);
	tcase_add_test(tc, test_real_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(demangle_suite());
}
