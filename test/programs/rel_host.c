/* The "host" program of the reliability matrix (test/integration/rel_matrix.sh):
 * a small training-like loop whose stdout, stderr and exit status must be the
 * same with and without the library, under every configuration.
 *   prog_rel_host [STEPS] [THREADS] [EVENTS_PER_STEP] [EXIT_CODE]
 * It checks on its own that the calls keep errno, and says so on stdout. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "preload/traceprof.h"

static int events = 20;

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[32];
	snprintf(name, sizeof(name), "worker%ld", id);
	for (int i = 0; i < events; i++) {
		traceprof_marker_start(name);
		traceprof_marker_instant("tick");
		traceprof_marker_finish(name);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 6;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	if (argc > 3)
		events = atoi(argv[3]);
	int code = argc > 4 ? atoi(argv[4]) : 3;
	if (threads > 16)
		threads = 16;
	printf("start steps=%d threads=%d\n", steps, threads);
	fflush(stdout);
	fprintf(stderr, "host: a line of the program's own stderr\n");
	int errno_changed = 0;
	for (int s = 0; s < steps; s++) {
		errno = 4242;
		traceprof_marker_start("forward");
		for (int i = 0; i < events; i++)
			traceprof_marker_instant("op");
		traceprof_marker_counter("loss", "value", 1.0 / (s + 1));
		traceprof_marker_finish("forward");
		errno_changed |= errno != 4242;
		pthread_t th[16];
		for (long t = 0; t < threads; t++)
			pthread_create(&th[t], NULL, worker, (void *)t);
		for (long t = 0; t < threads; t++)
			pthread_join(th[t], NULL);
		errno = 77;
		traceprof_step();
		errno_changed |= errno != 77;
		printf("step %d\n", s);
	}
	printf("errno %s\n", errno_changed ? "CHANGED" : "kept");
	printf("done\n");
	fprintf(stderr, "host: bye\n");
	return code;
}
