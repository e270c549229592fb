#include "collector/rotate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* A folder files were written to; shared by its files (one descriptor per
 * folder, not per file).  Freed with its last file. */
struct rot_dir {
	struct tp_fd fd;
	int refs;
};

/* The files this process wrote, oldest first; held ones have an on-save
 * command running on them. */
struct rot_file {
	char *path;
	char *name;	     /* in dir */
	struct rot_dir *dir; /* NULL: delete by path */
	uint64_t window;
	int held;
};

static struct rot_file *files;
static size_t nfiles, capfiles;
static int64_t keep_limit = -1;

static void dir_put(struct rot_dir *d)
{
	if (d && --d->refs == 0) {
		tp_fd_close(&d->fd);
		free(d);
	}
}

/* A folder entry for *fd (taken over): an existing one for the same folder,
 * or a new one.  NULL when there is none (the caller deletes by path). */
static struct rot_dir *dir_get(struct tp_fd *fd)
{
	if (!fd || fd->fd < 0)
		return NULL;
	for (size_t i = 0; i < nfiles; i++) {
		struct rot_dir *d = files[i].dir;
		if (d && d->fd.dev == fd->dev && d->fd.ino == fd->ino && tp_fd_ours(&d->fd)) {
			tp_fd_close(fd);
			d->refs++;
			return d;
		}
	}
	struct rot_dir *d = malloc(sizeof(*d));
	if (!d) {
		tp_fd_close(fd);
		return NULL;
	}
	d->fd = *fd;
	d->refs = 1;
	fd->fd = -1;
	return d;
}

static void drop_index(size_t i)
{
	free(files[i].path);
	free(files[i].name);
	dir_put(files[i].dir);
	memmove(&files[i], &files[i + 1], (nfiles - i - 1) * sizeof(*files));
	nfiles--;
}

static struct rot_file *find(const char *path)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i].path, path))
			return &files[i];
	return NULL;
}

/* Deletes one file: relative to its folder's descriptor while that is still
 * ours; a folder whose descriptor the program took is not guessed at by
 * name (the file stays, with a warning).  Returns 0 or -errno. */
static int delete_file(const struct rot_file *f)
{
	if (!f->dir)
		return unlink(f->path) < 0 && errno != ENOENT ? -errno : 0;
	if (!tp_fd_ours(&f->dir->fd)) {
		tp_fd_lost("a trace folder", f->dir->fd.fd);
		return -EBADF;
	}
	return unlinkat(f->dir->fd.fd, f->name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

static size_t count_windows(void)
{
	size_t n = 0;
	for (size_t i = 0; i < nfiles; i++)
		if (i == 0 || files[i].window != files[i - 1].window)
			n++;
	return n;
}

/* Deletes the oldest windows that have no held file until keep_limit
 * windows remain (or only held ones are left over: they go once released).
 * The newest window always stays: its last file was just saved, and its
 * command, if any, has not started yet.  Files of one window are saved one
 * after the other, so a window's files are adjacent in the list. */
static void enforce(void)
{
	if (keep_limit <= 0 || !nfiles)
		return;
	size_t nwin = count_windows();
	size_t i = 0;
	uint64_t newest = files[nfiles - 1].window;
	while (nwin > (size_t)keep_limit && i < nfiles && files[i].window != newest) {
		uint64_t w = files[i].window;
		size_t end = i;
		int held = 0;
		while (end < nfiles && files[end].window == w)
			held |= files[end++].held;
		if (held) {
			i = end;
			continue;
		}
		for (size_t k = i; k < end; k++) {
			int rc = delete_file(&files[i]);
			if (rc < 0)
				tp_warn("rotation: cannot delete %s: %s", files[i].path,
					strerror(-rc));
			else
				tp_info("rotation: deleted %s (TRACEPROF_NUM_TRACES_TO_KEEP=%lld "
					"windows)",
					files[i].path, (long long)keep_limit);
			drop_index(i);
		}
		nwin--;
	}
}

void tp_rotate_saved(const char *path, struct tp_fd *dir, const char *name, uint64_t window,
		     int64_t keep)
{
	keep_limit = keep;
	if (nfiles == capfiles) {
		size_t cap = capfiles ? capfiles * 2 : 16;
		struct rot_file *f = realloc(files, cap * sizeof(*f));
		if (!f) {
			tp_warn("out of memory: %s will not take part in rotation", path);
			if (dir)
				tp_fd_close(dir);
			return;
		}
		files = f;
		capfiles = cap;
	}
	char *copy = strdup(path);
	char *ncopy = name ? strdup(name) : NULL;
	if (!copy || (name && !ncopy)) {
		free(copy);
		free(ncopy);
		if (dir)
			tp_fd_close(dir);
		return;
	}
	/* Keep all (keep < 0): nothing is ever deleted, so no descriptor is
	 * held (a folder per window, e.g. "out/{step}", would hold one each). */
	struct rot_dir *d = ncopy && keep >= 0 ? dir_get(dir) : NULL;
	if (!d && dir)
		tp_fd_close(dir);
	files[nfiles++] = (struct rot_file){ copy, ncopy, d, window, 0 };
	/* keep == 0 is Composer's "delete right after upload": the on-save
	 * plugin (collector/onsave.c) deletes each file with tp_rotate_remove()
	 * once TRACEPROF_ON_SAVE's command succeeded, or right after the save
	 * when there is no command (Composer's upload is then a no-op).  A file
	 * whose upload failed is kept, so rotation leaves keep == 0 alone. */
	enforce();
}

int tp_rotate_hold(const char *path, int held)
{
	struct rot_file *f = find(path);
	if (!f)
		return 0;
	f->held = held;
	if (held)
		return 0;
	enforce();
	return find(path) == NULL;
}

int tp_rotate_remove(const char *path)
{
	struct rot_file *f = find(path);
	if (!f)
		return -ENOENT;
	int rc = delete_file(f);
	drop_index((size_t)(f - files));
	return rc;
}

void tp_rotate_forget(void)
{
	files = NULL;
	nfiles = capfiles = 0;
	keep_limit = -1;
}
