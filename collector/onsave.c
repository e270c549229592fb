/* TRACEPROF_ON_SAVE: runs the user's command after each trace file is in
 * place (e.g. an object-store copy), and TRACEPROF_NUM_TRACES_TO_KEEP=0's
 * "delete once uploaded" (Composer's remote-upload convention).
 *
 * The command is spawned with posix_spawn from the flush thread (only the
 * flush thread is suspended, and only until the child has exec'd), so the
 * program's threads never wait for it.  Children are reaped by pid, never
 * with waitpid(-1): the program's own children are not ours to reap.  Each
 * flush pass polls them with WNOHANG; at normal process exit the destructor
 * below waits up to TP_ONSAVE_FINAL_WAIT_S for uploads still running.  A
 * failing command is logged, never fatal.
 *
 * The child runs `/bin/sh -c CMD traceprof-on-save PATH`: "{path}" in CMD is
 * replaced by the shell-quoted path, and $1 is the path as well.  It gets
 * stdin from /dev/null, its own process group (a Ctrl-C meant for the
 * program does not cut an upload short), default signal dispositions, an
 * empty signal mask, and an environment without libtraceprof in LD_PRELOAD
 * so that the upload command is not itself traced.
 *
 * Threads: the callbacks run on the flush thread, or on the exiting thread
 * once the flush thread has stopped (collector/flush.h); the destructor runs
 * after the library's destructor has stopped the flush thread.  So the
 * pending list below is only ever touched by one thread at a time. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/flush.h"
#include "collector/rotate.h"
#include "common/clock.h"
#include "common/log.h"

/* How long process exit waits for uploads still running. */
#define TP_ONSAVE_FINAL_WAIT_S 30

extern char **environ;

struct onsave_child {
	pid_t pid;
	char *path;
	uint64_t started_ns;
};

static struct {
	char cmd[TP_CONFIG_STR];
	int64_t keep;
	struct onsave_child *kids;
	size_t nkids, capkids;
} S;

/* The file name of this library, to recognise it in LD_PRELOAD. */
static const char *onsave_self_base(void)
{
	static char base[256];
	Dl_info info;
	if (!base[0] && dladdr((void *)onsave_self_base, &info) && info.dli_fname) {
		const char *b = strrchr(info.dli_fname, '/');
		tp_format(base, sizeof(base), "%s", b ? b + 1 : info.dli_fname);
	}
	return base;
}

/* One LD_PRELOAD entry (len bytes at p) is ours when its file name is this
 * library's, or starts with "libtraceprof" (an installed copy elsewhere). */
static int onsave_preload_is_ours(const char *p, size_t len)
{
	const char *b = p + len;
	while (b > p && b[-1] != '/')
		b--;
	size_t blen = (size_t)(p + len - b);
	const char *self = onsave_self_base();
	size_t slen = strlen(self);
	if (slen && blen == slen && !memcmp(b, self, slen))
		return 1;
	return blen >= 12 && !memcmp(b, "libtraceprof", 12);
}

/* "LD_PRELOAD=..." without our library, malloc'd; NULL when nothing
 * remains (the variable is then left out). */
static char *onsave_filtered_preload(const char *value)
{
	size_t vlen = strlen(value);
	char *out = malloc(vlen + sizeof("LD_PRELOAD="));
	if (!out)
		return NULL;
	size_t n = 0;
	memcpy(out, "LD_PRELOAD=", 11);
	char *dst = out + 11;
	for (const char *p = value; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && !onsave_preload_is_ours(p, len)) {
			if (n)
				dst[n++] = ':';
			memcpy(dst + n, p, len);
			n += len;
		}
		p += len;
		while (*p == ':' || *p == ' ')
			p++;
	}
	dst[n] = '\0';
	if (!n) {
		free(out);
		return NULL;
	}
	return out;
}

/* The child's environment: the process's, LD_PRELOAD filtered.  The array
 * borrows the process's strings; *extra is the one string to free. */
static char **onsave_child_env(char **extra)
{
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	char **env = malloc((n + 1) * sizeof(*env));
	*extra = NULL;
	if (!env)
		return NULL;
	size_t k = 0;
	for (char **e = environ; e && *e; e++) {
		if (!strncmp(*e, "LD_PRELOAD=", 11)) {
			*extra = onsave_filtered_preload(*e + 11);
			if (*extra)
				env[k++] = *extra;
			continue;
		}
		env[k++] = *e;
	}
	env[k] = NULL;
	return env;
}

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

static int onsave_remember(pid_t pid, const char *path)
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
	S.kids[S.nkids++] = (struct onsave_child){ pid, copy, tp_clock_monotonic_ns() };
	return 0;
}

static int onsave_spawn(const char *path, pid_t *pid)
{
	char *cmd = onsave_expand(S.cmd, path);
	char *extra = NULL;
	char **env = onsave_child_env(&extra);
	int rc = -ENOMEM;
	if (!cmd || !env)
		goto out;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_init(&fa);
	/* The flush thread runs with every signal blocked (collector/flush.c);
	 * the child must not inherit that mask, nor the program's handlers'
	 * dispositions of ignored signals. */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						POSIX_SPAWN_SETPGROUP);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	char *argv[] = { "sh", "-c", cmd, "traceprof-on-save", (char *)path, NULL };
	rc = -posix_spawn(pid, "/bin/sh", &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
out:
	free(cmd);
	free(env);
	free(extra);
	return rc;
}

/* The child at index i ended with status (or unknown when known == 0:
 * someone else reaped it, e.g. the program's SIGCHLD handler). */
static void onsave_finished(size_t i, int known, int status)
{
	struct onsave_child *k = &S.kids[i];
	double secs = (double)(tp_clock_monotonic_ns() - k->started_ns) / 1e9;
	int ok = known && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (ok) {
		tp_info("TRACEPROF_ON_SAVE: done for %s (%d ms)", k->path, (int)(secs * 1000));
		if (S.keep == 0) {
			int rc = tp_rotate_remove(k->path);
			if (rc < 0 && rc != -ENOENT)
				tp_warn("TRACEPROF_ON_SAVE: uploaded, but cannot delete %s: %s", k->path,
					strerror(-rc));
			else
				tp_info("deleted %s after its upload (TRACEPROF_NUM_TRACES_TO_KEEP=0)",
					k->path);
		}
	} else if (!known) {
		tp_info("TRACEPROF_ON_SAVE: the command for %s was reaped by the program; its "
			"result is unknown, the file is kept",
			k->path);
	} else if (WIFEXITED(status)) {
		tp_warn("TRACEPROF_ON_SAVE: the command for %s failed with exit status %d; the file "
			"is kept",
			k->path, WEXITSTATUS(status));
	} else {
		tp_warn("TRACEPROF_ON_SAVE: the command for %s was killed by signal %d; the file is "
			"kept",
			k->path, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	free(k->path);
	S.kids[i] = S.kids[--S.nkids];
}

/* Reaps the children that have ended, without blocking.  Returns how many
 * are still running. */
static size_t onsave_reap(void)
{
	for (size_t i = 0; i < S.nkids;) {
		int status = 0;
		pid_t r = waitpid(S.kids[i].pid, &status, WNOHANG);
		if (r == S.kids[i].pid) {
			onsave_finished(i, 1, status);
		} else if (r < 0 && errno == ECHILD) {
			onsave_finished(i, 0, 0);
		} else {
			i++;
		}
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
	pid_t pid;
	int rc = onsave_spawn(path, &pid);
	if (rc < 0) {
		tp_warn("TRACEPROF_ON_SAVE: cannot start /bin/sh for %s: %s; the file is kept", path,
			strerror(-rc));
		return;
	}
	tp_debug("TRACEPROF_ON_SAVE: started pid %d for %s", (int)pid, path);
	if (onsave_remember(pid, path) < 0)
		tp_warn("TRACEPROF_ON_SAVE: out of memory; pid %d for %s will not be reaped",
			(int)pid, path);
}

static const struct tp_flush_plugin onsave_plugin = {
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

static void onsave_register(void)
{
	if (tp_flush_register(&onsave_plugin) < 0)
		tp_warn("TRACEPROF_ON_SAVE: too many plugins; the on-save command is disabled");
	pthread_atfork(NULL, NULL, onsave_atfork_child);
}

/* Priority 200: registered before the library's main constructor starts the
 * flush thread (collector/flush.h). */
__attribute__((constructor(200))) static void onsave_ctor(void)
{
	onsave_register();
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
