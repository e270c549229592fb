/* /proc readers; see common/procfs.h. */
#include "common/procfs.h"

#include <stdlib.h>
#include <string.h>

#include "common/fd.h"

ssize_t tp_procfs_read(const char *path, char *buf, size_t size)
{
	if (!size)
		return -1;
	/* One read: /proc's files hand out at least a page per read, and the
	 * readers here want the head of a file, never more than a page. */
	return tp_fd_read_small(path, buf, size);
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
