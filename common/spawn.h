/* Starting a command that is not the program's child.
 *
 * A process traceprof starts for itself (TRACEPROF_ON_SAVE's upload
 * command) must never be the program's child: the program's wait() would
 * reap it, and the program would get a SIGCHLD for a process it never
 * started.  tp_spawn_orphan() runs `/bin/sh -c CMD traceprof-on-save ARG`
 * through a short-lived intermediate that the program cannot see, so that
 * the shell is orphaned at once (reparented to init, or to the nearest
 * subreaper above the program: the caller may want to say so).
 *
 * CMD gets stdin from /dev/null, its own process group (a Ctrl-C meant for
 * the program does not cut it short), default signal dispositions, an empty
 * signal mask, and the environment without traceprof's entries in
 * LD_PRELOAD (it is not traced).  Its exit status comes back through a pipe
 * that an outer shell writes ("N\n"), not through wait(): the program may
 * reap every child itself or ignore SIGCHLD. */
#ifndef TP_COMMON_SPAWN_H
#define TP_COMMON_SPAWN_H

#include <sys/types.h>

#include "common/fd.h"

/* Starts CMD with $1 = ARG.  Returns the shell's pid (not a child of this
 * process: never wait for it) and the status pipe's read end in *status
 * (non-blocking, kept high, common/fd.h), or -errno.  The calling thread
 * waits for the shell's exec, not for CMD. */
pid_t tp_spawn_orphan(const char *cmd, const char *arg, struct tp_fd *status);

#endif
