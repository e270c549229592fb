/* One rank of a made-up job on the stand-in runtime (test/standin), for the
 * live-file tests (test/integration/live_ranks.sh): STEPS steps of STEP_MS
 * ms (twice that where SLOW_RANK equals $RANK), each a sleep, one
 * cudaStreamSynchronize (through dlopen + dlsym of libcudart.so.13) and
 * traceprof_step().  The synchronization runs inside an NVTX start/end
 * range, "batch", and two NVTX push/pop ranges inside it, "train_step" and
 * "allreduce": the last one's name is a heap copy, overwritten and freed
 * while the range is open, as a program may.  The stand-in's STANDIN_SYNC_SLEEP_AT knob makes one
 * synchronization block.
 *
 *     prog_live_ranks STEPS STEP_MS [SLOW_RANK]
 *
 * Prints "rank=R steps=N failed=N" and exits 0. */
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload/traceprof.h"

typedef int (*sync_fn)(void *);

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 10;
	long ms = argc > 2 ? atol(argv[2]) : 100;
	int slow = argc > 3 ? atoi(argv[3]) : -1;
	const char *r = getenv("RANK");
	int rank = r ? atoi(r) : 0;
	void *h = dlopen("libcudart.so.13", RTLD_NOW);
	sync_fn sync = h ? (sync_fn)dlsym(h, "cudaStreamSynchronize") : NULL;
	if (!sync) {
		printf("no cudaStreamSynchronize\n");
		return 4;
	}
	int failed = 0;
	for (int i = 0; i < steps; i++) {
		sleep_ms(rank == slow ? 2 * ms : ms);
		nvtxRangeId_t batch = nvtxRangeStartA("batch");
		nvtxRangePushA("train_step");
		char *name = strdup("allreduce");
		nvtxRangePushA(name);
		memset(name, 'X', strlen(name));
		free(name);
		failed += sync(NULL) != 0;
		nvtxRangePop();
		nvtxRangePop();
		nvtxRangeEnd(batch);
		traceprof_step();
	}
	printf("rank=%d steps=%d failed=%d\n", rank, steps, failed);
	return 0;
}
