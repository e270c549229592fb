/* Unit tests for common/fd.c: traceprof's descriptors are moved high, keep
 * their identity, and one the program closed and reused is never used or
 * closed by traceprof (issue 17 item 1). */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

static Suite *fd_suite(void)
{
	Suite *s = suite_create("fd");
	TCase *tc = tcase_create("fd");
	tcase_add_test(tc, test_adopt_moves_high);
	tcase_add_test(tc, test_low_limit_falls_back);
	tcase_add_test(tc, test_replaced_is_not_ours_and_not_closed);
	tcase_add_test(tc, test_read_small);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(fd_suite());
}
