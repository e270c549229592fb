/* The sink's descriptors, kept from the program (common/fd.h): names in
 * the trace folder reached through the folder's descriptor while it is held
 * and ours, else by the folder's path from the anchored root; the temporary
 * file's descriptor checked before each write and reopened by name when the
 * program took its number.  See format/sink_int.h. */
/* O_PATH. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "format/sink_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/fd.h"

/* "dir/name" into buf.  Returns 0 or -ENAMETOOLONG. */
static int sk_join(char *buf, size_t size, const char *dir, const char *name)
{
	int n = snprintf(buf, size, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

struct sk_dir_call {
	struct tp_sink *s;
	const char *a, *b;
	tp_sink_dir_fn fn;
	void *arg;
};

/* tp_sink_in_dir()'s step from the anchored root: the folder at rel, still
 * the one the sink opened, then fn on the names under it. */
static int sk_dir_at(int dfd, const char *rel, void *arg)
{
	struct sk_dir_call *c = arg;
	struct stat st;
	/* EBADF here: the root's number was taken (tp_sink_at() retries);
	 * any other failure to reach the folder reads as EBADF too, as a lost
	 * descriptor does. */
	if (fstatat(dfd, rel, &st, 0) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_dev != c->s->dir.dev || st.st_ino != c->s->dir.ino)
		return -EBADF;
	char abuf[PATH_MAX], bbuf[PATH_MAX];
	if (sk_join(abuf, sizeof(abuf), rel, c->a) ||
	    (c->b && sk_join(bbuf, sizeof(bbuf), rel, c->b)))
		return -EBADF;
	return c->fn(dfd, abuf, c->b ? bbuf : NULL, c->arg);
}

/* The folder is not held while the window records: one descriptor fewer
 * for a program under a small RLIMIT_NOFILE (issue 30).  It is reached
 * from the anchored root (tp_sink_anchor(), so a chroot does not move it)
 * by its absolute path.  Without the absolute path, the folder's descriptor
 * is held from the start and checked to be still ours. */
int tp_sink_in_dir(struct tp_sink *s, const char *a, const char *b, tp_sink_dir_fn fn,
		   void *arg)
{
	if (s->dir.fd >= 0) {
		if (tp_fd_ours(&s->dir))
			return fn(s->dir.fd, a, b, arg);
		/* Taken by the program: by its path from here on, when it has one
		 * (the identity kept by tp_fd_forget() checks it). */
		tp_fd_lost("a trace folder", s->dir.fd);
		tp_fd_forget(&s->dir);
	}
	if (!s->dir_abs)
		return -EBADF;
	struct sk_dir_call c = { s, a, b, fn, arg };
	return tp_sink_at(s->dir_abs, sk_dir_at, &c);
}

/* Opens the temporary file again, into the struct tp_fd at arg. */
static int sk_reopen_at(int dfd, const char *a, const char *b, void *arg)
{
	(void)b;
	return tp_fd_open_at(arg, dfd, a, O_WRONLY | O_NOFOLLOW, 0);
}

/* The temporary file's descriptor, checked to be still ours; reopened by its
 * name (the same inode, or nothing) and positioned after the bytes written
 * when the program took its number.  Returns the descriptor or -1. */
static int sk_file(struct tp_sink *s)
{
	if (s->file.fd >= 0 && tp_fd_ours(&s->file))
		return s->file.fd;
	if (s->file.fd >= 0) {
		tp_fd_lost("a trace file", s->file.fd);
		tp_fd_forget(&s->file);
	}
	struct tp_fd again;
	if (!s->tmp[0] || tp_sink_in_dir(s, s->tmp, NULL, sk_reopen_at, &again) < 0)
		return -1;
	if (again.dev != s->file.dev || again.ino != s->file.ino ||
	    lseek(again.fd, (off_t)s->bytes_out, SEEK_SET) != (off_t)s->bytes_out) {
		tp_fd_close(&again);
		return -1;
	}
	s->file = again;
	return s->file.fd;
}

/* write(2) until everything is written: retries EINTR and short writes. */
static int sk_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO; /* not expected for regular files; never spin */
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int tp_sink_out(struct tp_sink *s, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	/* One fstat per batch (the JSON writer's buffer, or one compressed
	 * block): never write into a file the program opened on our number. */
	int fd = sk_file(s);
	if (fd < 0)
		return -EBADF;
	int rc = sk_write_all(fd, p, n);
	if (rc)
		return rc;
	s->bytes_out += n;
	return 0;
}

int tp_sink_open_dir_at(int dfd, const char *rel, void *arg)
{
	/* O_PATH needs no read permission on the folder and is enough for the
	 * *at() calls; plain O_RDONLY is the fallback for kernels without it. */
	int rc = tp_fd_open_at(arg, dfd, rel, O_PATH | O_DIRECTORY, 0);
	if (rc == -EINVAL)
		rc = tp_fd_open_at(arg, dfd, rel, O_RDONLY | O_DIRECTORY, 0);
	return rc;
}
