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

ssize_t tp_fd_read_small(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat before, after;
	if (fstat(fd, &before) != 0) {
		/* Not ours to close any more: it was closed under us. */
		return -1;
	}
	ssize_t n = read(fd, buf, size - 1);
	/* Between open and here the program may have closed this number and
	 * opened a file of its own on it: close only what is still ours. */
	if (fstat(fd, &after) == 0 && after.st_dev == before.st_dev &&
	    after.st_ino == before.st_ino)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}
