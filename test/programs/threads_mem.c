/* Many short-lived threads, one after another, each recording a few events
 * (test/integration/rel_threads_mem.sh, bench/run's memory row).
 *   threads_mem THREADS EVENTS   starts THREADS threads one at a time; each
 *                                records EVENTS instant markers "t" and
 *                                ends; then prints the process's peak
 *                                resident memory: "vmhwm_kb N". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/traceprof.h"

static long events;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < events; i++)
		traceprof_marker_instant("t");
	return NULL;
}

/* VmHWM from /proc/self/status, in KiB; -1 when unreadable. */
static long vmhwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	events = argc > 2 ? atol(argv[2]) : 4;
	for (long i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
		pthread_join(th, NULL);
	}
	printf("vmhwm_kb %ld\n", vmhwm_kb());
	return 0;
}
