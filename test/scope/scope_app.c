/* Loads each library named on the command line with dlopen(RTLD_NOW |
 * RTLD_LOCAL), as CPython loads extension modules, and calls its tp_probe()
 * (test/scope/probe.c), first from the main thread, then from a second
 * thread.  Prints one line per call: "<library> <thread> rc=<code> value=<v>",
 * so that a run under traceprof can be compared with a run without it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef int (*probe_fn)(int *);

struct job {
	const char *name;
	probe_fn fn;
	int rc, value;
};

static void *run(void *arg)
{
	struct job *j = arg;
	j->rc = j->fn(&j->value);
	return NULL;
}

/* --dlerror NAME: what dlsym(RTLD_DEFAULT / RTLD_NEXT, NAME) and dlerror()
 * say, which must be what they say without traceprof. */
static int lookups(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	const char *e = dlerror();
	printf("default %s: %s [%s]\n", name, p ? "found" : "null", e ? e : "no error");
	p = dlsym(RTLD_NEXT, name);
	e = dlerror();
	printf("next %s: %s [%s]\n", name, p ? "found" : "null", e ? e : "no error");
	e = dlerror();
	printf("again: [%s]\n", e ? e : "no error");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--dlerror"))
		return lookups(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--init")) {
		/* test/scope/init_order.c: did libinit_b's constructor run after
		 * libinit_a's had finished? */
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		int *saw = h ? (int *)dlsym(h, "init_b_saw_a") : NULL;
		printf("init_b saw init_a done: %d\n", saw ? *saw : -2);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("%s dlopen failed: %s\n", argv[i], dlerror());
			return 1;
		}
		struct job j = { strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i],
				 (probe_fn)dlsym(h, "tp_probe"), 0, 0 };
		if (!j.fn) {
			printf("%s has no tp_probe\n", argv[i]);
			return 1;
		}
		run(&j);
		printf("%s main rc=%d value=%d\n", j.name, j.rc, j.value);
		pthread_t t;
		if (pthread_create(&t, NULL, run, &j) || pthread_join(t, NULL))
			return 1;
		printf("%s thread rc=%d value=%d\n", j.name, j.rc, j.value);
	}
	return 0;
}
