/* Unit tests for common/fd.c: traceprof's descriptors are moved high, keep
 * their identity, and one the program closed and reused is never used or
 * closed by traceprof (issue 17 item 1). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fd.h"

#include "test/unit/check_main.h"

START_TEST(test_adopt_moves_high)
{
	struct tp_fd f;
	int low = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(low, 0);
	ck_assert_int_eq(tp_fd_adopt(&f, low), 0);
	ck_assert_int_ge(f.fd, TP_FD_FLOOR);
	/* The low number is free again: the program's next open gets it. */
	ck_assert_int_eq(fcntl(low, F_GETFD), -1);
	ck_assert_int_ne(fcntl(f.fd, F_GETFD) & FD_CLOEXEC, 0);
	ck_assert(tp_fd_ours(&f));
	ck_assert_int_eq(tp_fd_close(&f), 0);
	ck_assert_int_eq(f.fd, -1);
}
END_TEST

START_TEST(test_low_limit_falls_back)
{
	/* A soft limit of 64: the floor is half of it. */
	struct rlimit rl = { 64, 64 };
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	struct tp_fd f;
	ck_assert_int_eq(tp_fd_adopt(&f, open("/dev/null", O_RDONLY | O_CLOEXEC)), 0);
	ck_assert_int_ge(f.fd, 32);
	ck_assert_int_lt(f.fd, 64);
	ck_assert_int_eq(tp_fd_close(&f), 0);
}
END_TEST

START_TEST(test_replaced_is_not_ours_and_not_closed)
{
	struct tp_fd f;
	ck_assert_int_eq(tp_fd_adopt(&f, open("/dev/null", O_RDONLY | O_CLOEXEC)), 0);
	int num = f.fd;
	/* The program closes "all" and opens its own file on that number. */
	char path[] = "/tmp/tp-fd-test-XXXXXX";
	int mine = mkstemp(path);
	ck_assert_int_ge(mine, 0);
	unlink(path);
	ck_assert_int_eq(dup2(mine, num), num);
	close(mine);
	ck_assert(!tp_fd_ours(&f));
	ck_assert_int_eq(tp_fd_close(&f), -1);
	ck_assert_int_eq(f.fd, -1);
	ck_assert_int_ge(fcntl(num, F_GETFD), 0); /* still the program's */
	close(num);
	/* Closed, not reused: not ours either, and nothing to close. */
	ck_assert_int_eq(tp_fd_adopt(&f, open("/dev/null", O_RDONLY | O_CLOEXEC)), 0);
	close(f.fd);
	ck_assert(!tp_fd_ours(&f));
}
END_TEST

START_TEST(test_read_small)
{
	char buf[64];
	ck_assert_int_gt(tp_fd_read_small("/proc/self/comm", buf, sizeof(buf)), 0);
	ck_assert_ptr_nonnull(strstr(buf, "test_fd"));
	ck_assert_int_eq(tp_fd_read_small("/nonexistent/x", buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "");
}
END_TEST

/* ---- the race inside tp_fd_open_at(), made to happen ----------------------
 * This binary's openat() and fcntl() replace libc's for common/fd.c (linked
 * statically): when armed, they play the program that closes every
 * descriptor and opens its own file, which gets our number, at one of the
 * three moments of an open: right after openat() (before the check), just
 * before the move (F_DUPFD_CLOEXEC), just after it (before the low number's
 * close).  Unarmed, they are the system calls. */
enum { RACE_NONE, RACE_AFTER_OPEN, RACE_BEFORE_MOVE, RACE_AFTER_MOVE, RACE_ALL_AFTER_OPEN };
static int race_at;
static int race_dir = -1; /* RACE_ALL_AFTER_OPEN: our folder, closed too */
static int race_file = -1; /* the program's file, put on our number */
static int race_victim = -1; /* the number it took */

static void race_take(int fd)
{
	ck_assert_int_eq(dup2(race_file, fd), fd); /* closes ours, opens the program's */
	race_victim = fd;
	race_at = RACE_NONE; /* once */
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
	va_end(ap);
	int fd = (int)syscall(SYS_openat, dirfd, path, flags, mode);
	if (fd >= 0 && race_at == RACE_ALL_AFTER_OPEN)
		close(race_dir); /* the program closes all: our folder too */
	if (fd >= 0 && (race_at == RACE_AFTER_OPEN || race_at == RACE_ALL_AFTER_OPEN))
		race_take(fd);
	return fd;
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (cmd == F_DUPFD_CLOEXEC && race_at == RACE_BEFORE_MOVE)
		race_take(fd);
	int at = race_at;
	int rc = (int)syscall(SYS_fcntl, fd, cmd, arg);
	if (cmd == F_DUPFD_CLOEXEC && rc >= 0 && at == RACE_AFTER_MOVE)
		race_take(fd);
	return rc;
}

/* Each moment: the program's file stays open on the number it took, its
 * offset untouched; we end with the file we asked for, high, created once
 * (O_EXCL would refuse a second creation). */
static void race_run(int moment)
{
	char dir[] = "/tmp/tp-fd-race-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char prog_path[64], ours[64];
	snprintf(prog_path, sizeof(prog_path), "%s/program-data", dir);
	snprintf(ours, sizeof(ours), "%s/trace.tmp", dir);
	race_file = open(prog_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(race_file, 0);
	ck_assert_int_eq(write(race_file, "program data\n", 13), 13);
	race_at = moment;
	struct tp_fd f;
	ck_assert_int_eq(tp_fd_open_at(&f, AT_FDCWD, ours, O_WRONLY | O_CREAT | O_EXCL, 0600), 0);
	ck_assert_int_eq(race_at, RACE_NONE); /* the race happened */
	ck_assert_int_ge(f.fd, TP_FD_FLOOR);
	struct stat st, want, prog;
	ck_assert_int_eq(stat(ours, &want), 0);
	ck_assert_int_eq(fstat(f.fd, &st), 0);
	ck_assert(st.st_ino == want.st_ino && st.st_dev == want.st_dev);
	/* The program's number: still open, still its file, offset kept. */
	ck_assert_int_eq(stat(prog_path, &prog), 0);
	ck_assert_int_eq(fstat(race_victim, &st), 0);
	ck_assert_msg(st.st_ino == prog.st_ino, "fd %d: not the program's file any more",
		      race_victim);
	ck_assert_int_eq(lseek(race_victim, 0, SEEK_CUR), 13);
	ck_assert_int_eq(tp_fd_close(&f), 0);
	ck_assert_int_eq(fstat(race_victim, &st), 0);
	ck_assert(st.st_ino == prog.st_ino);
	close(race_victim);
	close(race_file);
	unlink(prog_path);
	unlink(ours);
	rmdir(dir);
}

START_TEST(test_open_race_after_open)
{
	race_run(RACE_AFTER_OPEN);
}
END_TEST

START_TEST(test_open_race_before_move)
{
	race_run(RACE_BEFORE_MOVE);
}
END_TEST

START_TEST(test_open_race_after_move)
{
	race_run(RACE_AFTER_MOVE);
}
END_TEST

/* The program closes everything, the folder we open in included, and takes
 * the number: nothing tells what the number is now, so it is not closed (our
 * file is gone anyway); the open fails, as the folder is gone. */
START_TEST(test_open_race_folder_closed)
{
	char dir[] = "/tmp/tp-fd-race-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char prog_path[64];
	snprintf(prog_path, sizeof(prog_path), "%s/program-data", dir);
	race_file = open(prog_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(race_file, 0);
	ck_assert_int_eq(write(race_file, "program data\n", 13), 13);
	race_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(race_dir, 0);
	race_at = RACE_ALL_AFTER_OPEN;
	struct tp_fd f;
	ck_assert_int_eq(tp_fd_open_at(&f, race_dir, "trace.tmp", O_WRONLY | O_CREAT | O_EXCL,
				       0600), -EBADF);
	ck_assert_int_eq(race_at, RACE_NONE);
	ck_assert_int_eq(f.fd, -1);
	struct stat st, prog;
	ck_assert_int_eq(stat(prog_path, &prog), 0);
	ck_assert_int_eq(fstat(race_victim, &st), 0);
	ck_assert_msg(st.st_ino == prog.st_ino, "fd %d: not the program's file any more",
		      race_victim);
	ck_assert_int_eq(lseek(race_victim, 0, SEEK_CUR), 13);
	close(race_victim);
	close(race_file);
	char ours[64];
	snprintf(ours, sizeof(ours), "%s/trace.tmp", dir);
	unlink(ours);
	unlink(prog_path);
	rmdir(dir);
}
END_TEST

static Suite *fd_suite(void)
{
	Suite *s = suite_create("fd");
	TCase *tc = tcase_create("fd");
	tcase_add_test(tc, test_adopt_moves_high);
	tcase_add_test(tc, test_low_limit_falls_back);
	tcase_add_test(tc, test_replaced_is_not_ours_and_not_closed);
	tcase_add_test(tc, test_read_small);
	tcase_add_test(tc, test_open_race_after_open);
	tcase_add_test(tc, test_open_race_before_move);
	tcase_add_test(tc, test_open_race_after_move);
	tcase_add_test(tc, test_open_race_folder_closed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(fd_suite());
}
