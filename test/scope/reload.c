/* A plugin that is loaded, called, unloaded and loaded again (issue 30,
 * items 5 and 9), in two parts:
 *
 * RELOAD_PLUGIN: the plugin, linked with a CUDA runtime (two builds of the
 * test stand-in that report different device counts, or the toolkit's real
 * libcudart.so.13).  tp_plugin() calls cudaGetDeviceCount and
 * cudaRuntimeGetVersion through its own relocations.
 *
 * otherwise: the program.  For each plugin named on the command line, in
 * order: dlopen(RTLD_NOW | RTLD_LOCAL), call tp_plugin(), look up
 * cudaGetDeviceCount and cudaRuntimeGetVersion on the plugin's handle and
 * call them too (4 runtime calls per plugin), print what they answered and
 * where the runtime was mapped, then dlclose.  The runtime's base address is
 * printed relative to the first plugin's ("base=same" / "base=moved"), so
 * that runs with and without traceprof compare equal. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#ifdef RELOAD_PLUGIN
int cudaGetDeviceCount(int *n);
int cudaRuntimeGetVersion(int *v);

__attribute__((visibility("default"))) int tp_plugin(int *count, int *version);
int tp_plugin(int *count, int *version)
{
	*count = -1;
	*version = -1;
	int r = cudaGetDeviceCount(count);
	int v = cudaRuntimeGetVersion(version);
	return r * 1000 + v;
}
#else
typedef int (*plugin_fn)(int *, int *);
typedef int (*int_fn)(int *);

/* The base address of the object that defines the runtime the plugin uses. */
static ElfW(Addr) runtime_base(void *h)
{
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) || !lm)
		return 0;
	for (; lm; lm = lm->l_next)
		if (strstr(lm->l_name, "libcudart"))
			return lm->l_addr;
	return 0;
}

int main(int argc, char **argv)
{
	ElfW(Addr) first = 0;
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("%s: dlopen failed: %s\n", argv[i], dlerror());
			return 1;
		}
		plugin_fn fn = (plugin_fn)dlsym(h, "tp_plugin");
		int_fn count_fn = (int_fn)dlsym(h, "cudaGetDeviceCount");
		int_fn version_fn = (int_fn)dlsym(h, "cudaRuntimeGetVersion");
		if (!fn || !count_fn || !version_fn) {
			printf("%s: missing symbols\n", argv[i]);
			return 1;
		}
		int count, version, count2 = -1, version2 = -1;
		int rc = fn(&count, &version);
		int rc2 = count_fn(&count2) * 1000 + version_fn(&version2);
		ElfW(Addr) base = runtime_base(h);
		if (i == 1)
			first = base;
		printf("load %d: plugin rc=%d count=%d version=%d; handle rc=%d count=%d version=%d; base=%s\n",
		       i, rc, count, version, rc2, count2, version2,
		       !base ? "unknown" : base == first ? "same" : "moved");
		fflush(stdout);
		if (dlclose(h)) {
			printf("dlclose failed: %s\n", dlerror());
			return 1;
		}
	}
	return 0;
}
#endif
