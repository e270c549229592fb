/* /proc readers; see common/procfs.h. */
#include "common/procfs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fd.h"

ssize_t tp_procfs_read(const char *path, char *buf, size_t size)
{
	if (!size)
		return -1;
	/* One read: /proc's files hand out at least a page per read, and the
	 * readers here want the head of a file, never more than a page. */
	return tp_fd_read_small(path, buf, size);
}

void tp_procfs_file_close(struct tp_procfs_file *f)
{
	/* A descriptor opened by another process (the parent, before fork) is
	 * our copy in this one; closed like ours when it still is. */
	if (f->fd.fd >= 0 && tp_fd_ours(&f->fd))
		close(f->fd.fd);
	tp_fd_forget(&f->fd);
	f->path[0] = '\0';
}

/* Opens path into f (moved high, identity kept).  Returns 0 or -1. */
static int pf_open(struct tp_procfs_file *f, const char *path)
{
	size_t len = strlen(path);
	if (len >= sizeof(f->path))
		return -1;
	if (tp_fd_open_at(&f->fd, AT_FDCWD, path, O_RDONLY, 0) < 0)
		return -1;
	memcpy(f->path, path, len + 1);
	f->pid = getpid();
	return 0;
}

ssize_t tp_procfs_pread(struct tp_procfs_file *f, const char *path, char *buf, size_t size)
{
	if (!size)
		return -1;
	buf[0] = '\0';
	if (f->fd.fd >= 0) {
		if (f->pid != getpid() || strcmp(f->path, path)) {
			/* A forked child, or another file (a new main thread's
			 * task/PID/stat after fork): not this descriptor. */
			tp_procfs_file_close(f);
		} else if (!tp_fd_ours(&f->fd)) {
			/* The program closed our number (and may have reused
			 * it): never read or close it again. */
			tp_fd_lost("a /proc file", f->fd.fd);
			tp_fd_forget(&f->fd);
		}
	}
	/* Two tries: a read may fail on a descriptor whose file went stale
	 * (ESRCH: its task is gone); a fresh open says whether the path still
	 * exists.  Bounded: the second failure is the answer. */
	for (int tries = 0; tries < 2; tries++) {
		if (f->fd.fd < 0 && pf_open(f, path) < 0)
			return -1;
		ssize_t n = tp_fd_pread_text(f->fd.fd, buf, size);
		if (n > 0)
			return n;
		tp_procfs_file_close(f);
	}
	return -1;
}

ssize_t tp_procfs_read_text(const char *path, char *buf, size_t size, int nul_to_space)
{
	ssize_t n = tp_procfs_read(path, buf, size);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		buf[--n] = '\0';
	if (nul_to_space)
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
	return n;
}

const char *tp_procfs_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		if (!strncmp(line, key, klen)) {
			const char *v = line + klen;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

/* The number at p; 0, or -1 when p does not start with a digit. */
static int pf_u64(const char *p, uint64_t *out)
{
	if (!p || *p < '0' || *p > '9')
		return -1;
	*out = strtoull(p, NULL, 10);
	return 0;
}

int tp_procfs_field_u64(const char *text, const char *key, uint64_t *out)
{
	return pf_u64(tp_procfs_field(text, key), out);
}

/* The start of the n-th (1-based) word of p, or NULL. */
static const char *pf_word(const char *p, int n)
{
	if (n < 1)
		return NULL;
	for (;;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!*p)
			return NULL;
		if (--n == 0)
			return p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
}

int tp_procfs_word_u64(const char *text, int n, uint64_t *out)
{
	return pf_u64(pf_word(text, n), out);
}

/* The text after the command name: field 3 is its first word. */
static const char *pf_after_comm(const char *stat)
{
	const char *p = strrchr(stat, ')');
	return p ? p + 1 : NULL;
}

int tp_procfs_stat_u64(const char *stat, int n, uint64_t *out)
{
	const char *p = pf_after_comm(stat);
	if (!p || n < 3)
		return -1;
	return pf_u64(pf_word(p, n - 2), out);
}

char tp_procfs_stat_state(const char *stat)
{
	const char *p = pf_after_comm(stat);
	p = p ? pf_word(p, 1) : NULL;
	return p ? *p : 0;
}
