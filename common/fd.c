#include "common/fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

/* Descriptors the program took from us; relaxed: a statistic. */
static _Atomic unsigned long fd_lost_count;

/* The lowest number to move our descriptors to.  Computed at each move (one
 * getrlimit), because the program may lower its limit at any time; a floor
 * at or above the limit would make F_DUPFD_CLOEXEC fail with EINVAL. */
static int fd_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return TP_FD_FLOOR;
	if (rl.rlim_cur > 2 * TP_FD_FLOOR)
		return TP_FD_FLOOR;
	return (int)(rl.rlim_cur / 2);
}

static int fd_same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int tp_fd_adopt(struct tp_fd *f, int fd)
{
	f->fd = -1;
	if (fd < 0)
		return -EBADF;
	int floor = fd_floor();
	if (fd < floor) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, floor);
		/* No room up there (EMFILE, EINVAL): keep the low number, still
		 * checked before each use. */
		if (hi >= 0) {
			/* Close the low number only while it is still the
			 * file we moved: the program may have closed it and
			 * opened its own on it (tp_fd_open_at() also checks
			 * the move itself). */
			struct stat lo, up;
			if (fstat(hi, &up) == 0 && fstat(fd, &lo) == 0 && fd_same(&lo, &up))
				close(fd);
			fd = hi;
		}
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	f->fd = fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

/* Moves fd (just opened from dirfd/path) high, into f, checked against want
 * (the identity of the file path names).  Returns 0, or -EAGAIN when fd is
 * not (or no longer) that file: the program closed our number and opened a
 * file of its own on it, which is left open. */
static int fd_adopt_checked(struct tp_fd *f, int fd, const struct stat *want)
{
	struct stat st;
	f->fd = -1;
	/*A*/ if (fstat(fd, &st) != 0 || !fd_same(&st, want))
		return -EAGAIN;
	int hi = -1, floor = fd_floor();
	if (fd < floor)
		hi = fcntl(fd, F_DUPFD_CLOEXEC, floor);
	if (hi < 0) {
		/* Already high, or no room up there: keep the number, still
		 * checked before each use. */
		f->fd = fd;
		f->dev = want->st_dev;
		f->ino = want->st_ino;
		return 0;
	}
	/*B*/ if (fstat(hi, &st) != 0 || !fd_same(&st, want)) {
		/* The program's file took the number between A and the move:
		 * hi is our copy of it, closing that leaves the program's
		 * descriptor open. */
		close(hi);
		return -EAGAIN;
	}
	/*C*/ if (fstat(fd, &st) == 0 && fd_same(&st, want))
		close(fd); /* the instant between C and here is the window left */
	f->fd = hi;
	f->dev = want->st_dev;
	f->ino = want->st_ino;
	return 0;
}

int tp_fd_open_at(struct tp_fd *f, int dirfd, const char *path, int oflags, mode_t mode)
{
	int at_flags = (oflags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0;
	f->fd = -1;
	/* Bounded: each retry means the program opened a file in the instant
	 * between our open and our check; a fourth time is not worth waiting
	 * for. */
	for (int tries = 0; tries < 3; tries++) {
		/* The file's identity is taken after the open (a file we
		 * create has none before), or before it when the name is gone
		 * by then (a thread's /proc entry when the thread ended).
		 * Neither: nothing tells whether the number is still ours (the
		 * program closed our folder's descriptor, most likely with all
		 * the others): it is left open, never closed blindly. */
		struct stat pre, want;
		int have_pre = fstatat(dirfd, path, &pre, at_flags) == 0;
		int fd = openat(dirfd, path, oflags | O_CLOEXEC, mode);
		if (fd < 0)
			return -errno;
		int rc = -EAGAIN;
		if (fstatat(dirfd, path, &want, at_flags) == 0)
			rc = fd_adopt_checked(f, fd, &want);
		else if (have_pre)
			rc = fd_adopt_checked(f, fd, &pre);
		if (rc != -EAGAIN)
			return rc;
		tp_fd_lost("a file just opened", fd);
		/* The file exists now, created by us. */
		oflags &= ~(O_CREAT | O_EXCL | O_TRUNC);
	}
	return -EBADF;
}

int tp_fd_ours(const struct tp_fd *f)
{
	struct stat st;
	if (f->fd < 0 || fstat(f->fd, &st) != 0)
		return 0;
	return st.st_dev == f->dev && st.st_ino == f->ino;
}

int tp_fd_close(struct tp_fd *f)
{
	if (f->fd < 0)
		return 0;
	int rc = 0;
	if (tp_fd_ours(f)) {
		/* EINTR: Linux has closed it anyway; retrying could close
		 * someone else's. */
		close(f->fd);
	} else {
		tp_fd_lost("a descriptor", f->fd);
		rc = -1;
	}
	f->fd = -1;
	return rc;
}

void tp_fd_forget(struct tp_fd *f)
{
	f->fd = -1;
}

unsigned long tp_fd_lost(const char *what, int fd)
{
	unsigned long n = atomic_fetch_add_explicit(&fd_lost_count, 1, memory_order_relaxed) + 1;
	if (n == 1)
		tp_warn("the program closed or replaced descriptor %d (%s of traceprof's); "
			"traceprof no longer uses or closes that number and reopens what it can",
			fd, what);
	return n;
}

ssize_t tp_fd_pread_text(int fd, char *buf, size_t size)
{
	ssize_t n;
	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		buf[0] = '\0';
		return -1;
	}
	buf[n] = '\0';
	return n;
}

ssize_t tp_fd_read_small(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	struct tp_fd f;
	if (tp_fd_open_at(&f, AT_FDCWD, path, O_RDONLY, 0) < 0)
		return -1;
	ssize_t n = tp_fd_pread_text(f.fd, buf, size);
	tp_fd_close(&f);
	return n;
}
