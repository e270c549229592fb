/* Where the sink's folders are: the root and working directories of the
 * moment the flush thread started, and every *at() call on a path under
 * them (format/sink_int.h). */
/* O_PATH. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "format/sink_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fd.h"

/* Every folder is resolved from the root directory of the moment
 * tp_sink_anchor() ran, and relative ones against the working directory of
 * that moment (its absolute path): after the program's chdir(), traces still
 * go (and rotation still deletes) where they went before, and after its
 * chroot() they go to the real folder, not to one under the jail.  One
 * descriptor (the root, kept high and checked: common/fd.h), not one per
 * directory: a program under a small RLIMIT_NOFILE keeps its numbers.
 * Flush thread only (set at start, before it runs). */
static struct tp_fd sk_root = TP_FD_NONE;
static char sk_base_abs[PATH_MAX];

/* The anchored root while it is ours; when the program took its number, "/"
 * reopened and accepted only while it is the same directory (not a jail's
 * root); AT_FDCWD without an anchor; -1 when lost. */
static int sk_root_fd(void)
{
	if (sk_root.fd < 0 && !sk_root.ino)
		return AT_FDCWD;
	if (sk_root.fd >= 0 && tp_fd_ours(&sk_root))
		return sk_root.fd;
	if (sk_root.fd >= 0) {
		tp_fd_lost("the root directory at start", sk_root.fd);
		sk_root.fd = -1;
	}
	struct tp_fd again;
	if (tp_fd_open_at(&again, AT_FDCWD, "/", O_PATH | O_DIRECTORY, 0) < 0)
		return -1;
	if (again.dev != sk_root.dev || again.ino != sk_root.ino) {
		tp_fd_close(&again);
		return -1;
	}
	sk_root = again;
	return sk_root.fd;
}

/* path as (directory descriptor, name) for an *at() call: from the
 * anchored root, relative paths joined to the start directory first (buf
 * holds the result).  Returns the descriptor (AT_FDCWD without an anchor)
 * and sets *rel, or -1. */
static int sk_resolve(const char *path, char *buf, size_t size, const char **rel)
{
	const char *abs = tp_sink_abs_path(path, buf, size);
	int root = abs[0] == '/' ? sk_root_fd() : AT_FDCWD;
	if (root == AT_FDCWD || root == -1) {
		*rel = abs;
		return root;
	}
	while (*abs == '/')
		abs++;
	*rel = *abs ? abs : ".";
	return root;
}

int tp_sink_at(const char *path, tp_sink_at_fn fn, void *arg)
{
	char buf[PATH_MAX];
	const char *rel;
	int rc = -ENOENT;
	/* Two tries: the program may close the root's number after
	 * sk_root_fd() checked it and before fn's call used it; the second
	 * resolve sees that (tp_fd_ours()) and opens "/" again.  Once only:
	 * a program closing it again at once gets the error. */
	for (int tries = 0; tries < 2; tries++) {
		int dfd = sk_resolve(path, buf, sizeof(buf), &rel);
		if (dfd == -1)
			return -ENOENT;
		rc = fn(dfd, rel, arg);
		if (rc != -EBADF || dfd == AT_FDCWD || tp_fd_ours(&sk_root))
			break;
	}
	return rc;
}

int tp_sink_anchor(void)
{
	int rc = tp_fd_open_at(&sk_root, AT_FDCWD, "/", O_PATH | O_DIRECTORY, 0);
	if (rc < 0)
		return rc;
	if (!getcwd(sk_base_abs, sizeof(sk_base_abs))) {
		int err = errno;
		sk_base_abs[0] = '\0';
		return -err;
	}
	return 0;
}

const char *tp_sink_abs_path(const char *path, char *buf, size_t size)
{
	if (path[0] == '/' || !sk_base_abs[0])
		return path;
	size_t len = strlen(sk_base_abs);
	int n = snprintf(buf, size, "%s%s%s", sk_base_abs, sk_base_abs[len - 1] == '/' ? "" : "/",
			 path);
	return n > 0 && (size_t)n < size ? buf : path;
}

/* tp_sink_mkdirs()'s walk from dfd: creates each component of rel, left to
 * right; one that exists is fine if it is a folder (or a link to one).
 * Run again whole on the retry: what the first try created exists. */
static int sk_mkdirs_at(int dfd, const char *rel, void *arg)
{
	(void)arg;
	char p[PATH_MAX];
	size_t n = strlen(rel);
	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, rel, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		if (p[i - 1] == '/')
			continue; /* "//" or a trailing slash: nothing new to create */
		char saved = p[i];
		p[i] = '\0';
		if (mkdirat(dfd, p, 0755) != 0) {
			int err = errno;
			struct stat st;
			/* mkdir reports EEXIST for an existing name, but some file
			 * systems report EACCES or EROFS first, so look before
			 * deciding. */
			if (fstatat(dfd, p, &st, 0) == 0) {
				if (!S_ISDIR(st.st_mode))
					return -ENOTDIR;
			} else {
				return -err;
			}
		}
		p[i] = saved;
	}
	return 0;
}

int tp_sink_mkdirs(const char *folder)
{
	if (!folder || !folder[0])
		return -ENOENT;
	if (strlen(folder) >= PATH_MAX)
		return -ENAMETOOLONG;
	return tp_sink_at(folder, sk_mkdirs_at, NULL);
}
