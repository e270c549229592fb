/* NVTX at its edges (test/integration/nvtx_signal.sh, nvtx_edge.sh):
 *   prog_nvtx_edge timer HZ [real]
 *                               a SIGPROF timer at HZ (setitimer
 *                               ITIMER_PROF; with "real", SIGALRM from
 *                               ITIMER_REAL, whose high-resolution timer
 *                               keeps the rate, where the CPU-time timer
 *                               fires at most once a scheduler tick) whose
 *                               handler pushes and pops
 *                               an NVTX range once the main thread has
 *                               begun its first NVTX call; prints "ok N"
 *                               (N handler calls) after 200 of them;
 *   prog_nvtx_edge domains N    creates N domains "dom0".. and pushes and
 *                               pops a range "in_domN" in each; "ok";
 *   prog_nvtx_edge names N      names N thread ids 1000000.. with
 *                               nvtxNameOsThreadA ("t0".., the first one
 *                               twice with the same name), then pushes and
 *                               pops a range "named"; "ok";
 *   prog_nvtx_edge first        prints "first_ns N": how long the process's
 *                               first NVTX call (nvtxRangePushA, which runs
 *                               NVTX's start-up, and makes the thread's
 *                               first record) took, then "ok";
 *   prog_nvtx_edge init         the same with nvtxInitialize() as the
 *                               first call: NVTX's start-up alone.
 * Also prints what push and pop returned: "push R pop R pop R" (a second,
 * unmatched pop). */
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t begun, calls;

static void on_prof(int sig)
{
	(void)sig;
	if (!begun)
		return;
	nvtxRangePushA("in_handler");
	nvtxRangePop();
	calls++;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static volatile unsigned long sink;

static void burn(long iters)
{
	for (long i = 0; i < iters; i++)
		sink += (unsigned long)i * 2654435761u;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "first";
	if (!strcmp(mode, "timer")) {
		long hz = argc > 2 ? atol(argv[2]) : 10000;
		int real = argc > 3 && !strcmp(argv[3], "real");
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigaction(real ? SIGALRM : SIGPROF, &sa, NULL);
		struct itimerval it;
		it.it_interval.tv_sec = 0;
		it.it_interval.tv_usec = hz > 0 ? 1000000 / hz : 100;
		it.it_value = it.it_interval;
		setitimer(real ? ITIMER_REAL : ITIMER_PROF, &it, NULL);
		/* Let the timer run on CPU time before the first call, so that
		 * ticks fall anywhere in it. */
		burn(2000000);
		begun = 1;
		int p = nvtxRangePushA("main");
		int q = nvtxRangePop();
		int r = nvtxRangePop();
		while (calls < 200)
			burn(10000);
		struct itimerval off;
		memset(&off, 0, sizeof(off));
		setitimer(real ? ITIMER_REAL : ITIMER_PROF, &off, NULL);
		printf("push %d pop %d pop %d\nok %d\n", p, q, r, (int)calls);
		return 0;
	}
	if (!strcmp(mode, "domains")) {
		int n = argc > 2 ? atoi(argv[2]) : 300;
		for (int i = 0; i < n; i++) {
			char name[32], msg[32];
			snprintf(name, sizeof(name), "dom%d", i);
			snprintf(msg, sizeof(msg), "in_dom%d", i);
			nvtxDomainHandle_t d = nvtxDomainCreateA(name);
			nvtxEventAttributes_t a;
			memset(&a, 0, sizeof(a));
			a.version = NVTX_VERSION;
			a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
			a.messageType = NVTX_MESSAGE_TYPE_ASCII;
			a.message.ascii = msg;
			nvtxDomainRangePushEx(d, &a);
			nvtxDomainRangePop(d);
		}
		printf("ok\n");
		return 0;
	}
	if (!strcmp(mode, "names")) {
		int n = argc > 2 ? atoi(argv[2]) : 1100;
		for (int i = 0; i < n; i++) {
			char name[32];
			snprintf(name, sizeof(name), "t%d", i);
			nvtxNameOsThreadA(1000000u + (uint32_t)i, name);
		}
		nvtxNameOsThreadA(1000000u, "t0");
		nvtxRangePushA("named");
		nvtxRangePop();
		printf("ok\n");
		return 0;
	}
	long long t0 = now_ns();
	int p = 0;
	if (!strcmp(mode, "init"))
		nvtxInitialize(NULL);
	else
		p = nvtxRangePushA("first");
	long long t1 = now_ns();
	if (!strcmp(mode, "init"))
		p = nvtxRangePushA("first");
	int q = nvtxRangePop();
	int r = nvtxRangePop();
	printf("%s_ns %lld\npush %d pop %d pop %d\nok\n", mode, t1 - t0, p, q, r);
	return 0;
}
