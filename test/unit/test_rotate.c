/* Unit tests for collector/rotate.c: TRACEPROF_NUM_TRACES_TO_KEEP deletes
 * this process's oldest files, never the newest, never a file held by a
 * TRACEPROF_ON_SAVE command still running on it; a held file goes when it is
 * released, if still over the limit.  Real files in a temporary folder. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
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

static uint64_t window;

/* Writes the file of a window of its own, or (part) of the same window as
 * the previous one, and tells rotation as the flush thread does: with the
 * folder's descriptor and the name in it. */
static void save_part(const char *name, int64_t keep, int part)
{
	FILE *f = fopen(path(name), "w");
	ck_assert_ptr_nonnull(f);
	fputs("{}", f);
	fclose(f);
	struct tp_fd d;
	ck_assert_int_eq(tp_fd_adopt(&d, open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)), 0);
	if (!part)
		window++;
	tp_rotate_saved(path(name), &d, name, window, keep);
	ck_assert_int_eq(d.fd, -1); /* taken over */
}

static void save(const char *name, int64_t keep)
{
	save_part(name, keep, 0);
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

/* TRACEPROF_MAX_FILE_MB splits a window into parts: keep counts windows,
 * and the parts of a window stay or go together (issue 17 item 7). */
START_TEST(test_keep_counts_windows_not_parts)
{
	save("w1.part1", 1);
	save_part("w1.part2", 1, 1);
	save_part("w1.part3", 1, 1);
	ck_assert(exists("w1.part1") && exists("w1.part2") && exists("w1.part3"));
	save("w2.part1", 1);
	ck_assert(!exists("w1.part1") && !exists("w1.part2") && !exists("w1.part3"));
	save_part("w2.part2", 1, 1);
	ck_assert(exists("w2.part1") && exists("w2.part2"));
	/* A window with a held part waits, whole. */
	tp_rotate_hold(path("w2.part1"), 1);
	save("w3", 1);
	ck_assert(exists("w2.part1") && exists("w2.part2") && exists("w3"));
	ck_assert_int_eq(tp_rotate_hold(path("w2.part1"), 0), 1);
	ck_assert(!exists("w2.part1") && !exists("w2.part2") && exists("w3"));
}
END_TEST

/* Deletion goes through the folder's descriptor: after a chdir() into a
 * folder holding a file of the same (relative) name, that file survives
 * (issue 17 item 2). */
START_TEST(test_deletes_in_its_folder_after_chdir)
{
	char cwd[4096];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	char other[64];
	strcpy(other, "/tmp/tp-rotate-other-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(other));
	ck_assert_int_eq(chdir(dir), 0);
	/* Saved by relative path, as with a relative TRACEPROF_FOLDER of ".". */
	FILE *f = fopen("x", "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	struct tp_fd d;
	ck_assert_int_eq(tp_fd_adopt(&d, open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)), 0);
	ck_assert_int_ge(d.fd, 3);
	tp_rotate_saved("x", &d, "x", ++window, 1);
	ck_assert_int_eq(chdir(other), 0);
	f = fopen("x", "w"); /* theirs */
	ck_assert_ptr_nonnull(f);
	fclose(f);
	save("y", 1);
	ck_assert_int_eq(access("x", F_OK), 0);
	ck_assert(!exists("x") && exists("y"));
	ck_assert_int_eq(tp_rotate_remove(path("y")), 0);
	ck_assert(!exists("y"));
	ck_assert_int_eq(chdir(cwd), 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", other);
	ck_assert_int_eq(system(cmd), 0);
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
	tcase_add_test(tc, test_keep_counts_windows_not_parts);
	tcase_add_test(tc, test_deletes_in_its_folder_after_chdir);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(rotate_suite());
}
