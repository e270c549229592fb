/* Where the live file goes and how it is replaced (collector/live_file.h,
 * docs/live.md): the folder, the name, the temporary file renamed onto it,
 * through the root anchored at start (format/sink.h).  Flush thread only. */
#include "collector/live_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector/flush_int.h"
#include "common/fd.h"
#include "common/log.h"
#include "format/sink.h"
#include "format/template.h"

static struct {
	char path[PATH_MAX];	/* the file */
	char name[NAME_MAX + 1]; /* its name in folder (".NAME.tmp" first) */
	char folder[PATH_MAX];	/* made on the first write */
	int made;
	/* A forked child's file is listed for its _exit() to remove (format/
	 * sink.h, tp_sink_live_add()): -1 before its first write; -2 in the
	 * program itself, whose file stays "running" after an _exit(). */
	int slot;
} F;

static int lf_name(void)
{
	char host[256];
	/* '/' in a host name would make a folder. */
	snprintf(host, sizeof(host), "%s", tp_fl.vars.hostname[0] ? tp_fl.vars.hostname : "host");
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	host[200] = '\0';
	snprintf(F.name, sizeof(F.name), "%.200s.%lld.json", host, (long long)tp_fl.pid);
	int n = snprintf(F.path, sizeof(F.path), "%s/.%s.tmp", F.folder, F.name);
	if (n >= 0 && (size_t)n < sizeof(F.path))
		n = snprintf(F.path, sizeof(F.path), "%s/%s", F.folder, F.name);
	if (n < 0 || (size_t)n >= sizeof(F.path)) {
		tp_warn("TRACEPROF_LIVE_DIR: the live file's path is too long (%s); no live file",
			F.folder);
		return -1;
	}
	return 0;
}

int tp_live_file_init(const struct tp_config *cfg, const struct tp_template_vars *vars)
{
	struct tp_template_vars v = *vars;
	v.step = 0;
	char err[600], dir[PATH_MAX];
	const char *tmpl = cfg->live_dir[0] ? cfg->live_dir : cfg->folder;
	if (tp_template_expand(tmpl, &v, dir, sizeof(dir) - 8, err, sizeof(err)) < 0) {
		tp_warn("%s: %s; no live file", cfg->live_dir[0] ? "TRACEPROF_LIVE_DIR" :
				"TRACEPROF_FOLDER", err);
		return 0;
	}
	if (!cfg->live_dir[0])
		strcat(dir, "/.live");
	/* Absolute now: the program may chdir() later (format/sink.h). */
	char abs[PATH_MAX];
	snprintf(F.folder, sizeof(F.folder), "%s", tp_sink_abs_path(dir, abs, sizeof(abs)));
	F.made = 0;
	F.slot = -2;
	return lf_name() == 0;
}

void tp_live_file_child(void)
{
	F.slot = -1;
	lf_name();
}

const char *tp_live_file_path(void)
{
	return F.path;
}

struct lf_put {
	const char *buf;
	size_t len;
};

/* tp_sink_at()'s call: the folder as (descriptor, rel) from the root
 * anchored at start (format/sink.h), so that neither the program's chdir()
 * nor its chroot() moves the live file. */
static int lf_put_at(int dfd, const char *rel, void *arg)
{
	const struct lf_put *p = arg;
	char tmp[PATH_MAX], path[PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", rel, F.name);
	int m = snprintf(path, sizeof(path), "%s/%s", rel, F.name);
	if (n < 0 || (size_t)n >= sizeof(tmp) || m < 0 || (size_t)m >= sizeof(path))
		return -ENAMETOOLONG;
	struct tp_fd f = TP_FD_NONE;
	int rc = tp_fd_open_at(&f, dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (rc < 0)
		return rc;
	size_t off = 0;
	while (off < p->len && rc == 0) {
		ssize_t w = tp_fd_ours(&f) ? write(f.fd, p->buf + off, p->len - off) : -1;
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EINTR)
			rc = -errno;
		else if (w == 0)
			rc = -EIO;
	}
	if (tp_fd_close(&f) < 0 && rc == 0)
		rc = -EBADF;
	if (rc == 0 && renameat(dfd, tmp, dfd, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlinkat(dfd, tmp, 0);
	/* A forked child (a DataLoader worker) that is in _exit() now: the
	 * dropper may have removed the file before this rename made it again
	 * (tp_sink_live_dying()'s partner is its store before its scan). */
	else if (F.slot != -2 && tp_sink_live_dying())
		unlinkat(dfd, path, 0);
	return rc;
}

/* Writes the temporary file and renames it onto the file.  Returns 0 or
 * -errno. */
int tp_live_file_store(const char *buf, size_t len)
{
	if (!F.made) {
		int rc = tp_sink_mkdirs(F.folder);
		if (rc < 0)
			return rc;
		F.made = 1;
	}
	struct lf_put p = { buf, len };
	int rc = tp_sink_at(F.folder, lf_put_at, &p);
	if (rc < 0)
		F.made = 0; /* the folder may have been removed: made again next time */
	else if (F.slot == -1)
		/* A forked child ends with _exit() as often as not (multiprocessing's
		 * os._exit()): its file goes with it, as its temporary files do,
		 * instead of staying "running" for `traceprof top` forever. */
		F.slot = tp_sink_live_add(F.folder, F.name) < 0 ? -3 : 0;
	return rc;
}
