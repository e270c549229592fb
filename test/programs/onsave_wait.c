/* A program that reaps its own child with wait() while traceprof's
 * TRACEPROF_ON_SAVE commands run (test/integration/cli_onsave_wait.sh).
 *   onsave_wait STEPS   records STEPS steps of 30 ms (the schedule in the
 *                       environment saves windows, whose uploads start),
 *                       forks a child that exits with status 7 after
 *                       300 ms, and calls wait(); then sleeps 1.5 s while
 *                       the uploads end and calls wait() again.  Prints
 *                       "wait1 PID STATUS" (PID "child" when it is the
 *                       child's), "wait2 ERRNO-NAME" and "sigchld N", the
 *                       SIGCHLDs its handler counted. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

static volatile sig_atomic_t sigchld;

static void on_chld(int sig)
{
	(void)sig;
	sigchld++;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 8;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	for (long i = 0; i < steps; i++) {
		traceprof_marker_instant("work");
		sleep_ms(30);
		traceprof_step();
	}
	pid_t kid = fork();
	if (kid < 0) {
		perror("fork");
		return 1;
	}
	if (kid == 0) {
		sleep_ms(300);
		_exit(7);
	}
	int st = 0;
	pid_t r;
	while ((r = wait(&st)) < 0 && errno == EINTR)
		;
	if (r == kid)
		printf("wait1 child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	else
		printf("wait1 %d %d\n", (int)r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	sleep_ms(1500);
	while ((r = wait(&st)) < 0 && errno == EINTR)
		;
	printf("wait2 %s\n", r < 0 && errno == ECHILD ? "ECHILD" : "a-process");
	printf("sigchld %d\n", (int)sigchld);
	return 0;
}
