/* Starting a command outside the program's process tree; see
 * common/spawn.h for what the program can and cannot see of it.
 *
 * The intermediate is a clone() child with exit signal 0 (a "clone" child,
 * which wait(), waitpid(-1) and waitid(P_ALL) skip unless given __WALL or
 * __WCLONE, and whose end sends no signal).  It starts the shell and ends at
 * once, so that the shell is reparented to init (or the nearest subreaper
 * above the program); the caller's thread reaps the intermediate itself, by
 * pid.  It never execs: an exec would turn its exit signal into SIGCHLD.
 * Both run in the parent's memory until the shell has exec'd (CLONE_VM |
 * CLONE_VFORK, as posix_spawn does), so only the calling thread waits, and
 * only that long.  What is left: a program that waits with __WALL itself
 * can reap the intermediate in the microseconds before we do (its wait then
 * returns a pid it never made, with status 0). */
#include "common/spawn.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/dl.h"
#include "common/log.h"
#include "common/preload_env.h"

extern char **environ;

/* "LD_PRELOAD=..." without traceprof's entries (common/preload_env.h:
 * this library, other copies of it, a sanitizer build's runtime),
 * malloc'd; NULL when nothing remains (the variable is then left out). */
static char *spawn_filtered_preload(const char *value)
{
	size_t vlen = strlen(value);
	char *out = malloc(vlen + sizeof("LD_PRELOAD="));
	if (!out)
		return NULL;
	memcpy(out, "LD_PRELOAD=", 11);
	if (tp_preload_env_filter(value, tp_dl_self_base(), TP_PRELOAD_ENV_SANITIZER, out + 11,
				  vlen + 1) <= 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* The child's environment: the process's, LD_PRELOAD filtered.  The array
 * borrows the process's strings; *extra is the one string to free. */
static char **spawn_child_env(char **extra)
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
			*extra = spawn_filtered_preload(*e + 11);
			if (*extra)
				env[k++] = *extra;
			continue;
		}
		env[k++] = *e;
	}
	env[k] = NULL;
	return env;
}

/* The outer shell: runs CMD ($0) with the path ($1), without the status
 * pipe, then writes CMD's exit status to the pipe (fd 3). */
#define SPAWN_OUTER "/bin/sh -c \"$0\" traceprof-on-save \"$1\" 3>&-; echo $? >&3"

/* What the intermediate and the shell need; both share the parent's
 * memory until the shell has exec'd. */
struct spawn_exec {
	char **argv, **env;
	int status_wr;	   /* the status pipe's write end, > 3, close-on-exec */
	char *shell_stack; /* top of the shell's stack */
	pid_t shell;	   /* set by the intermediate: the shell's pid, or -errno */
	int err;	   /* set by the shell when a step before exec fails */
	int (*clone)(int (*fn)(void *), void *stack, int flags, void *arg, ...);
};

/* The kernel's struct sigaction for rt_sigaction (not glibc's). */
struct spawn_ksigaction {
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
__attribute__((no_sanitize("address", "thread", "undefined"))) static int spawn_shell(void *arg)
{
	struct spawn_exec *x = arg;
	/* Default dispositions, so that neither the program's handlers (which
	 * would run in the parent's memory) nor its ignored signals reach the
	 * command.  SIGKILL and SIGSTOP cannot be changed; errors are ignored. */
	struct spawn_ksigaction dfl = { 0 };
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

typedef int (*spawn_clone_fn)(int (*fn)(void *), void *stack, int flags, void *arg, ...);

/* The C library's clone(), past any interposer: a sanitizer runtime
 * preloaded before this library (make check-tsan) intercepts clone() as a
 * fork, which a CLONE_VM child must not go through. */
static spawn_clone_fn spawn_real_clone(void)
{
	static spawn_clone_fn fn;
	if (!fn) {
		fn = (spawn_clone_fn)tp_dl_sym(RTLD_NEXT, "clone");
		if (!fn)
			fn = clone;
	}
	return fn;
}

/* The intermediate: starts the shell as its own child (exit signal SIGCHLD,
 * to it) and ends once the shell has exec'd, orphaning it.  x->clone is the
 * C library's clone(), found by the parent. */
__attribute__((no_sanitize("address", "thread", "undefined"))) static int spawn_middle(void *arg)
{
	struct spawn_exec *x = arg;
	pid_t pid = x->clone(spawn_shell, x->shell_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, x);
	x->shell = pid < 0 ? -(errno ? errno : EAGAIN) : pid;
	return 0;
}

/* Starts the shell outside the program's process tree (see the top of the
 * file).  Returns its pid or -errno. */
static pid_t spawn_clone(struct spawn_exec *x)
{
	size_t half = 32 * 1024;
	char *stack = mmap(NULL, 2 * half, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	x->shell_stack = stack + 2 * half; /* the upper half; the lower one below */
	x->shell = -EAGAIN;
	x->err = 0;
	x->clone = spawn_real_clone();
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
	pid_t mid = x->clone(spawn_middle, stack + half, CLONE_VM | CLONE_VFORK, x);
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

pid_t tp_spawn_orphan(const char *cmd, const char *arg, struct tp_fd *status)
{
	char *extra = NULL;
	char **env = spawn_child_env(&extra);
	int rc = -ENOMEM;
	int pfd[2] = { -1, -1 };
	struct tp_fd rd = TP_FD_NONE, wr = TP_FD_NONE;
	status->fd = -1;
	if (!env)
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
	char *argv[] = { "sh", "-c", SPAWN_OUTER, (char *)cmd, (char *)arg, NULL };
	struct spawn_exec x = { .argv = argv, .env = env, .status_wr = wr.fd };
	pid_t p = spawn_clone(&x);
	rc = p < 0 ? (int)p : 0;
	if (rc == 0) {
		*status = rd;
		rd.fd = -1;
		rc = (int)p;
	}
out:
	if (rd.fd >= 0)
		tp_fd_close(&rd);
	if (wr.fd >= 0)
		tp_fd_close(&wr);
	free(env);
	free(extra);
	return rc;
}
