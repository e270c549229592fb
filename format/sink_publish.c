/* The sink's atomic publish: the stream finished, the temporary file closed
 * and renamed to its final name, so that a reader never sees a partial
 * trace; without overwrite, never over an existing file (a unique suffix
 * instead).  See format/sink.h. */
/* renameat2's flag, O_PATH. */
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
#include <sys/syscall.h>
#include <unistd.h>

#include "common/fd.h"
#include "common/log.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Unique suffixes tried before giving up with EEXIST: enough for any sane
 * number of reruns into the same folder, and bounded so that a folder full of
 * traces cannot make close() loop for long. */
#define SK_MAX_SUFFIX 10000

size_t tp_sink_name_cut(const char *name)
{
	/* Longest first: ".pt.trace.json" wins over ".json". */
	static const char *const tails[] = {
		".pt.trace.json.zst", ".pt.trace.json.gz", ".pt.trace.json",
		".json.zst", ".json.gz", ".json",
		".pftrace.zst", ".pftrace.gz", ".pftrace",
	};
	size_t n = strlen(name);
	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		size_t tl = strlen(tails[t]);
		if (n > tl && !strcmp(name + n - tl, tails[t]))
			return n - tl;
	}
	return n;
}

/* "a.b.json" + k -> "a.b.k.json": the number goes before the readers'
 * tail (tp_sink_name_cut(): "x.pt.trace.json" -> "x.k.pt.trace.json"),
 * else before the compression extension, else at the end, so that the file
 * keeps opening in the same tools.  Returns 0 or -ENAMETOOLONG. */
static int sk_suffixed(char *dst, const struct tp_sink *s, unsigned k)
{
	size_t n = strlen(s->final);
	size_t cut = tp_sink_name_cut(s->final);
	if (cut == n && s->compress != TP_SINK_PLAIN)
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

/* Moves the temporary file tmp to name unless something exists there.
 * Returns 0, -EEXIST, or another -errno. */
static int sk_link_noreplace(int dfd, const char *tmp, const char *name, void *arg)
{
	(void)arg;
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

/* Moves the temporary file tmp to name, replacing what is there. */
static int sk_rename(int dfd, const char *tmp, const char *name, void *arg)
{
	(void)arg;
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
		struct tp_fd was = s->dir;
		if (tp_sink_at(s->dir_abs, tp_sink_open_dir_at, &s->dir) == 0 &&
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
	if (!rc)
		rc = tp_sink_codec_end(s);
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

	if (s->overwrite) {
		rc = sk_path(path, size, s->folder, s->final);
		if (!rc)
			rc = tp_sink_in_dir(s, s->tmp, s->final, sk_rename, NULL);
		if (rc)
			goto fail;
		s->tmp[0] = '\0';
		sk_done(s, s->final, dir, name_out);
		return 0;
	}
	char name[NAME_MAX + 1];
	for (unsigned k = 0; k <= SK_MAX_SUFFIX; k++) {
		if (k == 0)
			memcpy(name, s->final, strlen(s->final) + 1);
		else if ((rc = sk_suffixed(name, s, k)) != 0)
			goto fail;
		/* Check the path fits first: after the rename, failing would
		 * leave a file the caller does not know about. */
		if ((rc = sk_path(path, size, s->folder, name)) != 0)
			goto fail;
		rc = tp_sink_in_dir(s, s->tmp, name, sk_link_noreplace, NULL);
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
