/* Editing LD_PRELOAD so that a process's children do not load traceprof.
 *
 * Two places start children that must run untraced: the library's start-up
 * with TRACEPROF_FOLLOW_EXEC=0 (preload/init.c edits the process's own
 * LD_PRELOAD, which every later exec inherits), and the on-save command
 * (collector/onsave.c builds its child's environment).  Both want a child
 * without traceprof, so one rule decides which entries go:
 *   - this library's own file name (the directory does not matter: a
 *     relative and an absolute path to the same file are both ours);
 *   - any other file named libtraceprof* (a second or installed copy would
 *     trace the child just the same);
 *   - with TP_PRELOAD_ENV_SANITIZER (the on-save command only), in a
 *     sanitizer build of the library (make check-asan/check-tsan), that
 *     sanitizer's runtime, which python/traceprof and test/lib put before
 *     the library for the library alone: gcc 12's TSan runtime preloaded
 *     alone into an uninstrumented /bin/sh crashes the shell.  The program's
 *     own exec'd children keep it: the program was run with it, and an
 *     instrumented child needs it first (rel_life.sh's exec case).
 * Every other entry stays, in order.  ld.so splits the list at ':' and ' ';
 * the result is joined with ':'. */
#ifndef TP_COMMON_PRELOAD_ENV_H
#define TP_COMMON_PRELOAD_ENV_H

#include <stddef.h>
#include <sys/types.h>

/* 1 when the LD_PRELOAD entry of len bytes at p is traceprof's (see above);
 * self_base is this library's file name without directory ("" or NULL when
 * unknown: then only the libtraceprof* and sanitizer rules apply). */
#define TP_PRELOAD_ENV_SANITIZER 1 /* flags: also this build's sanitizer runtime */

int tp_preload_env_is_ours(const char *p, size_t len, const char *self_base, int flags);

/* Writes value (an LD_PRELOAD list) without traceprof's entries into out,
 * NUL-terminated.  The result is never longer than value, so size =
 * strlen(value) + 1 always suffices.  Returns the result's length (0:
 * nothing remains, and the variable should be removed), or -1 when out is
 * too small for the result (out then holds "").  No allocation. */
ssize_t tp_preload_env_filter(const char *value, const char *self_base, int flags, char *out,
			      size_t size);

#endif
