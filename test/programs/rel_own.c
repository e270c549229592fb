/* The program's resources stay its own (issue 17; test/integration/
 * rel_own_*.sh).  Each mode prints "ok" (or what went wrong) and exits 0
 * when the program saw nothing of traceprof.
 *   fds STEPS DIR     closes every inherited descriptor at start (a daemon's
 *                     close_range(3, ~0U, 0)), records, closes all again
 *                     half-way and opens its own files DIR/data1..3 with
 *                     known bytes; records more (saves happen); checks its
 *                     descriptors are open and the files unchanged
 *   chdir DIR STEPS   records STEPS steps, chdir(DIR) after the first
 *   fork N            a second thread records steps while main forks N
 *                     children (each records a little and exits 0); prints
 *                     how many children did not exit 0
 *   seccomp           records, then forbids file calls (openat, renameat2,
 *                     unlinkat, mkdirat, ...) to the main thread only, with
 *                     the kill action, records more, returns from main
 *   big N             records N events, prints "ready", then records
 *                     steps until a signal ends it (for signal tests)
 *   spawn MS          a thread keeps starting short busy recording threads;
 *                     main calls exit(0) after MS ms */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

static _Atomic int stop;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void record(int n)
{
	for (int i = 0; i < n; i++) {
		traceprof_marker_start("work");
		traceprof_marker_instant("tick");
		traceprof_marker_finish("work");
	}
}

static void close_all(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	for (int fd = 3; fd < 65536; fd++)
		close(fd);
}

/* ---- fds ---------------------------------------------------------------- */

#define NDATA 3

static int mode_fds(int steps, const char *dir)
{
	close_all();
	for (int s = 0; s < steps / 2; s++) {
		record(2000);
		traceprof_step();
		sleep_ms(5);
	}
	close_all();
	int fd[NDATA];
	char want[NDATA][64];
	for (int i = 0; i < NDATA; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/data%d.txt", dir, i + 1);
		fd[i] = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd[i] < 0) {
			printf("open %s: %s\n", path, strerror(errno));
			return 1;
		}
		snprintf(want[i], sizeof(want[i]), "program data %d\n", i + 1);
		if (write(fd[i], want[i], strlen(want[i])) != (ssize_t)strlen(want[i])) {
			printf("write data%d: %s\n", i + 1, strerror(errno));
			return 1;
		}
	}
	for (int s = steps / 2; s < steps; s++) {
		record(2000);
		traceprof_step();
		sleep_ms(5);
	}
	sleep_ms(100); /* the flush thread saves what the schedule closed */
	int bad = 0;
	for (int i = 0; i < NDATA; i++) {
		char got[4096];
		if (fcntl(fd[i], F_GETFD) < 0) {
			printf("data%d: fd %d was closed under the program: %s\n", i + 1, fd[i],
			       strerror(errno));
			bad = 1;
			continue;
		}
		off_t pos = lseek(fd[i], 0, SEEK_CUR);
		ssize_t n = pread(fd[i], got, sizeof(got) - 1, 0);
		if (pos != (off_t)strlen(want[i]) || n != (ssize_t)strlen(want[i]) ||
		    memcmp(got, want[i], (size_t)n)) {
			printf("data%d: fd %d changed: offset %lld, %zd bytes\n", i + 1, fd[i],
			       (long long)pos, n);
			bad = 1;
		}
	}
	if (!bad)
		printf("ok\n");
	return 0;
}

/* ---- chdir -------------------------------------------------------------- */

static int mode_chdir(const char *dir, int steps)
{
	for (int s = 0; s < steps; s++) {
		record(100);
		traceprof_step();
		sleep_ms(s == 0 ? 200 : 20); /* each window is saved before the next step */
		if (s == 0 && chdir(dir) != 0) {
			printf("chdir %s: %s\n", dir, strerror(errno));
			return 1;
		}
	}
	printf("ok\n");
	return 0;
}

/* ---- fork --------------------------------------------------------------- */

static void *stepper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		record(200);
		traceprof_step();
		sleep_ms(1);
	}
	return NULL;
}

static int mode_fork(int n)
{
	pthread_t th;
	pthread_create(&th, NULL, stepper, NULL);
	int failed = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			record(10);
			exit(0);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			if (failed++ < 3 && pid > 0)
				fprintf(stderr, "child %d: %s %d\n", (int)pid,
					WIFSIGNALED(st) ? "signal" : "status",
					WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("children failed: %d\n", failed);
	return 0;
}

/* ---- seccomp ------------------------------------------------------------ */

#if defined(__x86_64__)
#define OWN_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define OWN_ARCH AUDIT_ARCH_AARCH64
#endif

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

static int mode_seccomp(void)
{
#ifndef OWN_ARCH
	printf("SKIP: no seccomp arch for this machine\n");
	return 0;
#else
	for (int s = 0; s < 3; s++) {
		record(1000);
		traceprof_step();
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, OWN_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(__NR_openat),
		DENY(__NR_renameat2),
		DENY(__NR_unlinkat),
		DENY(__NR_mkdirat),
		DENY(__NR_linkat),
#ifdef __NR_open
		DENY(__NR_open),
		DENY(__NR_rename),
		DENY(__NR_renameat),
		DENY(__NR_unlink),
		DENY(__NR_mkdir),
		DENY(__NR_link),
		DENY(__NR_creat),
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };
	/* No SECCOMP_FILTER_FLAG_TSYNC: the calling thread only. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		printf("SKIP: seccomp: %s\n", strerror(errno));
		return 0;
	}
	for (int s = 0; s < 3; s++) {
		record(1000);
		traceprof_step();
	}
	printf("ok\n");
	fflush(stdout);
	return 0;
#endif
}

/* ---- big ---------------------------------------------------------------- */

static int mode_big(int n)
{
	record(n / 3);
	printf("ready\n");
	fflush(stdout);
	for (int s = 0; s < 200000; s++) {
		record(10);
		traceprof_step();
		sleep_ms(1);
	}
	return 0;
}

/* ---- spawn -------------------------------------------------------------- */

static void *busy(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000 && !atomic_load(&stop); i++)
		record(50);
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	for (unsigned i = 0;; i++) {
		pthread_t th;
		/* About 8 busy threads at a time on an idle machine. */
		pthread_create(&th, &a, busy, NULL);
		if (i % 8 == 0)
			traceprof_step();
		sleep_ms(2);
	}
	return NULL;
}

static int mode_spawn(int ms)
{
	pthread_t th;
	pthread_create(&th, NULL, spawner, NULL);
	sleep_ms(ms);
	printf("ok\n");
	fflush(stdout);
	exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "fds") && argc > 3)
		return mode_fds(atoi(argv[2]), argv[3]);
	if (!strcmp(mode, "chdir") && argc > 3)
		return mode_chdir(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "fork") && argc > 2)
		return mode_fork(atoi(argv[2]));
	if (!strcmp(mode, "seccomp"))
		return mode_seccomp();
	if (!strcmp(mode, "big") && argc > 2)
		return mode_big(atoi(argv[2]));
	if (!strcmp(mode, "spawn") && argc > 2)
		return mode_spawn(atoi(argv[2]));
	fprintf(stderr, "usage: %s fds|chdir|fork|seccomp|big|spawn ...\n", argv[0]);
	return 2;
}
