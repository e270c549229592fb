#include "collector/rotate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

static char **files;
static size_t nfiles, capfiles;

static void drop_index(size_t i)
{
	free(files[i]);
	memmove(&files[i], &files[i + 1], (nfiles - i - 1) * sizeof(*files));
	nfiles--;
}

void tp_rotate_saved(const char *path, int64_t keep)
{
	if (nfiles == capfiles) {
		size_t cap = capfiles ? capfiles * 2 : 16;
		char **f = realloc(files, cap * sizeof(*f));
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
	files[nfiles++] = copy;
	/* keep == 0 is Composer's "delete right after upload": the on-save
	 * plugin (collector/onsave.c) deletes each file with tp_rotate_remove()
	 * once TRACEPROF_ON_SAVE's command succeeded, or right after the save
	 * when there is no command (Composer's upload is then a no-op).  A file
	 * whose upload failed is kept, so rotation leaves keep == 0 alone. */
	if (keep <= 0)
		return;
	size_t k = (size_t)keep;
	while (nfiles > k) {
		if (unlink(files[0]) < 0 && errno != ENOENT)
			tp_warn("rotation: cannot delete %s: %s", files[0], strerror(errno));
		else
			tp_info("rotation: deleted %s (TRACEPROF_NUM_TRACES_TO_KEEP=%lld)", files[0],
				(long long)keep);
		drop_index(0);
	}
}

int tp_rotate_remove(const char *path)
{
	for (size_t i = 0; i < nfiles; i++) {
		if (strcmp(files[i], path))
			continue;
		int rc = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
		drop_index(i);
		return rc;
	}
	return -ENOENT;
}


void tp_rotate_forget(void)
{
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	files = NULL;
	nfiles = capfiles = 0;
}
