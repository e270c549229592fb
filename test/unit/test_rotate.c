/* Unit tests for collector/rotate.c: TRACEPROF_NUM_TRACES_TO_KEEP deletes
 * this process's oldest files, never the newest, never a file held by a
 * TRACEPROF_ON_SAVE command still running on it; a held file goes when it is
 * released, if still over the limit.  Real files in a temporary folder. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/rotate.h"

#include "test/unit/check_main.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/tp-rotate-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	tp_rotate_forget();
}

static const char *path(const char *name)
{
	static char p[4][128];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* Writes the file and tells rotation, as the flush thread does. */
static void save(const char *name, int64_t keep)
{
	FILE *f = fopen(path(name), "w");
	ck_assert_ptr_nonnull(f);
	fputs("{}", f);
	fclose(f);
	tp_rotate_saved(path(name), keep);
}

static int exists(const char *name)
{
	return access(path(name), F_OK) == 0;
}

START_TEST(test_keeps_the_newest)
{
	save("a", 2);
	save("b", 2);
	save("c", 2);
	ck_assert(!exists("a"));
	ck_assert(exists("b") && exists("c"));
	save("d", 2);
	ck_assert(!exists("b"));
	ck_assert(exists("c") && exists("d"));
}
END_TEST

START_TEST(test_keep_all_and_keep_zero)
{
	/* -1 keeps everything; 0 leaves deletion to the on-save plugin. */
	save("a", -1);
	save("b", -1);
	save("c", 0);
	ck_assert(exists("a") && exists("b") && exists("c"));
	ck_assert_int_eq(tp_rotate_remove(path("b")), 0);
	ck_assert(!exists("b"));
	ck_assert_int_eq(tp_rotate_remove(path("b")), -ENOENT);
	ck_assert_int_eq(tp_rotate_remove(path("not-ours")), -ENOENT);
}
END_TEST

START_TEST(test_held_files_wait)
{
	save("a", 1);
	tp_rotate_hold(path("a"), 1); /* its upload runs */
	save("b", 1);
	/* Over the limit, but a is held and b is the newest. */
	ck_assert(exists("a") && exists("b"));
	tp_rotate_hold(path("b"), 1);
	save("c", 1);
	ck_assert(exists("a") && exists("b") && exists("c"));
	/* b's upload ends: b is over the limit and goes; a is still held. */
	ck_assert_int_eq(tp_rotate_hold(path("b"), 0), 1);
	ck_assert(!exists("b"));
	ck_assert(exists("a") && exists("c"));
	save("d", 1);
	ck_assert(!exists("c"));
	ck_assert(exists("a") && exists("d"));
	/* a's ends: it goes, the newest stays. */
	ck_assert_int_eq(tp_rotate_hold(path("a"), 0), 1);
	ck_assert(!exists("a"));
	ck_assert(exists("d"));
	/* Released within the limit: kept. */
	tp_rotate_hold(path("d"), 1);
	ck_assert_int_eq(tp_rotate_hold(path("d"), 0), 0);
	ck_assert(exists("d"));
	/* A file rotation does not know is left alone. */
	ck_assert_int_eq(tp_rotate_hold(path("unknown"), 0), 0);
}
END_TEST

START_TEST(test_never_deletes_foreign_files)
{
	FILE *f = fopen(path("theirs"), "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	save("a", 1);
	save("b", 1);
	save("c", 1);
	ck_assert(exists("theirs"));
	ck_assert(!exists("a") && !exists("b") && exists("c"));
}
END_TEST

static Suite *rotate_suite(void)
{
	Suite *s = suite_create("rotate");
	TCase *tc = tcase_create("rotate");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_keeps_the_newest);
	tcase_add_test(tc, test_keep_all_and_keep_zero);
	tcase_add_test(tc, test_held_files_wait);
	tcase_add_test(tc, test_never_deletes_foreign_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(rotate_suite());
}
