/* One trace file's life in the sink: its folder and temporary file opened,
 * bytes handed to the codec, its final name, and its removal on an abort.
 * The other jobs: format/sink_int.h. */
/* O_PATH. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "format/sink_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/fd.h"
#include "common/log.h"

/* Distinguishes the temporary files of several sinks open at once in one
 * process (the pid distinguishes processes).  A relaxed counter: it orders
 * nothing, only its values must differ. */
static atomic_uint sk_counter;

/* name plus the compression's extension into s->final.  Returns 0 or
 * -errno (-EINVAL for a bad name). */
static int sk_final_name(struct tp_sink *s, const char *name)
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

/* Opens folder (relative ones against the anchor, see tp_sink_anchor()) into
 * s->dir, and remembers its absolute path for a reopen.  Returns 0 or
 * -errno. */
static int sk_open_dir(struct tp_sink *s, const char *folder)
{
	char start[PATH_MAX];
	/* Its path from the anchored root, as opened here: what
	 * tp_sink_in_dir() reaches it by.  The kernel's name for it (/proc)
	 * would be relative to a jail's root after a chroot. */
	const char *given = tp_sink_abs_path(folder, start, sizeof(start));
	int rc = tp_sink_at(folder, tp_sink_open_dir_at, &s->dir);
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

int tp_sink_open(struct tp_sink **out, const char *folder, const char *name, int compress,
		 int zstd_level, int overwrite)
{
	*out = NULL;
	if (!folder || !folder[0])
		return -EINVAL;
	if (compress != TP_SINK_PLAIN && compress != TP_SINK_ZSTD && compress != TP_SINK_GZIP)
		return -EINVAL;

	struct tp_sink *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->file.fd = -1;
	s->dir.fd = -1;
	s->live = -1;
	s->compress = compress;
	s->overwrite = overwrite;
	tp_digest_init(&s->digest);
	int rc = sk_final_name(s, name);
	if (rc < 0) {
		free(s);
		return rc;
	}
	s->folder = strdup(folder);
	rc = s->folder ? 0 : -ENOMEM;
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
	/* A shared lock held as long as a process has the file open: the
	 * kernel drops it at any death.  collector/cut.c (the next run's
	 * finishing of cut windows) takes a file whose lock it cannot get as
	 * one a live process writes, whatever /proc shows (a process in another
	 * pid namespace sharing the folder).  Without flock (some file
	 * systems) nothing changes here. */
	(void)flock(s->file.fd, LOCK_SH | LOCK_NB);
	/* Listed for _exit(), which removes it (sink_live.c); without the
	 * folder's absolute path (no /proc) it is not, and stays as before. */
	if (s->dir_abs)
		s->live = tp_sink_live_add(s->dir_abs, s->tmp);
	/* From now on the folder is reached by its path (tp_sink_in_dir()). */
	if (s->dir_abs)
		tp_fd_close(&s->dir);
	rc = tp_sink_codec_init(s, zstd_level);
	if (rc)
		goto fail;
	*out = s;
	return 0;
fail:
	tp_sink_abort(s);
	return rc;
}

int tp_sink_set_name(struct tp_sink *s, const char *name)
{
	return sk_final_name(s, name);
}

int tp_sink_write(struct tp_sink *s, const void *p, size_t n)
{
	if (s->error)
		return s->error;
	tp_digest_add(&s->digest, p, n);
	int rc = tp_sink_codec_write(s, p, n);
	if (rc)
		s->error = rc;
	return rc;
}

const struct tp_digest *tp_sink_digest(const struct tp_sink *s)
{
	return &s->digest;
}

int tp_sink_flush(struct tp_sink *s)
{
	if (s->error)
		return s->error;
	int rc = tp_sink_codec_flush(s);
	if (rc)
		s->error = rc;
	return rc;
}

uint64_t tp_sink_bytes_out(const struct tp_sink *s)
{
	return s->bytes_out;
}

static int sk_unlink_at(int dfd, const char *a, const char *b, void *arg)
{
	(void)b;
	(void)arg;
	return unlinkat(dfd, a, 0) == 0 ? 0 : -errno;
}

void tp_sink_abort(struct tp_sink *s)
{
	if (!s)
		return;
	tp_fd_close(&s->file);
	tp_sink_live_del(s->live);
	if (s->tmp[0])
		tp_sink_in_dir(s, s->tmp, NULL, sk_unlink_at, NULL);
	tp_sink_codec_free(s);
	tp_fd_close(&s->dir);
	free(s->folder);
	free(s->dir_abs);
	free(s);
}
