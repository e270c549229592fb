/* TRACEPROF_ON_SAVE: runs the user's command after each trace file is in
 * place (e.g. an object-store copy), and TRACEPROF_NUM_TRACES_TO_KEEP=0's
 * "delete once uploaded" (Composer's remote-upload convention).
 *
 * The command must never be the program's child (issue 17, item 5):
 * common/spawn.c starts it outside the program's process tree.  A program
 * that made itself a child subreaper (PR_SET_CHILD_SUBREAPER) adopts the
 * shells (said once in the log).
 *
 * The shell's exit status comes back only through its status pipe, which
 * each flush pass polls without blocking; the shell is not traceprof's
 * child, so nothing is reaped but the intermediate.  At
 * normal process exit the destructor below waits up to
 * TP_ONSAVE_FINAL_WAIT_S for uploads still running.  A failing command is
 * logged, never fatal.
 *
 * CMD runs with /bin/sh ("{path}" in CMD is replaced by the shell-quoted
 * path, and $1 is the path as well); what it inherits is common/spawn.h's.
 *
 * Threads: the callbacks run on the flush thread, or on the exiting thread
 * once the flush thread has stopped (collector/flush.h); the destructor runs
 * after the library's destructor has stopped the flush thread.  So the
 * pending list below is only ever touched by one thread at a time. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/flush.h"
#include "collector/rotate.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/spawn.h"
#include "format/sink.h"

/* How long process exit waits for uploads still running. */
#define TP_ONSAVE_FINAL_WAIT_S 30

struct onsave_child {
	pid_t pid;
	/* Read end of the status pipe, non-blocking; moved high and checked
	 * before each read (common/fd.h): a program that closes every
	 * descriptor may reuse the number. */
	struct tp_fd pipe;
	char *path;
	uint64_t started_ns;
	char status[16]; /* "N\n" as the outer shell writes it */
	size_t slen;
};

static struct {
	char cmd[TP_CONFIG_STR];
	int64_t keep;
	struct onsave_child *kids;
	size_t nkids, capkids;
	int subreaper_warned;
} S;

/* CMD with every "{path}" replaced by the single-quoted path; malloc'd. */
static char *onsave_expand(const char *cmd, const char *path)
{
	size_t plen = strlen(path);
	size_t quoted = 2 + plen * 4; /* each ' becomes '\'' */
	size_t uses = 0;
	for (const char *p = cmd; (p = strstr(p, "{path}")); p += 6)
		uses++;
	char *out = malloc(strlen(cmd) + uses * quoted + 1);
	if (!out)
		return NULL;
	char *o = out;
	for (const char *p = cmd; *p;) {
		if (!strncmp(p, "{path}", 6)) {
			*o++ = '\'';
			for (const char *s = path; *s; s++) {
				if (*s == '\'') {
					memcpy(o, "'\\''", 4);
					o += 4;
				} else {
					*o++ = *s;
				}
			}
			*o++ = '\'';
			p += 6;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

static int onsave_remember(pid_t pid, const struct tp_fd *status, const char *path)
{
	if (S.nkids == S.capkids) {
		size_t cap = S.capkids ? S.capkids * 2 : 8;
		struct onsave_child *k = realloc(S.kids, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		S.kids = k;
		S.capkids = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	S.kids[S.nkids++] = (struct onsave_child){ .pid = pid,
						   .pipe = *status,
						   .path = copy,
						   .started_ns = tp_clock_monotonic_ns() };
	return 0;
}

/* A subreaper program would adopt the orphaned shells: said once. */
static void onsave_check_subreaper(void)
{
	int v = 0;
	if (S.subreaper_warned || prctl(PR_GET_CHILD_SUBREAPER, &v) < 0 || !v)
		return;
	S.subreaper_warned = 1;
	tp_warn("TRACEPROF_ON_SAVE: this program is a child subreaper (PR_SET_CHILD_SUBREAPER): "
		"the upload shells are reparented to it, so its wait() can see them");
}

static int onsave_spawn(const char *path, pid_t *pid, struct tp_fd *status)
{
	/* The command runs in the program's working directory of the moment,
	 * which a chdir() may have moved away from the folder's anchor: it
	 * gets the file's absolute path. */
	char full[PATH_MAX];
	path = tp_sink_abs_path(path, full, sizeof(full));
	char *cmd = onsave_expand(S.cmd, path);
	if (!cmd)
		return -ENOMEM;
	onsave_check_subreaper();
	pid_t p = tp_spawn_orphan(cmd, path, status);
	free(cmd);
	if (p < 0)
		return (int)p;
	*pid = p;
	return 0;
}

/* The child at index i is done: code is CMD's exit status, or -1 when the
 * outer shell died without writing one. */
static void onsave_finished(size_t i, int code)
{
	struct onsave_child *k = &S.kids[i];
	int ms = (int)((tp_clock_monotonic_ns() - k->started_ns) / 1000000);
	/* With keep >= 1 rotation may delete the file now that nothing reads
	 * it (newer ones took its place meanwhile), whatever the outcome: the
	 * limit bounds the disk even when every upload fails. */
	const char *fate = tp_rotate_hold(k->path, 0)
				   ? "rotation then deleted it (TRACEPROF_NUM_TRACES_TO_KEEP)"
				   : "the file is kept";
	if (code == 0) {
		tp_info("TRACEPROF_ON_SAVE: done for %s (%d ms)", k->path, ms);
		if (S.keep == 0) {
			int rc = tp_rotate_remove(k->path);
			if (rc < 0 && rc != -ENOENT)
				tp_warn("TRACEPROF_ON_SAVE: uploaded, but cannot delete %s: %s", k->path,
					strerror(-rc));
			else
				tp_info("deleted %s after its upload (TRACEPROF_NUM_TRACES_TO_KEEP=0)",
					k->path);
		}
	} else if (code > 128) {
		tp_warn("TRACEPROF_ON_SAVE: the command for %s was killed by signal %d; %s", k->path,
			code - 128, fate);
	} else if (code > 0) {
		tp_warn("TRACEPROF_ON_SAVE: the command for %s failed with exit status %d; %s",
			k->path, code, fate);
	} else {
		tp_warn("TRACEPROF_ON_SAVE: the shell running the command for %s ended without a "
			"status; %s",
			k->path, fate);
	}
	/* Nothing to reap: the shell is not our child (see the top). */
	tp_fd_close(&k->pipe); /* checked first; a lost one is counted */
	free(k->path);
	S.kids[i] = S.kids[--S.nkids];
}

/* Collects the statuses written so far, without blocking.  Returns how
 * many commands are still running. */
static size_t onsave_reap(void)
{
	for (size_t i = 0; i < S.nkids;) {
		struct onsave_child *k = &S.kids[i];
		char buf[16];
		if (!tp_fd_ours(&k->pipe)) {
			/* The program closed our pipe (and may have reused the
			 * number): the command's status is lost, its file kept. */
			tp_fd_lost("an on-save status pipe", k->pipe.fd);
			tp_fd_forget(&k->pipe);
			onsave_finished(i, -1);
			continue;
		}
		ssize_t n = read(k->pipe.fd, buf, sizeof(buf));
		if (n > 0) {
			size_t room = sizeof(k->status) - 1 - k->slen;
			size_t take = (size_t)n < room ? (size_t)n : room;
			memcpy(k->status + k->slen, buf, take);
			k->slen += take;
			continue; /* read until EOF */
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			/* Still running. */
			i++;
			continue;
		}
		/* EOF (or an error): the outer shell is gone. */
		k->status[k->slen] = '\0';
		int code = -1;
		if (k->slen && k->status[0] >= '0' && k->status[0] <= '9')
			code = atoi(k->status);
		onsave_finished(i, code);
	}
	return S.nkids;
}

static int onsave_init(const struct tp_config *cfg)
{
	tp_format(S.cmd, sizeof(S.cmd), "%s", cfg->on_save);
	S.keep = cfg->num_traces_to_keep;
	if (!S.cmd[0] && S.keep != 0)
		return -1;
	if (!S.cmd[0])
		tp_warn("TRACEPROF_NUM_TRACES_TO_KEEP=0 without TRACEPROF_ON_SAVE: each trace is "
			"deleted right after it is saved (Composer's convention); set "
			"TRACEPROF_ON_SAVE to upload it first, or keep 1 or more");
	return 0;
}

static void onsave_pass(uint64_t now_ns)
{
	(void)now_ns;
	if (S.nkids)
		onsave_reap();
}

static void onsave_saved(const char *path)
{
	if (!S.cmd[0]) {
		/* keep == 0 with nothing to upload to: Composer deletes right
		 * after the (no-op) upload. */
		int rc = tp_rotate_remove(path);
		if (rc < 0 && rc != -ENOENT)
			tp_warn("cannot delete %s: %s", path, strerror(-rc));
		else
			tp_info("deleted %s (TRACEPROF_NUM_TRACES_TO_KEEP=0, no TRACEPROF_ON_SAVE)",
				path);
		return;
	}
	pid_t pid = -1;
	struct tp_fd status = TP_FD_NONE;
	int rc = onsave_spawn(path, &pid, &status);
	if (rc < 0) {
		tp_warn("TRACEPROF_ON_SAVE: cannot start /bin/sh for %s: %s; the file is kept", path,
			strerror(-rc));
		return;
	}
	tp_debug("TRACEPROF_ON_SAVE: started pid %d for %s", (int)pid, path);
	if (onsave_remember(pid, &status, path) < 0) {
		tp_warn("TRACEPROF_ON_SAVE: out of memory; pid %d for %s will not be followed",
			(int)pid, path);
		tp_fd_close(&status);
		return;
	}
	/* Rotation must not delete the file under the command reading it. */
	tp_rotate_hold(path, 1);
}

const struct tp_flush_plugin tp_onsave_plugin = {
	.name = "on_save",
	.init = onsave_init,
	.pass = onsave_pass,
	.saved = onsave_saved,
};

/* A forked child does not own its parent's upload processes. */
static void onsave_atfork_child(void)
{
	S.kids = NULL; /* the parent's list; possibly mid-update, so not freed */
	S.nkids = S.capkids = 0;
}

/* Once per process, whatever the configuration: a child forked at any time
 * forgets its parent's upload processes. */
__attribute__((constructor(200))) static void onsave_ctor(void)
{
	pthread_atfork(NULL, NULL, onsave_atfork_child);
}

/* Normal exit: the library's destructor (default priority, so it runs
 * before this one) has written the final files and spawned their
 * commands; wait a bounded time for uploads still running. */
__attribute__((destructor(200))) static void onsave_dtor(void)
{
	if (!S.nkids)
		return;
	int saved = errno;
	uint64_t deadline = tp_clock_monotonic_ns() + TP_ONSAVE_FINAL_WAIT_S * 1000000000ULL;
	tp_info("TRACEPROF_ON_SAVE: waiting up to %d s for %zu upload(s)", TP_ONSAVE_FINAL_WAIT_S,
		S.nkids);
	struct timespec ts = { 0, 20 * 1000000 };
	while (onsave_reap() && tp_clock_monotonic_ns() < deadline)
		nanosleep(&ts, NULL);
	for (size_t i = 0; i < S.nkids; i++)
		tp_warn("TRACEPROF_ON_SAVE: the command for %s (pid %d) is still running after %d s; "
			"not waiting for it, the file is kept",
			S.kids[i].path, (int)S.kids[i].pid, TP_ONSAVE_FINAL_WAIT_S);
	errno = saved;
}
