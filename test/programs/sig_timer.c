/* A program whose 20 us interval timer's handler records markers
 * (test/integration/stack_signal.sh): with TRACEPROF_WITH_STACK=1 each
 * capture runs in signal context, interrupting the main thread, itself in
 * the middle of recording markers with stacks.
 *   sig_timer TICKS [real|posix]   waits for TICKS timer signals (SIGALRM
 *                                  from setitimer(ITIMER_REAL), or a
 *                                  timer_create timer), recording an
 *                                  instant marker on the main thread
 *                                  between them (not with "quiet");
 *                                  prints "ticks N".
 *   sig_timer TICKS real|posix quiet */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "preload/traceprof.h"

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
	(void)sig;
	traceprof_marker_instant("tick");
	ticks++;
}

int main(int argc, char **argv)
{
	long want = argc > 1 ? atol(argv[1]) : 2000;
	int posix = argc > 2 && !strcmp(argv[2], "posix");
	int quiet = argc > 3 && !strcmp(argv[3], "quiet");
	/* Resolve the hook once outside the handler (its first call looks the
	 * symbol up with dlsym). */
	traceprof_marker_instant("start");
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	timer_t timer;
	if (posix) {
		struct sigevent sev;
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGALRM;
		if (timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0) {
			perror("timer_create");
			return 1;
		}
		struct itimerspec its = { { 0, 20000 }, { 0, 20000 } };
		timer_settime(timer, 0, &its, NULL);
	} else {
		struct itimerval it = { { 0, 20 }, { 0, 20 } };
		setitimer(ITIMER_REAL, &it, NULL);
	}
	long marks = 0;
	while (ticks < want) {
		if (!quiet)
			traceprof_marker_instant("main");
		marks++;
	}
	if (posix) {
		timer_delete(timer);
	} else {
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
	}
	printf("ticks %ld\n", (long)ticks);
	return 0;
}
