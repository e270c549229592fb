/* O_PATH, renameat(). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "format/sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "common/fd.h"
#include "common/log.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* gzip is the compatibility choice (every viewer reads it), so it gets the
 * fastest level: the flush thread must keep up with the rings.  zstd is the
 * one with a configurable level. */
#define SK_GZIP_LEVEL 1

/* Unique suffixes tried before giving up with EEXIST: enough for any sane
 * number of reruns into the same folder, and bounded so that a folder full of
 * traces cannot make close() loop for long. */
#define SK_MAX_SUFFIX 10000

struct tp_sink {
	/* Both high and checked before each use (common/fd.h): the program
	 * may close every descriptor it did not open.  The folder's is held
	 * only while the sink opens, or for good when its absolute path is
	 * unknown (no /proc); its identity (dev, ino) stays after it is
	 * closed (sk_name_at()). */
	struct tp_fd dir;
	struct tp_fd file;
	char *dir_abs; /* the folder's absolute path, to reach it again */
	int compress;
	int overwrite;
	int error; /* first -errno; sticky */
	uint64_t bytes_out;
	ZSTD_CStream *zc;
	/* libzstd starts its worker threads on the first compression call:
	 * that call runs with every signal blocked (see sk_zstd()). */
	int zstd_workers_pending;
	z_stream gz;
	int gz_ready;
	unsigned char *obuf; /* compressed bytes on their way to the file */
	size_t obuf_cap;
	char *folder; /* as given, for the final path and messages */
	char final[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
};

/* Distinguishes the temporary files of several sinks open at once in one
 * process (the pid distinguishes processes). */
static atomic_uint sk_counter;

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

/* path as (directory descriptor, name) for the *at() calls: from the
 * anchored root, relative paths joined to the start directory first (buf
 * holds the result).  Returns the descriptor (AT_FDCWD without an anchor)
 * and sets *rel, or -1. */
static int sk_at(const char *path, char *buf, size_t size, const char **rel)
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

int tp_sink_mkdirs(const char *folder)
{
	if (!folder || !folder[0])
		return -ENOENT;
	size_t n = strlen(folder);
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	char p[PATH_MAX], buf[PATH_MAX];
	int base = sk_at(folder, buf, sizeof(buf), &folder);
	if (base == -1)
		return -ENOENT;
	n = strlen(folder);
	memcpy(p, folder, n + 1);

	/* Walk the components left to right, creating each; a component that
	 * exists is fine if it is a folder (or a link to one). */
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		if (p[i - 1] == '/')
			continue; /* "//" or a trailing slash: nothing new to create */
		char saved = p[i];
		p[i] = '\0';
		if (mkdirat(base, p, 0755) != 0) {
			int err = errno;
			struct stat st;
			/* mkdir reports EEXIST for an existing name, but some file
			 * systems report EACCES or EROFS first, so look before
			 * deciding. */
			if (fstatat(base, p, &st, 0) == 0) {
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

/* Where `name` in the sink's folder is, for an *at() call: returns the
 * descriptor to start from (AT_FDCWD without an anchor) and sets *rel
 * (written to buf), or returns -1.  The folder is not held while the window
 * records: one descriptor fewer for a program under a small RLIMIT_NOFILE
 * (issue 30).  It is reached from the anchored root (tp_sink_anchor(), so
 * a chroot does not move it) by its absolute path, and only while that
 * path still names the folder the sink opened (st_dev, st_ino): a folder
 * renamed or replaced since is not written into.  Without the absolute
 * path, the folder's descriptor is held from the start and checked to be
 * still ours. */
static int sk_name_at(struct tp_sink *s, const char *name, char *buf, size_t size,
		      const char **rel)
{
	if (s->dir.fd >= 0) {
		*rel = name;
		if (tp_fd_ours(&s->dir))
			return s->dir.fd;
		/* Taken by the program: by its path from here on, when it has one
		 * (the identity kept by tp_fd_forget() checks it). */
		tp_fd_lost("a trace folder", s->dir.fd);
		tp_fd_forget(&s->dir);
	}
	if (!s->dir_abs) {
		*rel = name;
		return -1;
	}
	char dbuf[PATH_MAX];
	const char *drel;
	struct stat st;
	int base = sk_at(s->dir_abs, dbuf, sizeof(dbuf), &drel);
	int ok = base != -1 && fstatat(base, drel, &st, 0) == 0;
	if (!ok && base >= 0 && errno == EBADF) {
		/* The program closed the root's number between its check and the
		 * call: sk_root_fd() sees it now and opens the root again. */
		base = sk_at(s->dir_abs, dbuf, sizeof(dbuf), &drel);
		ok = base != -1 && fstatat(base, drel, &st, 0) == 0;
	}
	if (!ok || !S_ISDIR(st.st_mode) || st.st_dev != s->dir.dev || st.st_ino != s->dir.ino)
		return -1;
	int n = snprintf(buf, size, "%s/%s", drel, name);
	if (n < 0 || (size_t)n >= size)
		return -1;
	*rel = buf;
	return base;
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
	char buf[PATH_MAX];
	const char *rel;
	int dfd = s->tmp[0] ? sk_name_at(s, s->tmp, buf, sizeof(buf), &rel) : -1;
	if (dfd == -1)
		return -1;
	struct tp_fd again;
	if (tp_fd_open_at(&again, dfd, rel, O_WRONLY | O_NOFOLLOW, 0) < 0)
		return -1;
	if (again.dev != s->file.dev || again.ino != s->file.ino ||
	    lseek(again.fd, (off_t)s->bytes_out, SEEK_SET) != (off_t)s->bytes_out) {
		tp_fd_close(&again);
		return -1;
	}
	s->file = again;
	return s->file.fd;
}

static int sk_out(struct tp_sink *s, const void *p, size_t n)
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

static void sk_free(struct tp_sink *s)
{
	if (s->zc)
		ZSTD_freeCStream(s->zc);
	if (s->gz_ready)
		deflateEnd(&s->gz);
	tp_fd_close(&s->file);
	tp_fd_close(&s->dir);
	free(s->obuf);
	free(s->folder);
	free(s->dir_abs);
	free(s);
}

/* Opens folder (relative ones against the anchor, see tp_sink_anchor()) into
 * s->dir, and remembers its absolute path for a reopen.  Returns 0 or
 * -errno. */
static int sk_open_dir(struct tp_sink *s, const char *folder)
{
	char buf[PATH_MAX], start[PATH_MAX];
	/* Its path from the anchored root, as opened here: what
	 * sk_name_at() reaches it by.  The kernel's name for it (/proc) would
	 * be relative to a jail's root after a chroot. */
	const char *given = tp_sink_abs_path(folder, start, sizeof(start));
	int base = sk_at(folder, buf, sizeof(buf), &folder);
	if (base == -1)
		return -ENOENT;
	/* O_PATH needs no read permission on the folder and is enough for the
	 * *at() calls; plain O_RDONLY is the fallback for kernels without it. */
	int rc = tp_fd_open_at(&s->dir, base, folder, O_PATH | O_DIRECTORY, 0);
	if (rc == -EINVAL)
		rc = tp_fd_open_at(&s->dir, base, folder, O_RDONLY | O_DIRECTORY, 0);
	if (rc < 0)
		return rc;
	if (given[0] == '/') {
		s->dir_abs = strdup(given);
		if (s->dir_abs)
			return 0;
	}
	/* Not anchored, the folder relative: the kernel's name for it,
	 * absolute whatever the working directory is later.  Without /proc,
	 * the folder's descriptor stays held (usable while it is ours). */
	char link[64], abs[PATH_MAX];
	tp_format(link, sizeof(link), "/proc/self/fd/%d", s->dir.fd);
	ssize_t n = readlink(link, abs, sizeof(abs) - 1);
	if (n > 0 && abs[0] == '/') {
		abs[n] = '\0';
		s->dir_abs = strdup(abs);
	}
	return 0;
}

static int sk_init_codec(struct tp_sink *s, int zstd_level)
{
	if (s->compress == TP_SINK_ZSTD) {
		s->zc = ZSTD_createCStream();
		if (!s->zc)
			return -ENOMEM;
		/* nbWorkers 0: compress on the calling (flush) thread, unless
		 * TRACEPROF_ZSTD_THREADS asks for more (tp_sink_zstd_threads()). */
		if (ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_compressionLevel,
							 zstd_level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_nbWorkers, 0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_checksumFlag, 1)))
			return -EINVAL;
		s->obuf_cap = ZSTD_CStreamOutSize();
	} else if (s->compress == TP_SINK_GZIP) {
		memset(&s->gz, 0, sizeof(s->gz));
		/* windowBits 15 + 16: a gzip header and trailer, not raw zlib. */
		int rc = deflateInit2(&s->gz, SK_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
				      Z_DEFAULT_STRATEGY);
		if (rc != Z_OK)
			return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
		s->gz_ready = 1;
		s->obuf_cap = 128 * 1024;
	} else {
		return 0;
	}
	s->obuf = malloc(s->obuf_cap);
	return s->obuf ? 0 : -ENOMEM;
}

int tp_sink_open(struct tp_sink **out, const char *folder, const char *name, int compress,
		 int zstd_level, int overwrite)
{
	*out = NULL;
	if (!folder || !folder[0] || !name || !name[0] || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (compress != TP_SINK_PLAIN && compress != TP_SINK_ZSTD && compress != TP_SINK_GZIP)
		return -EINVAL;
	const char *ext = compress == TP_SINK_ZSTD ? ".zst" : compress == TP_SINK_GZIP ? ".gz" : "";
	size_t nlen = strlen(name), elen = strlen(ext);
	if (nlen + elen > NAME_MAX)
		return -ENAMETOOLONG;

	struct tp_sink *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->file.fd = -1;
	s->dir.fd = -1;
	s->compress = compress;
	s->overwrite = overwrite;
	memcpy(s->final, name, nlen);
	memcpy(s->final + nlen, ext, elen + 1);
	s->folder = strdup(folder);
	int rc = s->folder ? 0 : -ENOMEM;
	if (!rc)
		rc = sk_open_dir(s, folder);
	if (rc < 0)
		goto fail;

	/* ".<final>.tmp.<pid>.<n>": hidden, next to the final name (so that the
	 * rename stays within one file system), unique per process and sink.
	 * O_EXCL|O_NOFOLLOW: never open something planted at that name.  A long
	 * final name is shortened here only; the counter keeps it unique. */
	rc = -EEXIST;
	for (int tries = 0; tries < 16; tries++) {
		char tail[64];
		int tl = tp_format(tail, sizeof(tail), ".tmp.%ld.%u", (long)getpid(),
				   atomic_fetch_add_explicit(&sk_counter, 1, memory_order_relaxed));
		size_t keep = strlen(s->final);
		if (1 + keep + (size_t)tl > NAME_MAX)
			keep = NAME_MAX - 1 - (size_t)tl;
		s->tmp[0] = '.';
		memcpy(s->tmp + 1, s->final, keep);
		memcpy(s->tmp + 1 + keep, tail, (size_t)tl + 1);
		rc = tp_fd_open_at(&s->file, s->dir.fd, s->tmp,
				   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
		if (rc != -EEXIST)
			break;
	}
	if (rc) {
		/* -EBADF: created, but the program took the number every time
		 * (tp_fd_open_at()): the file is ours to remove.  Otherwise
		 * nothing of ours is there. */
		if (rc != -EBADF)
			s->tmp[0] = '\0';
		goto fail;
	}
	/* From now on the folder is reached by its path (sk_name_at()). */
	if (s->dir_abs)
		tp_fd_close(&s->dir);
	rc = sk_init_codec(s, zstd_level);
	if (rc)
		goto fail;
	*out = s;
	return 0;
fail:
	tp_sink_abort(s);
	return rc;
}

static int sk_zstd(struct tp_sink *s, const void *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { p, n, 0 };
	for (;;) {
		ZSTD_outBuffer o = { s->obuf, s->obuf_cap, 0 };
		size_t left;
		if (__builtin_expect(s->zstd_workers_pending, 0)) {
			/* The worker threads start in this call and inherit this
			 * thread's mask: all blocked, so that they never run the
			 * program's signal handlers (the final save may run on a
			 * program thread). */
			sigset_t all, old;
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			left = ZSTD_compressStream2(s->zc, &o, &in, mode);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			s->zstd_workers_pending = 0;
		} else {
			left = ZSTD_compressStream2(s->zc, &o, &in, mode);
		}
		if (ZSTD_isError(left))
			return -EIO;
		int rc = sk_out(s, s->obuf, o.pos);
		if (rc)
			return rc;
		/* continue: done when the input is consumed (the library keeps the
		 * rest); end: done when nothing is left to flush. */
		if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
			return 0;
	}
}

static int sk_gzip(struct tp_sink *s, const void *p, size_t n, int flush)
{
	const unsigned char *c = p;
	for (;;) {
		/* avail_in is a uInt: feed huge inputs in pieces. */
		if (s->gz.avail_in == 0 && n) {
			uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
			s->gz.next_in = (Bytef *)c;
			s->gz.avail_in = k;
			c += k;
			n -= k;
		}
		s->gz.next_out = s->obuf;
		s->gz.avail_out = (uInt)s->obuf_cap;
		int zrc = deflate(&s->gz, n ? Z_NO_FLUSH : flush);
		if (zrc == Z_STREAM_ERROR)
			return -EIO;
		int rc = sk_out(s, s->obuf, s->obuf_cap - s->gz.avail_out);
		if (rc)
			return rc;
		if (flush == Z_FINISH) {
			if (zrc == Z_STREAM_END)
				return 0;
		} else if (s->gz.avail_in == 0 && n == 0 && s->gz.avail_out != 0) {
			return 0;
		}
	}
}

int tp_sink_zstd_threads(struct tp_sink *s, int n)
{
	if (s->compress != TP_SINK_ZSTD || n <= 0)
		return 0;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_nbWorkers, n)))
		return -ENOTSUP;
	s->zstd_workers_pending = 1;
	return 0;
}

int tp_sink_write(struct tp_sink *s, const void *p, size_t n)
{
	if (s->error)
		return s->error;
	int rc;
	if (s->compress == TP_SINK_ZSTD)
		rc = sk_zstd(s, p, n, ZSTD_e_continue);
	else if (s->compress == TP_SINK_GZIP)
		rc = sk_gzip(s, p, n, Z_NO_FLUSH);
	else
		rc = sk_out(s, p, n);
	if (rc)
		s->error = rc;
	return rc;
}

uint64_t tp_sink_bytes_out(const struct tp_sink *s)
{
	return s->bytes_out;
}

/* "a.b.json" + k -> "a.b.k.json": the number goes before ".json" (with its
 * ".gz"/".zst"), else before the compression extension, else at the end, so
 * that the file keeps opening in the same tools.  Returns 0 or -ENAMETOOLONG. */
static int sk_suffixed(char *dst, const struct tp_sink *s, unsigned k)
{
	static const char *const tails[] = { ".json", ".json.gz", ".json.zst" };
	size_t n = strlen(s->final);
	size_t cut = n;
	int found = 0;
	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		size_t tl = strlen(tails[t]);
		if (n > tl && !strcmp(s->final + n - tl, tails[t])) {
			cut = n - tl;
			found = 1;
			break;
		}
	}
	if (!found && s->compress != TP_SINK_PLAIN)
		cut = n - (s->compress == TP_SINK_ZSTD ? 4 : 3);
	char num[16];
	int nl = tp_format(num, sizeof(num), ".%u", k);
	if (n + (size_t)nl > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(dst, s->final, cut);
	memcpy(dst + cut, num, (size_t)nl);
	memcpy(dst + cut + nl, s->final + cut, n - cut + 1);
	return 0;
}

/* Moves the temporary file to `name` unless something exists there.  Returns
 * 0, -EEXIST, or another -errno. */
static int sk_link_noreplace(struct tp_sink *s, const char *final)
{
	char tbuf[PATH_MAX], nbuf[PATH_MAX];
	const char *tmp, *name;
	int dfd = sk_name_at(s, s->tmp, tbuf, sizeof(tbuf), &tmp);
	if (dfd == -1 || sk_name_at(s, final, nbuf, sizeof(nbuf), &name) != dfd)
		return -EBADF;
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, dfd, tmp, dfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	/* No renameat2 (old kernel, or a file system without NOREPLACE): a hard
	 * link fails with EEXIST just as atomically. */
	if (linkat(dfd, tmp, dfd, name, 0) == 0) {
		unlinkat(dfd, tmp, 0);
		return 0;
	}
	if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	/* No hard links either (FAT, some FUSE): check, then rename.  Another
	 * writer can slip in between the two; this is the last resort. */
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	if (errno != ENOENT)
		return -errno;
	return renameat(dfd, tmp, dfd, name) == 0 ? 0 : -errno;
}

static int sk_path(char *path, size_t size, const char *folder, const char *name)
{
	if (!path || size == 0)
		return 0;
	size_t fl = strlen(folder);
	while (fl > 1 && folder[fl - 1] == '/')
		fl--; /* "out/" + "x" is "out/x", but "/" + "x" is "/x" */
	int slash = folder[fl - 1] != '/';
	size_t nl = strlen(name);
	if (fl + (size_t)slash + nl + 1 > size)
		return -ENAMETOOLONG;
	memcpy(path, folder, fl);
	if (slash)
		path[fl] = '/';
	memcpy(path + fl + slash, name, nl + 1);
	return 0;
}

/* Hands the folder's descriptor (opened again when not held; -1 when that
 * fails or finds another folder: rotation then deletes by path) and the
 * final name to the caller (for rotation), then frees s. */
static void sk_done(struct tp_sink *s, const char *name, struct tp_fd *dir, char *name_out)
{
	if (dir && s->dir.fd < 0 && s->dir_abs) {
		char buf[PATH_MAX];
		const char *rel;
		struct tp_fd was = s->dir;
		int base = sk_at(s->dir_abs, buf, sizeof(buf), &rel);
		if (base != -1 && tp_fd_open_at(&s->dir, base, rel, O_PATH | O_DIRECTORY, 0) == 0 &&
		    (s->dir.dev != was.dev || s->dir.ino != was.ino))
			tp_fd_close(&s->dir);
	}
	if (dir) {
		*dir = s->dir;
		s->dir.fd = -1;
	}
	if (name_out)
		memcpy(name_out, name, strlen(name) + 1);
	tp_sink_abort(s);
}

int tp_sink_close(struct tp_sink *s, char *path, size_t size)
{
	return tp_sink_close_at(s, path, size, NULL, NULL);
}

int tp_sink_close_at(struct tp_sink *s, char *path, size_t size, struct tp_fd *dir,
		     char *name_out)
{
	if (dir)
		dir->fd = -1;
	int rc = s->error;
	if (!rc && s->compress == TP_SINK_ZSTD)
		rc = sk_zstd(s, NULL, 0, ZSTD_e_end);
	else if (!rc && s->compress == TP_SINK_GZIP)
		rc = sk_gzip(s, NULL, 0, Z_FINISH);
	/* No fsync (too slow for the flush thread), but close() is where NFS and
	 * quota errors show up.  EINTR: Linux has closed the descriptor anyway
	 * and retrying could close someone else's; treat it as done. */
	if (s->file.fd >= 0 && !tp_fd_ours(&s->file)) {
		/* Our bytes are in the file whatever became of the number. */
		tp_fd_lost("a trace file", s->file.fd);
		tp_fd_forget(&s->file);
	} else if (s->file.fd >= 0 && close(s->file.fd) != 0 && errno != EINTR && !rc) {
		rc = -errno;
	}
	s->file.fd = -1;
	if (rc)
		goto fail;

	char name[NAME_MAX + 1];
	if (s->overwrite) {
		char tbuf[PATH_MAX], nbuf[PATH_MAX];
		const char *tmp = NULL, *fin = NULL;
		rc = sk_path(path, size, s->folder, s->final);
		int dfd = rc ? -1 : sk_name_at(s, s->tmp, tbuf, sizeof(tbuf), &tmp);
		if (!rc && (dfd == -1 || sk_name_at(s, s->final, nbuf, sizeof(nbuf), &fin) != dfd))
			rc = -EBADF;
		if (!rc && renameat(dfd, tmp, dfd, fin) != 0)
			rc = -errno;
		if (rc)
			goto fail;
		s->tmp[0] = '\0';
		sk_done(s, s->final, dir, name_out);
		return 0;
	}
	for (unsigned k = 0; k <= SK_MAX_SUFFIX; k++) {
		if (k == 0)
			memcpy(name, s->final, strlen(s->final) + 1);
		else if ((rc = sk_suffixed(name, s, k)) != 0)
			goto fail;
		/* Check the path fits first: after the rename, failing would
		 * leave a file the caller does not know about. */
		if ((rc = sk_path(path, size, s->folder, name)) != 0)
			goto fail;
		rc = sk_link_noreplace(s, name);
		if (rc == -EEXIST)
			continue;
		if (rc)
			goto fail;
		s->tmp[0] = '\0';
		if (k) {
			/* Both paths in full, so that the user can find the new file
			 * (a message cut at 512 bytes still shows their starts). */
			char want[PATH_MAX], got[PATH_MAX];
			if (sk_path(want, sizeof(want), s->folder, s->final))
				memcpy(want, s->final, strlen(s->final) + 1);
			if (sk_path(got, sizeof(got), s->folder, name))
				memcpy(got, name, strlen(name) + 1);
			tp_warn("%s exists and overwrite is off; trace written to %s instead", want,
				got);
		}
		sk_done(s, name, dir, name_out);
		return 0;
	}
	rc = -EEXIST;
fail:
	tp_sink_abort(s);
	return rc;
}

void tp_sink_abort(struct tp_sink *s)
{
	if (!s)
		return;
	tp_fd_close(&s->file);
	char buf[PATH_MAX];
	const char *rel;
	int dfd = s->tmp[0] ? sk_name_at(s, s->tmp, buf, sizeof(buf), &rel) : -1;
	if (dfd != -1)
		unlinkat(dfd, rel, 0);
	sk_free(s);
}

int tp_sink_set_name(struct tp_sink *s, const char *name)
{
	if (!name || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	const char *ext = s->compress == TP_SINK_ZSTD ? ".zst"
			  : s->compress == TP_SINK_GZIP ? ".gz"
							 : "";
	size_t nlen = strlen(name), elen = strlen(ext);
	if (nlen + elen > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(s->final, name, nlen);
	memcpy(s->final + nlen, ext, elen + 1);
	return 0;
}
