/* Lossless accounting (test/integration/rel_account.sh).
 *
 *   prog_rel_account burst THREADS EVENTS
 *	THREADS threads record EVENTS instants each, at once.  Prints one line
 *	"tid TID produced EVENTS" per thread.
 *   prog_rel_account churn ROUNDS THREADS EVENTS
 *	ROUNDS rounds: each starts THREADS short-lived threads that record
 *	EVENTS instants each and exit, while a long-lived thread keeps
 *	starting and ending threads of its own that record too (counted
 *	separately, step unknown: printed as "churn TID produced N").  The
 *	main thread calls traceprof_step() after each round, so windows of
 *	TRACEPROF_SCHEDULE open and close while threads come and go.  Prints
 *	"tid TID step S produced EVENTS" for the round threads.
 * The main thread itself records nothing but ProfilerStep records. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/traceprof.h"

static long events;
static _Atomic int stop_churn;

struct slot {
	pid_t tid;
	long produced;
};

static void *recorder(void *arg)
{
	struct slot *s = arg;
	s->tid = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < events; i++)
		traceprof_marker_instant("e");
	s->produced = events;
	return NULL;
}

/* Starts and ends threads until told to stop; each records a few events.
 * Prints nothing per thread (their steps are unknown): the test only
 * checks that the process neither crashes nor deadlocks. */
static void *churner(void *arg)
{
	long *count = arg;
	while (!atomic_load(&stop_churn)) {
		pthread_t th[4];
		struct slot s[4];
		memset(s, 0, sizeof(s));
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, recorder, &s[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		*count += 4;
		/* Bounded churn: thread ids must not wrap around pid_max
		 * (32768 on many systems) within one run. */
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	if (!strcmp(argv[1], "burst")) {
		int n = atoi(argv[2]);
		events = atol(argv[3]);
		struct slot *s = calloc((size_t)n, sizeof(*s));
		pthread_t *th = calloc((size_t)n, sizeof(*th));
		for (int i = 0; i < n; i++)
			pthread_create(&th[i], NULL, recorder, &s[i]);
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		for (int i = 0; i < n; i++)
			printf("tid %d produced %ld\n", (int)s[i].tid, s[i].produced);
		return 0;
	}
	if (!strcmp(argv[1], "churn") && argc >= 5) {
		int rounds = atoi(argv[2]), n = atoi(argv[3]);
		events = atol(argv[4]);
		long churned = 0;
		pthread_t bg;
		pthread_create(&bg, NULL, churner, &churned);
		struct slot *s = calloc((size_t)n, sizeof(*s));
		pthread_t *th = calloc((size_t)n, sizeof(*th));
		for (int r = 0; r < rounds; r++) {
			memset(s, 0, (size_t)n * sizeof(*s));
			for (int i = 0; i < n; i++)
				pthread_create(&th[i], NULL, recorder, &s[i]);
			for (int i = 0; i < n; i++)
				pthread_join(th[i], NULL);
			for (int i = 0; i < n; i++)
				printf("tid %d step %d produced %ld\n", (int)s[i].tid, r, s[i].produced);
			traceprof_step();
		}
		atomic_store(&stop_churn, 1);
		pthread_join(bg, NULL);
		printf("churned %ld threads\n", churned);
		return 0;
	}
	return 2;
}
