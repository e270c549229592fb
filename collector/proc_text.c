/* Small /proc text files for the flush thread (collector/proc_text.h). */
#include "collector/proc_text.h"

#include <sys/types.h>

#include "common/fd.h"

int tp_proc_text(const char *path, char *buf, size_t size, int nul_to_space)
{
	if (!size)
		return -1;
	ssize_t n = tp_fd_read_small(path, buf, size);
	if (n < 0) {
		buf[0] = '\0';
		return -1;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		buf[--n] = '\0';
	if (nul_to_space)
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
	return (int)n;
}
