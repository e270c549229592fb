/* Stream capture over the driver (test/integration/cuda_graph.sh): capture
 * ten launches in global mode, with pauses so that traceprof's flush thread
 * runs meanwhile, then instantiate and launch the graph.  Prints every return
 * code and, over the test stand-in driver, how many calls that the capture
 * forbids reached it while the capture was open (none may come from
 * traceprof).  Run with the stand-in and with the toolkit's stub driver. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int cuInit(unsigned flags);
int cuModuleGetFunction(void **f, void *mod, const char *name);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		   unsigned bz, unsigned shm, void *st, void **p, void **e);
int cuStreamBeginCapture_v2(void *st, int mode);
int cuStreamIsCapturing(void *st, int *status);
int cuStreamEndCapture(void *st, void **graph);
int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags);
int cuGraphLaunch(void *exec, void *st);

int main(void)
{
	void *stream = (void *)0x5000, *f = NULL, *graph = NULL, *exec = NULL;
	printf("cuInit=%d\n", cuInit(0));
	printf("cuModuleGetFunction=%d\n", cuModuleGetFunction(&f, NULL, "k"));
	/* A launch before the capture: traceprof will want the kernel's name. */
	printf("launch=%d\n", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
	printf("cuStreamBeginCapture=%d\n", cuStreamBeginCapture_v2(stream, 0 /* GLOBAL */));
	int rc = 0, st = -1;
	for (int i = 0; i < 10; i++) {
		rc |= cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, stream, NULL, NULL);
		usleep(30000);
	}
	printf("captured launches=%d\n", rc);
	rc = cuStreamIsCapturing(stream, &st);
	printf("cuStreamIsCapturing=%d status=%d\n", rc, st);
	printf("cuStreamEndCapture=%d\n", cuStreamEndCapture(stream, &graph));
	printf("cuGraphInstantiateWithFlags=%d\n", cuGraphInstantiateWithFlags(&exec, graph, 0));
	printf("cuGraphLaunch=%d\n", cuGraphLaunch(exec, stream));
	/* After the capture: named again. */
	printf("launch=%d\n", cuLaunchKernel(f, 3, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
	usleep(100000); /* named by the flush thread while the driver still answers */
	int (*foreign)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "fake_cuda_capture_foreign");
	const char *(*which)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "fake_cuda_capture_foreign_name");
	if (foreign && which)
		printf("calls that broke the capture=%d %s\n", foreign(), which());
	return 0;
}
