/* Process life cycle under the library (test/integration/rel_life.sh and
 * rel_files.sh).  Every mode prints what it did on stdout, so that a run
 * with the library can be compared with one without.
 *   fork THREADS      workers record while the main thread forks; the child
 *                     records "child" x100 and exits; the parent waits
 *   exec              fork + exec of this program in mode exec-child
 *   exec-child        prints LD_PRELOAD and whether the library is loaded
 *   thread-exit CODE  a second thread calls exit(CODE) while main is blocked
 *   main-exit         main calls pthread_exit; the other thread finishes
 *   loop [handler]    records steps until a signal ends it (20 s at most);
 *                     "handler": installs its own SIGINT/SIGTERM handlers
 *                     first, which end the loop and exit normally with 0
 *   big N             records N events in step 0, then loops like "loop"
 *                     (a long write for SIGKILL tests) */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

static _Atomic int stop;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !atomic_load(&stop))
		;
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		traceprof_marker_instant("w");
		sleep_ms(1);
	}
	return NULL;
}

static int do_fork(int nthreads)
{
	pthread_t th[16];
	if (nthreads > 16)
		nthreads = 16;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	traceprof_marker_instant("parent-before");
	sleep_ms(20);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 100; i++)
			traceprof_marker_instant("child");
		traceprof_marker_start("child-span");
		traceprof_marker_finish("child-span");
		printf("child pid %d\n", (int)getpid());
		exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	traceprof_marker_instant("parent-after");
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("parent pid %d child %d status %d\n", (int)getpid(), (int)pid, st);
	return 0;
}

static int do_exec(const char *self)
{
	traceprof_marker_instant("exec-parent");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execl(self, self, "exec-child", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("parent %d child %d status %d\n", (int)getpid(), (int)pid, st);
	return 0;
}

static int do_exec_child(void)
{
	const char *pre = getenv("LD_PRELOAD");
	printf("child %d LD_PRELOAD=%s\n", (int)getpid(), pre ? pre : "(unset)");
	printf("library loaded: %s\n", dlsym(RTLD_DEFAULT, "traceprof_step") ? "yes" : "no");
	for (int i = 0; i < 10; i++)
		traceprof_marker_instant("exec-child");
	return 0;
}

static int exit_code;

static void *exiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		traceprof_marker_instant("exiter");
	traceprof_step();
	printf("exiting from a thread with %d\n", exit_code);
	fflush(stdout);
	exit(exit_code);
}

static int do_thread_exit(int code)
{
	exit_code = code;
	pthread_t th;
	traceprof_marker_instant("main");
	pthread_create(&th, NULL, exiter, NULL);
	pthread_join(th, NULL); /* never returns: the thread exits the process */
	return 99;
}

static void *last_one(void *arg)
{
	(void)arg;
	sleep_ms(50);
	for (int i = 0; i < 50; i++)
		traceprof_marker_instant("last");
	printf("last thread done\n");
	fflush(stdout);
	return NULL;
}

static int do_main_exit(void)
{
	pthread_t th;
	traceprof_marker_instant("main");
	pthread_create(&th, NULL, last_one, NULL);
	pthread_exit(NULL);
}

static void on_signal(int sig)
{
	char msg[] = "handled signal NN\n";
	msg[15] = (char)('0' + sig / 10);
	msg[16] = (char)('0' + sig % 10);
	ssize_t n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	atomic_store(&stop, 1);
}

static int do_loop(int own_handlers, long big)
{
	if (own_handlers) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (long i = 0; i < big; i++) {
		traceprof_marker_start("big");
		traceprof_marker_finish("big");
	}
	int ready = 0;
	for (int s = 0; s < 20000 && !atomic_load(&stop); s++) {
		traceprof_marker_start("loop");
		traceprof_marker_instant("tick");
		traceprof_marker_finish("loop");
		traceprof_step();
		if (s == 5 && !ready) {
			printf("ready\n");
			fflush(stdout);
			ready = 1;
		}
		sleep_ms(1);
	}
	printf("clean exit\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "fork"))
		return do_fork(argc > 2 ? atoi(argv[2]) : 4);
	if (!strcmp(mode, "exec"))
		return do_exec(argv[0]);
	if (!strcmp(mode, "exec-child"))
		return do_exec_child();
	if (!strcmp(mode, "thread-exit"))
		return do_thread_exit(argc > 2 ? atoi(argv[2]) : 5);
	if (!strcmp(mode, "main-exit"))
		return do_main_exit();
	if (!strcmp(mode, "loop"))
		return do_loop(argc > 2 && !strcmp(argv[2], "handler"), 0);
	if (!strcmp(mode, "big"))
		return do_loop(0, argc > 2 ? atol(argv[2]) : 1000000);
	fprintf(stderr, "usage: prog_rel_life fork|exec|exec-child|thread-exit|main-exit|loop|big\n");
	return 2;
}
