/* A library that reaches the CUDA runtime or driver it was linked with, as an
 * extension module does: test/scope/scope_app.c (or Python's ctypes) loads it
 * with dlopen(RTLD_NOW | RTLD_LOCAL), so its runtime lives in its local scope
 * only.  Built several times by the Makefile: against the toolkit's real
 * libcudart.so.13, against the test stand-in runtimes of two majors (12 and
 * 13), and (PROBE_DRIVER) against the stand-in libcuda.so.1.
 *
 * tp_probe(value) makes two calls and returns the second one's result code;
 * *value is what the runtime reported (its version, so that the caller can
 * tell which runtime answered). */
#ifdef PROBE_DRIVER
int cuInit(unsigned flags);
int cuDriverGetVersion(int *v);

__attribute__((visibility("default"))) int tp_probe(int *value);
int tp_probe(int *value)
{
	*value = -1;
	(void)cuInit(0);
	return cuDriverGetVersion(value);
}
#else
int cudaGetDeviceCount(int *n);
int cudaRuntimeGetVersion(int *v);

__attribute__((visibility("default"))) int tp_probe(int *value);
int tp_probe(int *value)
{
	int n = -1;
	*value = -1;
	int r = cudaGetDeviceCount(&n);
	int v = cudaRuntimeGetVersion(value);
	return r ? r : v;
}
#endif
