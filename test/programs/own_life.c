/* A program's process life stays its own under traceprof (issue 30 items 3,
 * 4, 11, 12 and the RLIMIT_NOFILE minor; test/integration/rel_own_life.sh).
 * Each mode prints "ok" (or what went wrong) and exits 0 when the program
 * saw nothing of traceprof.
 *   threads           prints how many threads the process has (/proc)
 *   unshare           unshare(CLONE_NEWUSER) in a forked child, then in the
 *                     process itself; both must succeed
 *   clone glibc|raw   records, starts a child with glibc clone() (no
 *                     CLONE_VM) or syscall(SYS_clone, SIGCHLD): the child
 *                     records and returns, running exit(); prints the
 *                     child's life in ms and its status
 *   rlimit MB N       sets RLIMIT_AS to the current size + MB MiB, then
 *                     starts N threads, alive together, each recording
 *                     and making a 1 MiB malloc; all must succeed
 *   chroot DIR STEPS  records STEPS steps, chroot(DIR) before the last one,
 *                     returns from main
 *   nofile LIMIT      records, sets RLIMIT_NOFILE to LIMIT, records again,
 *                     prints how many more files it can open, and on
 *                     stderr every other descriptor it holds then */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

static void record(int n)
{
	for (int i = 0; i < n; i++) {
		traceprof_marker_start("work");
		traceprof_marker_finish("work");
	}
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int mode_unshare(void)
{
	pid_t pid = fork();
	if (pid < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0) {
			printf("child: unshare(CLONE_NEWUSER): %s\n", strerror(errno));
			fflush(stdout);
			_exit(1);
		}
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	if (unshare(CLONE_NEWUSER) < 0) {
		printf("unshare(CLONE_NEWUSER): %s (%d threads)\n", strerror(errno),
		       count_threads());
		return 1;
	}
	printf("ok\n");
	return 0;
}

static int child_main(void *arg)
{
	(void)arg;
	record(100);
	/* exit(), not _exit(): the destructors run, as a real child's would. */
	exit(0);
}

static int mode_clone(const char *how)
{
	record(100);
	traceprof_step();
	long t0 = now_ms();
	pid_t pid;
	if (!strcmp(how, "raw")) {
		pid = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		if (pid == 0)
			child_main(NULL);
	} else {
		size_t size = 256 * 1024;
		char *stack = malloc(size);
		if (!stack)
			return 1;
		pid = clone(child_main, stack + size, SIGCHLD, NULL);
	}
	if (pid < 0) {
		printf("clone: %s\n", strerror(errno));
		return 1;
	}
	int st;
	if (waitpid(pid, &st, 0) < 0) {
		printf("waitpid: %s\n", strerror(errno));
		return 1;
	}
	long ms = now_ms() - t0;
	record(100);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("child status %d\n", st);
		return 1;
	}
	printf("ok %ld\n", ms);
	return 0;
}

static long vm_size_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long kb = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static pthread_barrier_t rl_barrier;

static void *rl_thread(void *arg)
{
	(void)arg;
	record(1000);
	char *p = malloc(1 << 20);
	if (p)
		memset(p, 1, 1 << 20);
	/* All alive at once, each with its memory. */
	pthread_barrier_wait(&rl_barrier);
	return p;
}

static int mode_rlimit(long mb, int n)
{
	/* The main thread records first: its ring exists before the limit. */
	record(10);
	long kb = vm_size_kb();
	if (kb < 0)
		return 1;
	struct rlimit rl;
	rl.rlim_cur = rl.rlim_max = (rlim_t)(kb + mb * 1024) * 1024;
	if (setrlimit(RLIMIT_AS, &rl) < 0) {
		printf("setrlimit: %s\n", strerror(errno));
		return 1;
	}
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return 1;
	pthread_barrier_init(&rl_barrier, NULL, (unsigned)n);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int i = 0; i < n; i++) {
		int rc = pthread_create(&t[i], &attr, rl_thread, NULL);
		if (rc) {
			printf("pthread_create %d: %s\n", i, strerror(rc));
			return 1;
		}
	}
	int failed = 0;
	for (int i = 0; i < n; i++) {
		void *p;
		pthread_join(t[i], &p);
		failed += !p;
		free(p);
	}
	if (failed) {
		printf("malloc failed in %d threads\n", failed);
		return 1;
	}
	record(10);
	printf("ok\n");
	return 0;
}

static int mode_chroot(const char *dir, int steps)
{
	for (int s = 0; s < steps; s++) {
		if (s == steps - 1 && chroot(dir) < 0) {
			printf("chroot: %s\n", strerror(errno));
			return 1;
		}
		record(100);
		traceprof_step();
	}
	record(100);
	printf("ok\n");
	return 0;
}

static int mode_nofile(long limit)
{
	record(100);
	traceprof_step();
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = (rlim_t)limit;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		printf("setrlimit: %s\n", strerror(errno));
		return 1;
	}
	record(100);
	traceprof_step();
	record(100);
	/* The flush thread's passes open what they hold open. */
	struct timespec ts = { 0, 300 * 1000000L };
	nanosleep(&ts, NULL);
	/* The most of three rounds: a descriptor the flush thread opens for
	 * an instant (a /proc read) is not one it holds. */
	static int fds[4096];
	int n = 0, k = 0, fd;
	for (int round = 0; round < 3; round++) {
		while (k > 0)
			close(fds[--k]);
		while (k < 4096 && (fd = open("/dev/null", O_RDONLY)) >= 0)
			fds[k++] = fd;
		n = k > n ? k : n;
	}
	printf("%d\n", n);
	/* On stderr, for the test's message: every descriptor that is not one
	 * of the /dev/null ones or stdio, with what it names (one freed for the
	 * listing). */
	if (k > 0)
		close(fds[--k]);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], target[256];
		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d) || atoi(e->d_name) < 3)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		if (strcmp(target, "/dev/null"))
			fprintf(stderr, "fd %s: %s\n", e->d_name, target);
	}
	if (d)
		closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "threads")) {
		printf("%d\n", count_threads());
		return 0;
	}
	if (!strcmp(mode, "unshare"))
		return mode_unshare();
	if (!strcmp(mode, "clone") && argc > 2)
		return mode_clone(argv[2]);
	if (!strcmp(mode, "rlimit") && argc > 3)
		return mode_rlimit(atol(argv[2]), atoi(argv[3]));
	if (!strcmp(mode, "chroot") && argc > 3)
		return mode_chroot(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "nofile") && argc > 2)
		return mode_nofile(atol(argv[2]));
	fprintf(stderr, "usage: own_life threads|unshare|clone glibc|raw|rlimit MB N|"
			"chroot DIR STEPS|nofile LIMIT\n");
	return 2;
}
