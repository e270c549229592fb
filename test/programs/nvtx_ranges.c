/* NVTX v3 through the toolkit's headers, as a library annotates its work:
 *   prog_nvtx_ranges STEPS
 * Each iteration: a "train_step" push/pop range around a mark, nested push
 * ranges (ASCII, unicode, Ex), a domain range with a registered string, a
 * domain mark, and a start/end range ended by another thread, which names
 * itself.  The main thread names itself too.  Prints "done", exits 0. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static nvtxRangeId_t pending;

static void *worker(void *arg)
{
	(void)arg;
	nvtxNameOsThreadA((uint32_t)gettid(), "nvtx-worker");
	nvtxRangePushA("worker_range");
	usleep(1000);
	nvtxRangePop();
	nvtxRangeEnd(pending);
	return NULL;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 3;
	nvtxNameOsThreadA((uint32_t)gettid(), "main-nvtx");
	nvtxDomainHandle_t dom = nvtxDomainCreateA("mydomain");
	nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "dom_range");
	for (int s = 0; s < steps; s++) {
		char iter[32];
		snprintf(iter, sizeof(iter), "iter_%d", s);
		/* The levels NVTX returns come from the tool: negative without one. */
		int level = nvtxRangePushA("train_step");
		if (level > 0)
			return 2;
		nvtxMarkA("tick");
		nvtxRangePushA(iter);
		nvtxRangePushA("forward");
		usleep(500);
		int popped = nvtxRangePop();
		if (popped >= 0 && popped != 2)
			return 3;
		nvtxRangePop();
		nvtxEventAttributes_t a;
		memset(&a, 0, sizeof(a));
		a.version = NVTX_VERSION;
		a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
		a.message.unicode = L"backward_\u00fc";
		a.category = 7;
		nvtxRangePushEx(&a);
		nvtxRangePop();
		nvtxEventAttributes_t d;
		memset(&d, 0, sizeof(d));
		d.version = NVTX_VERSION;
		d.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
		d.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
		d.message.registered = reg;
		nvtxDomainRangePushEx(dom, &d);
		nvtxDomainRangePop(dom);
		d.messageType = NVTX_MESSAGE_TYPE_ASCII;
		d.message.ascii = "dom_mark";
		nvtxDomainMarkEx(dom, &d);
		pending = nvtxRangeStartA("async_op");
		pthread_t th;
		pthread_create(&th, NULL, worker, NULL);
		pthread_join(th, NULL);
		nvtxRangePop();
	}
	printf("done\n");
	return 0;
}
