/* Unit tests for common/preload_env.c: the one rule for removing traceprof
 * from LD_PRELOAD, with the cases of both former callers
 * (preload/init.c's TRACEPROF_FOLLOW_EXEC=0 and collector/onsave.c's
 * upload command). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/preload_env.h"

#include "test/unit/check_main.h"

static const char *filt_flags(const char *value, const char *self, int flags)
{
	static char out[512];
	ssize_t n = tp_preload_env_filter(value, self, flags, out, sizeof(out));
	ck_assert_int_ge(n, 0);
	ck_assert_uint_eq(strlen(out), (size_t)n);
	return out;
}

static const char *filt(const char *value, const char *self)
{
	return filt_flags(value, self, 0);
}

START_TEST(test_self_by_file_name)
{
	const char *self = "libtraceprof.so";
	/* Alone: nothing remains. */
	ck_assert_str_eq(filt("/opt/tp/build/libtraceprof.so", self), "");
	ck_assert_str_eq(filt("libtraceprof.so", self), "");
	/* Others kept in order, separators ':' and ' ' (ld.so's), empty
	 * entries dropped, joined with ':'. */
	ck_assert_str_eq(filt("/a/libfoo.so:/opt/tp/libtraceprof.so /b/libbar.so", self),
			 "/a/libfoo.so:/b/libbar.so");
	ck_assert_str_eq(filt("::libfoo.so:  :libtraceprof.so::", self), "libfoo.so");
	/* A name that only contains ours is not ours. */
	ck_assert_str_eq(filt("/x/mylibtraceprof.so:/libtraceprof.so.bak/libz.so", self),
			 "/x/mylibtraceprof.so:/libtraceprof.so.bak/libz.so");
	ck_assert_str_eq(filt("", self), "");
	ck_assert_str_eq(filt(NULL, self), "");
}
END_TEST

START_TEST(test_other_copies_and_renamed_self)
{
	/* Another copy of the library (an installed one) would trace the
	 * child as well (onsave's rule, now init's too). */
	ck_assert_str_eq(filt("/usr/local/lib/libtraceprof.so:/home/u/tp/build/libtraceprof.so:libm.so.6",
			      "libtraceprof.so"),
			 "libm.so.6");
	ck_assert_str_eq(filt("libtraceprof-1.2.so:libc.so.6", "libtraceprof.so"), "libc.so.6");
	/* The library loaded under another name: that exact name is ours. */
	ck_assert_str_eq(filt("/tmp/x/tp-copy.so:/tmp/y/other.so", "tp-copy.so"), "/tmp/y/other.so");
	/* Self unknown (dladdr failed): the libtraceprof rule still applies. */
	ck_assert_str_eq(filt("libtraceprof.so:libfoo.so", ""), "libfoo.so");
	ck_assert_str_eq(filt("libtraceprof.so:libfoo.so", NULL), "libfoo.so");
	ck_assert_int_eq(tp_preload_env_is_ours("/a/libtraceprof.so", 18, NULL, 0), 1);
	ck_assert_int_eq(tp_preload_env_is_ours("/a/libtraceprof.so:x", 3, NULL, 0), 0);
}
END_TEST

START_TEST(test_sanitizer_runtime)
{
	/* Only a sanitizer build removes its runtime, and only when asked
	 * (the on-save command); this test is built with the library's flags. */
	const char *v = "/usr/lib/x86_64-linux-gnu/libtsan.so.2:/b/libtraceprof.so";
#if defined(__SANITIZE_THREAD__)
	ck_assert_str_eq(filt_flags(v, "libtraceprof.so", TP_PRELOAD_ENV_SANITIZER), "");
#else
	ck_assert_str_eq(filt_flags(v, "libtraceprof.so", TP_PRELOAD_ENV_SANITIZER),
			 "/usr/lib/x86_64-linux-gnu/libtsan.so.2");
#endif
	/* A program's exec'd children (TRACEPROF_FOLLOW_EXEC=0) keep it. */
	ck_assert_str_eq(filt(v, "libtraceprof.so"), "/usr/lib/x86_64-linux-gnu/libtsan.so.2");
}
END_TEST

START_TEST(test_small_buffer)
{
	char out[8];
	/* "libfoo.so" needs 10 bytes. */
	ck_assert_int_eq(tp_preload_env_filter("libfoo.so:libtraceprof.so", "libtraceprof.so", 0, out,
					       sizeof(out)),
			 -1);
	ck_assert_str_eq(out, "");
	/* strlen(value) + 1 always suffices. */
	const char *v = "a.so:b.so";
	char exact[10];
	ck_assert_int_eq(tp_preload_env_filter(v, "x.so", 0, exact, strlen(v) + 1), 9);
	ck_assert_str_eq(exact, v);
	ck_assert_int_eq(tp_preload_env_filter(v, "x.so", 0, exact, 0), -1);
}
END_TEST

static Suite *preload_env_suite(void)
{
	Suite *s = suite_create("preload_env");
	TCase *tc = tcase_create("preload_env");
	tcase_add_test(tc, test_self_by_file_name);
	tcase_add_test(tc, test_other_copies_and_renamed_self);
	tcase_add_test(tc, test_sanitizer_runtime);
	tcase_add_test(tc, test_small_buffer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(preload_env_suite());
}
