/* Counts the SIGTERM, SIGINT and SIGHUP deliveries it gets
 * (test/integration/cli_run_signals.sh: a signal sent to a process group
 * must reach the program once, under `traceprof run` as without it).
 *   sig_count SECONDS   prints "ready", runs SECONDS seconds, then prints
 *                       "TERM n INT n HUP n" and exits 0 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t n_term, n_int, n_hup;

static void on_signal(int sig)
{
	if (sig == SIGTERM)
		n_term++;
	else if (sig == SIGINT)
		n_int++;
	else
		n_hup++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
		struct timespec nap = { 0, 10 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	printf("TERM %d INT %d HUP %d\n", (int)n_term, (int)n_int, (int)n_hup);
	return 0;
}
