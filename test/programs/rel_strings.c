/* Hostile strings (test/integration/rel_strings.sh): markers, instants,
 * counters and thread names with quotes, backslashes, control characters,
 * invalid UTF-8 and overlong names.  Prints the number of names recorded. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "preload/traceprof.h"

static const char *const names[] = {
	"plain",
	"quote \" and backslash \\ and slash /",
	"\"\\\"\\\\\"",
	"ctl \x01\x02\x07\b\t\n\v\f\r\x1b\x1f\x7f end",
	"utf8 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	"bad \xc3 \xe2\x82 \xf0\x9f\x98 \xff\xfe \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \x80\xbf",
	"cut utf8 at end \xe2\x82",
	"\xff",
	"",
	"</script><script>alert(1)</script>",
	"_Z9vectorAddPKfS0_Pfi",
	"void vectorAdd<float>(float const*, float*, int) [with T = \"x\"]",
	"%s%n%x%p",
};

static void *named_thread(void *arg)
{
	/* At most 15 bytes: the kernel's limit for a thread name. */
	pthread_setname_np(pthread_self(), (const char *)arg);
	traceprof_marker_instant("from a hostile thread name");
	return NULL;
}

int main(void)
{
	size_t n = sizeof(names) / sizeof(names[0]);
	char longname[3000];
	memset(longname, 'L', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	/* A multi-byte character across the cut of an overlong name. */
	for (size_t i = 400; i + 3 < sizeof(longname) - 1; i += 3)
		memcpy(longname + i, "\xe2\x82\xac", 3);
	for (size_t i = 0; i < n; i++) {
		traceprof_marker_start(names[i]);
		traceprof_marker_instant(names[i]);
		traceprof_marker_counter(names[i], names[(i + 1) % n], (double)i);
		traceprof_marker_finish(names[i]);
	}
	traceprof_marker_start(longname);
	traceprof_marker_finish(longname);
	traceprof_marker_instant(longname);
	static const char *const tnames[] = { "q\"b\\\n\x01", "\xff\xfe\xc3", "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82", "\t\r\x1b[31m" };
	for (size_t i = 0; i < sizeof(tnames) / sizeof(tnames[0]); i++) {
		pthread_t th;
		pthread_create(&th, NULL, named_thread, (void *)tnames[i]);
		pthread_join(th, NULL);
	}
	pthread_setname_np(pthread_self(), "main\"\\\x01\xff");
	traceprof_step();
	printf("%zu names\n", n + 1);
	return 0;
}
