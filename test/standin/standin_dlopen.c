/* A test program that loads the CUDA runtime itself (as Python extension
 * loaders do) and looks functions up by name on its handle, against the test
 * stand-in runtime.  traceprof must still trace those calls. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);

int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	malloc_fn m = (malloc_fn)dlsym(h, "cudaMalloc");
	free_fn f = (free_fn)dlsym(h, "cudaFree");
	void *nothing = dlsym(h, "cudaNoSuchFunction");
	void *d = NULL;
	int r1 = m(&d, 4096);
	int r2 = f(d);
	printf("cudaMalloc=%d cudaFree=%d missing=%d\n", r1, r2, nothing == NULL);
	return 0;
}
