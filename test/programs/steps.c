/* A training-like loop for the core tests: N steps, each with markers, an
 * instant and a counter, optionally on several threads.
 *   prog_steps STEPS [THREADS] [EVENTS_PER_STEP]
 * Prints "done" and exits 0; its output must be the same with and without
 * the library. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "preload/traceprof.h"

static int events_per_step = 3;

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[32];
	snprintf(name, sizeof(name), "worker%ld", id);
	for (int i = 0; i < events_per_step; i++) {
		traceprof_marker_start(name);
		traceprof_marker_finish(name);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 5;
	int threads = argc > 2 ? atoi(argv[2]) : 0;
	if (argc > 3)
		events_per_step = atoi(argv[3]);
	for (int s = 0; s < steps; s++) {
		traceprof_marker_start("forward");
		for (int i = 0; i < events_per_step; i++)
			traceprof_marker_instant("tick");
		traceprof_marker_finish("forward");
		traceprof_marker_counter("loss", "value", 1.0 / (s + 1));
		pthread_t th[64];
		for (long t = 0; t < threads && t < 64; t++)
			pthread_create(&th[t], NULL, worker, (void *)t);
		for (long t = 0; t < threads && t < 64; t++)
			pthread_join(th[t], NULL);
		traceprof_step();
	}
	printf("done\n");
	return 0;
}
