/* Constructors in the middle of a dlopen (cuda_scope.sh): built three times.
 *   INIT_A  libinit_a.so: its constructor dlopens another library (as
 *           libGLdispatch's does under PyTorch), then marks itself done.
 *   INIT_B  libinit_b.so, which needs libinit_a.so: its constructor records
 *           whether libinit_a's constructor had finished (glibc runs a
 *           dependency's constructors first).
 *   INIT_TOP libinit_top.so, which needs both; the program dlopens it.
 * traceprof scans the objects a dlopen added while libinit_a's own dlopen
 * returns; if that scan ran a pending constructor (a dlopen(RTLD_NOLOAD) of
 * an object not yet initialized does), libinit_b's would run before
 * libinit_a's finished. */
#include <dlfcn.h>

#if defined(INIT_A)
__attribute__((visibility("default"))) int init_a_done;
__attribute__((constructor)) static void init_a(void)
{
	void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	if (h)
		dlclose(h);
	init_a_done = 1;
}
#elif defined(INIT_B)
extern int init_a_done;
__attribute__((visibility("default"))) int init_b_saw_a = -1;
__attribute__((constructor)) static void init_b(void)
{
	init_b_saw_a = init_a_done;
}
#else
__attribute__((visibility("default"))) int init_top(void);
int init_top(void)
{
	return 1;
}
#endif
