/* traceprof's own file descriptors, kept safe from the program.
 *
 * A program may close every descriptor it did not open (a daemon's
 * close_range(3, ~0U, 0), a loop of close()) and then open its own files,
 * which get the lowest free numbers: ours.  Writing to or closing such a
 * number would change the program's files.  So every descriptor traceprof
 * keeps is
 *   - moved high (F_DUPFD_CLOEXEC to TP_FD_FLOOR or above, or half the
 *     RLIMIT_NOFILE soft limit when that is lower), where programs that open
 *     files one by one seldom reach;
 *   - remembered with its identity (st_dev, st_ino) at open;
 *   - checked with fstat() before each use: a number whose identity changed
 *     was closed by the program, and may be reused by it; traceprof stops
 *     using it and never closes it (tp_fd_close() checks first).
 * A failed move keeps the low number (still checked before each use).
 * Opening is the one moment a descriptor of ours sits on a low number (the
 * kernel hands out the lowest free one): tp_fd_open_at() compares it with
 * the file its path names before moving it and before closing the low
 * number, so that a program that closed it and opened a file of its own on
 * it in the meantime keeps that file.  What is left is the instant between
 * the last check and close() (see tp_fd_open_at()).
 * Descriptors without an identity of their own (eventfd and other anonymous
 * inodes share one) are not used: the flush thread is woken with a futex. */
#ifndef TP_COMMON_FD_H
#define TP_COMMON_FD_H

#include <sys/types.h>

#define TP_FD_FLOOR 1000

struct tp_fd {
	int fd; /* -1: none */
	dev_t dev;
	ino_t ino;
};

#define TP_FD_NONE { -1, 0, 0 }

/* Takes ownership of fd (just returned by open/openat/...): moves it high
 * and records its identity in f.  Returns 0, or -errno (fd is then closed
 * and f->fd is -1). */
int tp_fd_adopt(struct tp_fd *f, int fd);

/* Opens path (relative to dirfd, as openat) with oflags | O_CLOEXEC and
 * adopts it as tp_fd_adopt() does, checked against the file path names
 * (fstatat; O_NOFOLLOW in oflags: the link itself): the low number is moved
 * and closed only while it is that file.  When the program took the number
 * between our open and our move, its file is left alone and path is opened
 * again (without O_CREAT, O_EXCL, O_TRUNC: the file is ours already);
 * bounded to three tries.  A number that cannot be checked (the name gone
 * and never seen before the open, or dirfd closed under us) is left open,
 * never closed blindly.  Returns 0, or -errno (f->fd is then -1; -EBADF
 * when the program took the number every time or it could not be
 * checked). */
int tp_fd_open_at(struct tp_fd *f, int dirfd, const char *path, int oflags, mode_t mode);

/* 1 when f->fd still refers to the file it referred to at adopt time. */
int tp_fd_ours(const struct tp_fd *f);

/* Closes f->fd if it is still ours; a descriptor the program closed (and
 * perhaps reused) is left alone.  f->fd is -1 afterwards.  Returns 0, or -1
 * when the descriptor was not ours any more (counted, see below). */
int tp_fd_close(struct tp_fd *f);

/* Forgets f->fd without closing it (a forked child's copy of a parent's
 * descriptor, or one the program took over). */
void tp_fd_forget(struct tp_fd *f);

/* Records that a descriptor of ours was found closed or replaced by the
 * program (what: "a trace file", ...).  The first time, logs one warning;
 * always counts.  Returns the count so far. */
unsigned long tp_fd_lost(const char *what, int fd);

/* Reads fd from offset 0 (its offset untouched) into buf, at most size - 1
 * bytes (size > 0), NUL-terminated; returns the length read, or -1 on an
 * error or an empty file (buf is then ""). */
ssize_t tp_fd_pread_text(int fd, char *buf, size_t size);

/* Reads a small file (e.g. under /proc) into buf, NUL-terminated; returns
 * the length read or -1.  The transient descriptor is opened with
 * tp_fd_open_at(), read with pread() (never moving a file offset), and
 * closed with tp_fd_close(). */
ssize_t tp_fd_read_small(const char *path, char *buf, size_t size);

#endif
