/* Reading /proc files: into the caller's buffer, without allocation (the
 * flush thread reads them every pass, and template expansion may run in a
 * constructor), with the descriptor safety of common/fd.h (the transient
 * descriptor is closed only if it is still the one opened), and the few
 * field lookups the readers need. */
#ifndef TP_COMMON_PROCFS_H
#define TP_COMMON_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/fd.h"

/* Reads path into buf (at most size - 1 bytes, NUL-terminated; size > 0).
 * Returns the length read, or -1 (buf is then ""). */
ssize_t tp_procfs_read(const char *path, char *buf, size_t size);

/* A /proc file read again and again: opened once, moved high and
 * identity-checked (common/fd.h), and re-read with pread(fd, buf, n, 0),
 * which makes the kernel generate the file's contents afresh.  Opening it
 * at each read would hand out a low descriptor number at every pass: a
 * program that closes every descriptor and opens its own files could get
 * that number between our open() and our move or close, and lose its file
 * to our close() (test/integration/rel_own_fds.sh).
 * The file is reopened only when the program took its number (the identity
 * check fails), when the path changes, when a read fails, and in a forked
 * child (/proc/self was resolved at open time: the parent's descriptor names
 * the parent's process).  One thread at a time per struct.  Each one held
 * is a descriptor fewer for a program under a small RLIMIT_NOFILE, for the
 * whole run: the sampler's file, read every 100 ms while recording, is
 * opened at each read instead (issue 30). */
struct tp_procfs_file {
	struct tp_fd fd;
	pid_t pid;      /* the process that opened fd */
	char path[64];  /* the path fd was opened from */
};

#define TP_PROCFS_FILE_INIT { TP_FD_NONE, 0, "" }

/* Reads path (under 64 bytes) through f into buf, as tp_procfs_read().
 * Returns the length read, or -1 (buf is then ""). */
ssize_t tp_procfs_pread(struct tp_procfs_file *f, const char *path, char *buf, size_t size);

/* Closes f's descriptor if it is still ours and this process opened it. */
void tp_procfs_file_close(struct tp_procfs_file *f);

/* tp_procfs_read() for text: trailing newlines and NULs removed, and with
 * nul_to_space every NUL inside turned into a space (/proc/.../cmdline's
 * arguments).  Returns the text's length, or -1 (buf is then ""). */
ssize_t tp_procfs_read_text(const char *path, char *buf, size_t size, int nul_to_space);

/* In a "Key:<spaces>value" file (/proc/self/status), the value of the line
 * that starts with key (given with its colon: "VmRSS:"), spaces skipped; a
 * pointer into text, or NULL when no line starts with key. */
const char *tp_procfs_field(const char *text, const char *key);

/* The number at the start of key's value ("VmRSS:  1234 kB" -> 1234).
 * Returns 0, or -1 when key is absent or its value is not a number. */
int tp_procfs_field_u64(const char *text, const char *key, uint64_t *out);

/* The n-th (1-based) space-separated word of text as a number, for files of
 * numbers (/proc/self/statm).  Returns 0 or -1. */
int tp_procfs_word_u64(const char *text, int n, uint64_t *out);

/* Field n of a /proc/.../stat line, numbered as proc(5) numbers them (1:
 * pid, 2: comm, 3: state, 14: utime, 20: num_threads, ...), for n >= 3:
 * counted from the last ')', since the command name may hold spaces and
 * parentheses.  Returns 0, or -1 when the line is shorter or the field is
 * not a number (field 3 is a letter: tp_procfs_stat_state()). */
int tp_procfs_stat_u64(const char *stat, int n, uint64_t *out);

/* The state letter (field 3) of a stat line ('R', 'S', 'Z', ...), or 0. */
char tp_procfs_stat_state(const char *stat);

#endif
