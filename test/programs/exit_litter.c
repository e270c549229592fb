/* Endings that run no saving code leave no temporary file (issue 41 item 8;
 * test/integration/exit_litter.sh).  The parent records, waits for its
 * flush thread to create its window's temporary file, then:
 *   - forks a child that records, waits for its own temporary file, and
 *     ends with _exit(0) (as a DataLoader worker does), or _Exit(0);
 *   - vforks a child that ends at once with _exit(127) (an exec that
 *     failed): in the parent's memory, it must not remove the parent's file;
 * then checks its own temporary file is still there, opens a second window
 * (a step) and sees its file made too, and exits normally (both windows are
 * saved).  Prints what it saw.
 *   exit_litter FOLDER _exit|_Exit
 *   exit_litter FOLDER self      the parent itself ends with _exit(0) */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload/traceprof.h"

/* How many hidden temporary files of pid (whose name starts with prefix)
 * are in folder, waiting up to 3 s for at least one. */
static int tmp_named(const char *folder, const char *prefix, long pid, int wait)
{
	char tail[64];
	snprintf(tail, sizeof(tail), ".tmp.%ld.", pid);
	for (int tries = 0; tries < (wait ? 300 : 1); tries++) {
		int n = 0;
		DIR *d = opendir(folder);
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] == '.' && strstr(e->d_name, tail) &&
			    !strncmp(e->d_name, prefix, strlen(prefix)))
				n++;
		if (d)
			closedir(d);
		if (n || !wait)
			return n;
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int tmp_files(const char *folder, long pid, int wait)
{
	return tmp_named(folder, ".", pid, wait);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	const char *folder = argv[1];
	int use_Exit = !strcmp(argv[2], "_Exit");
	traceprof_marker_instant("parent");
	printf("parent tmp before: %d\n", tmp_files(folder, (long)getpid(), 1) > 0);
	fflush(stdout);
	if (!strcmp(argv[2], "self"))
		_exit(0); /* no fork: what a sanitizer build can run */
	pid_t pid = fork();
	if (pid == 0) {
		traceprof_marker_instant("child");
		int had = tmp_files(folder, (long)getpid(), 1) > 0;
		printf("child tmp: %d\n", had);
		fflush(stdout);
		if (use_Exit)
			_Exit(0);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	pid = vfork();
	if (pid == 0)
		_exit(127);
	waitpid(pid, &st, 0);
	printf("vfork child: %d\n", WEXITSTATUS(st));
	printf("parent tmp after: %d\n", tmp_files(folder, (long)getpid(), 0) > 0);
	/* A window opened after the vfork child's _exit gets its file (with
	 * TRACEPROF_SCHEDULE=wait=0,warmup=0,active=1, one window per step):
	 * the child changed nothing of the parent's. */
	traceprof_step();
	traceprof_marker_instant("after");
	printf("parent tmp of step 1: %d\n",
	       tmp_named(folder, ".rank0.step1.", (long)getpid(), 1) > 0);
	return 0;
}
