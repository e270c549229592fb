/* Unit tests for common/elf.c: reading loaded objects' own symbol tables,
 * sonames and DT_NEEDED, checked against what the dynamic linker itself
 * answers for the objects of this test program (libc, libm). */
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <string.h>

#include "common/elf.h"

#include "test/unit/check_main.h"

struct want {
	const char *soname;
	struct tp_elf e;
	int found;
};

static int find(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct want *w = data;
	struct tp_elf e;
	if (tp_elf_open_phdr(&e, info) < 0)
		return 0;
	const char *so = tp_elf_soname(&e);
	if (!so || strcmp(so, w->soname))
		return 0;
	w->e = e;
	w->found = 1;
	return 1;
}

static struct tp_elf object(const char *soname)
{
	struct want w = { soname, { 0 }, 0 };
	dl_iterate_phdr(find, &w);
	ck_assert_msg(w.found, "%s not loaded", soname);
	return w.e;
}

START_TEST(own_definitions_match_the_linker)
{
	struct tp_elf libc = object("libc.so.6");
	/* The default version, as dlsym on libc's own handle answers it (not
	 * RTLD_DEFAULT: a sanitizer runtime interposes fopen and malloc). */
	void *hc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	ck_assert_ptr_nonnull(hc);
	ck_assert_ptr_eq(tp_elf_lookup(&libc, "strlen_no_such", NULL), NULL);
	ck_assert_ptr_eq(tp_elf_lookup(&libc, "fopen", NULL), dlsym(hc, "fopen"));
	ck_assert_ptr_eq(tp_elf_lookup(&libc, "malloc", NULL), dlsym(hc, "malloc"));
	/* libm defines cos; libc does not (its own table only, no dependency). */
	void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libm.so.6", RTLD_NOW);
	ck_assert_ptr_nonnull(h);
	struct tp_elf libm = object("libm.so.6");
	ck_assert_ptr_eq(tp_elf_lookup(&libm, "hypot", NULL), dlsym(h, "hypot"));
	ck_assert_ptr_eq(tp_elf_lookup(&libc, "hypot", NULL), NULL);
	/* cos is an IFUNC on x86-64: defined, but only the linker knows where. */
	int ifunc = 0;
	void *c = tp_elf_lookup(&libm, "cos", &ifunc);
	ck_assert_msg((c == NULL && ifunc) || c == dlsym(h, "cos"), "cos: %p ifunc %d", c, ifunc);
	/* libm uses libc's symbols without defining them: undefined there. */
	ck_assert_ptr_eq(tp_elf_lookup(&libm, "fopen", NULL), NULL);
}
END_TEST

START_TEST(needed_and_soname)
{
	struct tp_elf libm = object("libm.so.6");
	ck_assert_str_eq(tp_elf_soname(&libm), "libm.so.6");
	int libc = 0;
	const char *n;
	for (int k = 0; (n = tp_elf_needed(&libm, k)); k++)
		libc |= !strcmp(n, "libc.so.6");
	ck_assert_msg(libc, "libm's DT_NEEDED lacks libc.so.6");
	ck_assert_ptr_eq(tp_elf_needed(&libm, 1000), NULL);
}
END_TEST

/* What libm's relocations bind: libc's qsort at a version libm names
 * (GLIBC_2.2.5 on x86-64), crtstuff's weak unversioned reference; what it
 * defines is no reference. */
START_TEST(references_and_their_versions)
{
	struct tp_elf libm = object("libm.so.6");
	const char *v = "unset";
	ck_assert_int_eq(tp_elf_reference(&libm, "qsort", &v), 1);
	ck_assert_ptr_nonnull(v);
	ck_assert_msg(!strncmp(v, "GLIBC_", 6), "qsort's version: %s", v);
	void *hc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	ck_assert_ptr_nonnull(hc);
	ck_assert_ptr_eq(dlvsym(hc, "qsort", v), dlsym(hc, "qsort"));
	/* That reference binds libc's definition at its version, and a
	 * version libc does not define binds nothing there. */
	struct tp_elf libc = object("libc.so.6");
	ck_assert_ptr_eq(tp_elf_lookup_version(&libc, "qsort", v, NULL), dlvsym(hc, "qsort", v));
	ck_assert_ptr_null(tp_elf_lookup_version(&libc, "qsort", "libcudart.so.12", NULL));
	v = "unset";
	ck_assert_int_eq(tp_elf_reference(&libm, "_ITM_deregisterTMCloneTable", &v), 1);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(tp_elf_reference(&libm, "hypot", &v), 0);
	ck_assert_int_eq(tp_elf_reference(&libm, "no_such_name", &v), 0);
	ck_assert_ptr_null(v);
}
END_TEST

START_TEST(no_table)
{
	struct tp_elf e;
	ck_assert_int_eq(tp_elf_open(&e, 0, NULL), -1);
	ck_assert_ptr_eq(tp_elf_lookup(&e, "fopen", NULL), NULL);
	ck_assert_ptr_eq(tp_elf_soname(&e), NULL);
	const char *v = "unset";
	ck_assert_int_eq(tp_elf_reference(&e, "fopen", &v), 0);
	ck_assert_ptr_null(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("elf");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, own_definitions_match_the_linker);
	tcase_add_test(tc, needed_and_soname);
	tcase_add_test(tc, references_and_their_versions);
	tcase_add_test(tc, no_table);
	suite_add_tcase(s, tc);
	return tp_check_run(s);
}
