/* A training-like loop that dies mid-window, for the cut-window tests
 * (rel_cut*.sh, issue 44):
 *   prog_die MODE STEPS [EVENTS]
 * Each step's work: EVENTS (100) "launch" instants.  MODE, the steps and
 * the lines it prints: die.h. */
#include "test/programs/die.h"

static int die_events(void *arg)
{
	int events = *(int *)arg;
	for (int i = 0; i < events; i++)
		traceprof_marker_instant("launch");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "loop";
	int steps = argc > 2 ? atoi(argv[2]) : 100;
	int events = argc > 3 ? atoi(argv[3]) : 100;
	return die_loop(mode, steps, die_events, &events);
}
