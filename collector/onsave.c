/* TRACEPROF_ON_SAVE: runs the user's command after each trace file is in
 * place (e.g. an object-store copy), and TRACEPROF_NUM_TRACES_TO_KEEP=0's
 * "delete once uploaded" (Composer's remote-upload convention).
 *
 * The command must never be the program's child (issue 17, item 5): the
 * program's wait() would reap it and the program would get a SIGCHLD for a
 * process it never started.  So it is started by a short-lived intermediate
 * process that the program cannot see: clone() with exit signal 0 (a
 * "clone" child, which wait(), waitpid(-1) and waitid(P_ALL) skip unless
 * given __WALL or __WCLONE, and whose end sends no signal), which starts the
 * shell and ends at once, so that the shell is reparented to init (or the
 * nearest subreaper above the program).  Traceprof reaps the intermediate
 * itself, by pid.  It never execs: an exec would turn its exit signal into
 * SIGCHLD.  Both run in the parent's memory until the shell has exec'd
 * (CLONE_VM | CLONE_VFORK, as posix_spawn does), so only the calling thread
 * (the flush thread) waits, and only that long.  What is left: a program
 * that waits with __WALL itself can reap the intermediate in the
 * microseconds before traceprof does (its wait then returns a pid it never
 * made, with status 0), and a program that made itself a child subreaper
 * (PR_SET_CHILD_SUBREAPER) adopts the shells (said once in the log).
 *
 * The shell's exit status comes back only through its status pipe, which
 * each flush pass polls without blocking; the shell is not traceprof's
 * child, so nothing is reaped but the intermediate.  At
 * normal process exit the destructor below waits up to
 * TP_ONSAVE_FINAL_WAIT_S for uploads still running.  A failing command is
 * logged, never fatal.
 *
 * The child runs CMD with /bin/sh ("{path}" in CMD is replaced by the
 * shell-quoted path, and $1 is the path as well) under an outer shell that
 * writes CMD's exit status to a pipe: the status comes back even when the
 * program reaps every child itself (bash, servers with a SIGCHLD handler
 * calling waitpid(-1)) or ignores SIGCHLD.  It gets
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
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/flush.h"
#include "collector/rotate.h"
#include "common/clock.h"
#include "common/dl.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/preload_env.h"
#include "format/sink.h"

/* How long process exit waits for uploads still running. */
#define TP_ONSAVE_FINAL_WAIT_S 30

extern char **environ;

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

/* "LD_PRELOAD=..." without traceprof's entries (common/preload_env.h:
 * this library, other copies of it, a sanitizer build's runtime),
 * malloc'd; NULL when nothing remains (the variable is then left out). */
static char *onsave_filtered_preload(const char *value)
{
	size_t vlen = strlen(value);
	char *out = malloc(vlen + sizeof("LD_PRELOAD="));
	if (!out)
		return NULL;
	memcpy(out, "LD_PRELOAD=", 11);
	if (tp_preload_env_filter(value, onsave_self_base(), TP_PRELOAD_ENV_SANITIZER, out + 11,
				  vlen + 1) <= 0) {
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

/* The outer shell: runs CMD ($0) with the path ($1), without the status
 * pipe, then writes CMD's exit status to the pipe (fd 3). */
#define ONSAVE_OUTER "/bin/sh -c \"$0\" traceprof-on-save \"$1\" 3>&-; echo $? >&3"

/* What the intermediate and the shell need; both share the parent's
 * memory until the shell has exec'd. */
struct onsave_exec {
	char **argv, **env;
	int status_wr;	   /* the status pipe's write end, > 3, close-on-exec */
	char *shell_stack; /* top of the shell's stack */
	pid_t shell;	   /* set by the intermediate: the shell's pid, or -errno */
	int err;	   /* set by the shell when a step before exec fails */
	int (*clone)(int (*fn)(void *), void *stack, int flags, void *arg, ...);
};

/* The kernel's struct sigaction for rt_sigaction (not glibc's). */
struct onsave_ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* The shell, before its exec.  It and the intermediate below run in the
 * parent's memory on their own stacks, with every signal blocked (the
 * parent blocked them all before its clone()), using only the C library's
 * clone() (through a pointer) and raw system calls through syscall(), whose
 * PLT entry the parent has just bound (no lazy binding in here), and
 * without a sanitizer's instrumentation: they are no threads a sanitizer
 * knows.  Returns the exit status when a step fails (clone() then ends the
 * process with it). */
__attribute__((no_sanitize("address", "thread", "undefined"))) static int onsave_shell(void *arg)
{
	struct onsave_exec *x = arg;
	/* Default dispositions, so that neither the program's handlers (which
	 * would run in the parent's memory) nor its ignored signals reach the
	 * command.  SIGKILL and SIGSTOP cannot be changed; errors are ignored. */
	struct onsave_ksigaction dfl = { 0 };
	dfl.handler = SIG_DFL;
	for (long sig = 1; sig < 65; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	/* Its own process group: a Ctrl-C meant for the program does not cut
	 * an upload short. */
	syscall(SYS_setpgid, 0L, 0L);
	/* Not close-on-exec: it may be 0 itself, when the program closed its
	 * stdin.  Closed before the status pipe goes to 3, which it may be
	 * itself (the program's low numbers are free). */
	long fd = syscall(SYS_openat, (long)AT_FDCWD, "/dev/null", (long)O_RDONLY);
	if (fd < 0 || (fd != 0 && syscall(SYS_dup3, fd, 0L, 0L) < 0))
		goto fail;
	if (fd > 0)
		syscall(SYS_close, fd);
	if (syscall(SYS_dup3, (long)x->status_wr, 3L, 0L) < 0)
		goto fail;
	uint64_t none = 0;
	syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &none, NULL, sizeof(none));
	syscall(SYS_execve, "/bin/sh", x->argv, x->env);
fail:
	x->err = errno ? errno : EINVAL;
	return 127;
}

typedef int (*onsave_clone_fn)(int (*fn)(void *), void *stack, int flags, void *arg, ...);

/* The C library's clone(), past any interposer: a sanitizer runtime
 * preloaded before this library (make check-tsan) intercepts clone() as a
 * fork, which a CLONE_VM child must not go through. */
static onsave_clone_fn onsave_real_clone(void)
{
	static onsave_clone_fn fn;
	if (!fn) {
		fn = (onsave_clone_fn)tp_dl_sym(RTLD_NEXT, "clone");
		if (!fn)
			fn = clone;
	}
	return fn;
}

/* The intermediate: starts the shell as its own child (exit signal SIGCHLD,
 * to it) and ends once the shell has exec'd, orphaning it.  x->clone is the
 * C library's clone(), found by the parent. */
__attribute__((no_sanitize("address", "thread", "undefined"))) static int onsave_middle(void *arg)
{
	struct onsave_exec *x = arg;
	pid_t pid = x->clone(onsave_shell, x->shell_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, x);
	x->shell = pid < 0 ? -(errno ? errno : EAGAIN) : pid;
	return 0;
}

/* Starts the shell outside the program's process tree (see the top of the
 * file).  Returns its pid or -errno. */
static pid_t onsave_clone(struct onsave_exec *x)
{
	size_t half = 32 * 1024;
	char *stack = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	x->shell_stack = stack + 2 * half; /* the upper half; the lower one below */
	x->shell = -EAGAIN;
	x->err = 0;
	x->clone = onsave_real_clone();
	/* Every signal blocked across the clone, as posix_spawn does: the
	 * children share our memory until exec, where no handler of the
	 * program may run.  The shell unblocks them after resetting their
	 * dispositions. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/* Binds syscall()'s PLT entry here, not in a child. */
	syscall(SYS_getpid);
	/* Exit signal 0: a clone child (see the top).  CLONE_VFORK: returns
	 * once the intermediate has ended, so x is final and the stacks free. */
	pid_t mid = x->clone(onsave_middle, stack + half, CLONE_VM | CLONE_VFORK, x);
	int err = mid < 0 ? errno : 0;
	if (mid > 0) {
		/* Reaped by its pid at once: it has ended or is ending.  __WALL: it
		 * is a clone child. */
		int status;
		while (waitpid(mid, &status, __WALL) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	munmap(stack, 2 * half);
	if (mid < 0)
		return -err;
	if (x->shell > 0 && x->err)
		return -x->err; /* the shell ended with 127 before its exec: init reaps it */
	return x->shell;
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
	char *extra = NULL;
	char **env = onsave_child_env(&extra);
	int rc = -ENOMEM;
	int pfd[2] = { -1, -1 };
	struct tp_fd rd = TP_FD_NONE, wr = TP_FD_NONE;
	status->fd = -1;
	if (!cmd || !env)
		goto out;
	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) < 0) {
		rc = -errno;
		goto out;
	}
	/* Both ends high (never fd 3 itself, which the child's dup3(wr, 3)
	 * needs to differ) and with their identities, so that neither a
	 * close nor a read ever reaches a number the program reused. */
	if ((rc = tp_fd_adopt(&rd, pfd[0])) < 0 || (rc = tp_fd_adopt(&wr, pfd[1])) < 0) {
		if (rd.fd < 0)
			close(pfd[1]);
		goto out;
	}
	if (wr.fd <= 3) {
		rc = -EMFILE; /* no room up there: not worth a special case */
		goto out;
	}
	char *argv[] = { "sh", "-c", ONSAVE_OUTER, cmd, (char *)path, NULL };
	struct onsave_exec x = { .argv = argv, .env = env, .status_wr = wr.fd };
	onsave_check_subreaper();
	pid_t p = onsave_clone(&x);
	rc = p < 0 ? (int)p : 0;
	if (rc == 0) {
		*pid = p;
		*status = rd;
		rd.fd = -1;
	}
out:
	if (rd.fd >= 0)
		tp_fd_close(&rd);
	if (wr.fd >= 0)
		tp_fd_close(&wr);
	free(cmd);
	free(env);
	free(extra);
	return rc;
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
