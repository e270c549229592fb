#include "collector/rotate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* The files this process wrote, oldest first; held ones have an on-save
 * command running on them. */
struct rot_file {
	char *path;
	int held;
};

static struct rot_file *files;
static size_t nfiles, capfiles;
static int64_t keep_limit = -1;

static void drop_index(size_t i)
{
	free(files[i].path);
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

/* Deletes the oldest files that are not held until keep_limit remain (or
 * only held ones are left over: they go once released).  The newest file
 * always stays: it was just saved, and its own command, if any, has not
 * started yet. */
static void enforce(void)
{
	if (keep_limit <= 0)
		return;
	size_t i = 0;
	while (nfiles > (size_t)keep_limit && i + 1 < nfiles) {
		if (files[i].held) {
			i++;
			continue;
		}
		if (unlink(files[i].path) < 0 && errno != ENOENT)
			tp_warn("rotation: cannot delete %s: %s", files[i].path, strerror(errno));
		else
			tp_info("rotation: deleted %s (TRACEPROF_NUM_TRACES_TO_KEEP=%lld)",
				files[i].path, (long long)keep_limit);
		drop_index(i);
	}
}

void tp_rotate_saved(const char *path, int64_t keep)
{
	keep_limit = keep;
	if (nfiles == capfiles) {
		size_t cap = capfiles ? capfiles * 2 : 16;
		struct rot_file *f = realloc(files, cap * sizeof(*f));
		if (!f) {
			tp_warn("out of memory: %s will not take part in rotation", path);
			return;
		}
		files = f;
		capfiles = cap;
	}
	char *copy = strdup(path);
	if (!copy)
		return;
	files[nfiles++] = (struct rot_file){ copy, 0 };
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
	int rc = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	drop_index((size_t)(f - files));
	return rc;
}

void tp_rotate_forget(void)
{
	for (size_t i = 0; i < nfiles; i++)
		free(files[i].path);
	free(files);
	files = NULL;
	nfiles = capfiles = 0;
}
