/* Unit tests for common/procfs.c: real /proc files of this process, and the
 * field lookups on lines shaped as the kernel writes them (a command name
 * with spaces and parentheses included). */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/procfs.h"

#include "test/unit/check_main.h"

/* The threads of this process, counted from /proc/self/task. */
static uint64_t count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	uint64_t n = 0;
	struct dirent *e;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

START_TEST(test_read_real_files)
{
	char buf[4096];
	ck_assert_int_gt(tp_procfs_read("/proc/self/status", buf, sizeof(buf)), 0);
	uint64_t pid = 0, rss = 0;
	ck_assert_int_eq(tp_procfs_field_u64(buf, "Pid:", &pid), 0);
	ck_assert_uint_eq(pid, (uint64_t)getpid());
	ck_assert_int_eq(tp_procfs_field_u64(buf, "VmRSS:", &rss), 0);
	ck_assert_uint_gt(rss, 0);
	ck_assert_int_eq(tp_procfs_field_u64(buf, "NoSuchField:", &rss), -1);
	ck_assert_str_eq(tp_procfs_field(buf, "State:") ? "found" : "absent", "found");

	ck_assert_int_gt(tp_procfs_read("/proc/self/stat", buf, sizeof(buf)), 0);
	uint64_t threads = 0, ppid = 0;
	ck_assert_int_eq(tp_procfs_stat_u64(buf, 20, &threads), 0);
	/* Field 20 is the thread count: the number of /proc/self/task
	 * entries (not always 1: TSan runs a thread of its own). */
	ck_assert_uint_eq(threads, count_tasks());
	ck_assert_int_eq(tp_procfs_stat_u64(buf, 4, &ppid), 0);
	ck_assert_uint_eq(ppid, (uint64_t)getppid());
	ck_assert_int_eq(tp_procfs_stat_state(buf), 'R');

	ck_assert_int_gt(tp_procfs_read("/proc/self/statm", buf, sizeof(buf)), 0);
	uint64_t pages = 0;
	ck_assert_int_eq(tp_procfs_word_u64(buf, 2, &pages), 0);
	ck_assert_uint_gt(pages, 0);
	ck_assert_int_eq(tp_procfs_word_u64(buf, 99, &pages), -1);

	ck_assert_int_eq(tp_procfs_read("/proc/self/no-such-file", buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_read_text_and_small_buffer)
{
	char buf[4096];
	/* cmdline: arguments NUL-separated, joined with spaces. */
	ssize_t n = tp_procfs_read_text("/proc/self/cmdline", buf, sizeof(buf), 1);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(strlen(buf), (size_t)n);
	ck_assert_ptr_nonnull(strstr(buf, "test_procfs"));
	/* comm: the trailing newline goes. */
	n = tp_procfs_read_text("/proc/self/comm", buf, sizeof(buf), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_ne(buf[n - 1], '\n');
	/* A buffer smaller than the file: cut, NUL-terminated. */
	char small[8];
	ck_assert_int_eq(tp_procfs_read("/proc/self/status", small, sizeof(small)), 7);
	ck_assert_uint_eq(strlen(small), 7);
	ck_assert_int_eq(tp_procfs_read("/proc/self/status", small, 0), -1);
}
END_TEST

START_TEST(test_stat_odd_comm)
{
	/* A command name with spaces and ") (": fields count from the last
	 * ')'. */
	const char *stat = "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
			   "7 3 0 0 20 0 5 0 123 456 78\n";
	uint64_t v = 0;
	ck_assert_int_eq(tp_procfs_stat_state(stat), 'S');
	ck_assert_int_eq(tp_procfs_stat_u64(stat, 4, &v), 0);
	ck_assert_uint_eq(v, 1);
	ck_assert_int_eq(tp_procfs_stat_u64(stat, 14, &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(tp_procfs_stat_u64(stat, 15, &v), 0);
	ck_assert_uint_eq(v, 3);
	ck_assert_int_eq(tp_procfs_stat_u64(stat, 20, &v), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert_int_eq(tp_procfs_stat_u64(stat, 3, &v), -1); /* a letter */
	ck_assert_int_eq(tp_procfs_stat_u64(stat, 40, &v), -1);
	ck_assert_int_eq(tp_procfs_stat_u64("no parenthesis", 4, &v), -1);
	ck_assert_int_eq(tp_procfs_stat_state("1 (x)"), 0);
	/* Fields match at a line's start only. */
	const char *status = "Name:\tVmRSS:\nVmRSS:\t  1234 kB\nThreads:\t3\n";
	ck_assert_int_eq(tp_procfs_field_u64(status, "VmRSS:", &v), 0);
	ck_assert_uint_eq(v, 1234);
	ck_assert_int_eq(tp_procfs_field_u64(status, "Threads:", &v), 0);
	ck_assert_uint_eq(v, 3);
	ck_assert_int_eq(tp_procfs_field_u64(status, "Name:", &v), -1);
}
END_TEST

/* The lowest free descriptor number: what the next open() gets. */
static int lowest_free(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(fd);
	return fd;
}

static void *park(void *arg)
{
	pthread_mutex_t *m = arg;
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	return NULL;
}

/* A kept file: one descriptor, high, for every read; each read is fresh (a
 * new thread shows in the count); no low number is taken, not even for a
 * moment that the next open() could see. */
START_TEST(test_pread_kept_and_fresh)
{
	struct tp_procfs_file f = TP_PROCFS_FILE_INIT;
	char buf[1024];
	uint64_t before, after;
	int low = lowest_free();
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/stat", buf, sizeof(buf)), 0);
	ck_assert_int_eq(tp_procfs_stat_u64(buf, 20, &before), 0);
	int kept = f.fd.fd;
	ck_assert_int_ge(kept, TP_FD_FLOOR);
	ck_assert_int_eq(lowest_free(), low);

	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_t th;
	pthread_mutex_lock(&m);
	ck_assert_int_eq(pthread_create(&th, NULL, park, &m), 0);
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/stat", buf, sizeof(buf)), 0);
	ck_assert_int_eq(tp_procfs_stat_u64(buf, 20, &after), 0);
	/* Fresh: the count now, with the new thread (and under TSan perhaps
	 * its own background thread, started at the first pthread_create). */
	uint64_t now = count_tasks();
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
	ck_assert_uint_gt(after, before);
	ck_assert_uint_eq(after, now);
	ck_assert_int_eq(f.fd.fd, kept);
	ck_assert_int_eq(lowest_free(), low);

	/* Another path through the same struct: that file, not the old one. */
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/statm", buf, sizeof(buf)), 0);
	ck_assert_int_eq(tp_procfs_word_u64(buf, 7, &after), 0);
	ck_assert_int_eq(tp_procfs_word_u64(buf, 8, &after), -1);
	ck_assert_int_eq(tp_procfs_pread(&f, "/proc/self/no-such-file", buf, sizeof(buf)), -1);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(f.fd.fd, -1);
	tp_procfs_file_close(&f);
}
END_TEST

/* The program closes our number and opens a file of its own on it: the next
 * read neither reads nor closes the program's file, and reopens ours. */
START_TEST(test_pread_number_taken)
{
	struct tp_procfs_file f = TP_PROCFS_FILE_INIT;
	char buf[1024];
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/statm", buf, sizeof(buf)), 0);
	int kept = f.fd.fd;
	char path[] = "/tmp/tp-test-procfs.XXXXXX";
	int mine = mkstemp(path);
	ck_assert_int_ge(mine, 0);
	unlink(path);
	ck_assert_int_eq(write(mine, "program data\n", 13), 13);
	ck_assert_int_eq(dup2(mine, kept), kept); /* closes ours, reuses its number */
	close(mine);
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/statm", buf, sizeof(buf)), 0);
	ck_assert_ptr_null(strstr(buf, "program"));
	uint64_t pages;
	ck_assert_int_eq(tp_procfs_word_u64(buf, 2, &pages), 0);
	ck_assert_int_ne(f.fd.fd, kept);
	tp_procfs_file_close(&f);
	/* Still the program's after our close, its offset where it left it. */
	ck_assert_int_eq(lseek(kept, 0, SEEK_CUR), 13);
	ck_assert_int_eq(pread(kept, buf, sizeof(buf), 0), 13);
	close(kept);
}
END_TEST

/* A forked child reads its own /proc/self, not the parent's through the
 * inherited descriptor (field 1 of stat is the pid). */
START_TEST(test_pread_after_fork)
{
	struct tp_procfs_file f = TP_PROCFS_FILE_INIT;
	char buf[1024];
	uint64_t pid;
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/stat", buf, sizeof(buf)), 0);
	ck_assert_int_eq(tp_procfs_word_u64(buf, 1, &pid), 0);
	ck_assert_uint_eq(pid, (uint64_t)getpid());
	int parents = f.fd.fd;
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int bad = tp_procfs_pread(&f, "/proc/self/stat", buf, sizeof(buf)) <= 0 ||
			  tp_procfs_word_u64(buf, 1, &pid) || pid != (uint64_t)getpid();
		/* The parent's copy was closed, not left behind. */
		bad |= (fcntl(parents, F_GETFD) >= 0 && parents != f.fd.fd) << 1;
		_exit(bad);
	}
	int st;
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	/* The parent's file is untouched by the child. */
	ck_assert_int_gt(tp_procfs_pread(&f, "/proc/self/stat", buf, sizeof(buf)), 0);
	ck_assert_int_eq(f.fd.fd, parents);
	tp_procfs_file_close(&f);
}
END_TEST

static Suite *procfs_suite(void)
{
	Suite *s = suite_create("procfs");
	TCase *tc = tcase_create("procfs");
	tcase_add_test(tc, test_read_real_files);
	tcase_add_test(tc, test_read_text_and_small_buffer);
	tcase_add_test(tc, test_stat_odd_comm);
	tcase_add_test(tc, test_pread_kept_and_fresh);
	tcase_add_test(tc, test_pread_number_taken);
	tcase_add_test(tc, test_pread_after_fork);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(procfs_suite());
}
