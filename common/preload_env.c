/* LD_PRELOAD editing; see common/preload_env.h. */
#include "common/preload_env.h"

#include <string.h>

/* The runtime of the sanitizer this file is built with, if any: the whole
 * library is built with the same flags. */
#if defined(__SANITIZE_THREAD__)
#define PE_SAN_RUNTIME "libtsan.so"
#elif defined(__SANITIZE_ADDRESS__)
#define PE_SAN_RUNTIME "libasan.so"
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PE_SAN_RUNTIME "libtsan.so"
#elif __has_feature(address_sanitizer)
#define PE_SAN_RUNTIME "libasan.so"
#endif
#endif

static int pe_prefix(const char *b, size_t blen, const char *prefix)
{
	size_t n = strlen(prefix);
	return blen >= n && !memcmp(b, prefix, n);
}

int tp_preload_env_is_ours(const char *p, size_t len, const char *self_base, int flags)
{
	/* The entry's file name: what follows its last '/'. */
	const char *b = p + len;
	while (b > p && b[-1] != '/')
		b--;
	size_t blen = (size_t)(p + len - b);
	size_t slen = self_base ? strlen(self_base) : 0;
	if (slen && blen == slen && !memcmp(b, self_base, slen))
		return 1;
#ifdef PE_SAN_RUNTIME
	if ((flags & TP_PRELOAD_ENV_SANITIZER) && pe_prefix(b, blen, PE_SAN_RUNTIME))
		return 1;
#else
	(void)flags;
#endif
	return pe_prefix(b, blen, "libtraceprof");
}

ssize_t tp_preload_env_filter(const char *value, const char *self_base, int flags, char *out,
			      size_t size)
{
	size_t n = 0;
	if (!size)
		return -1;
	for (const char *p = value ? value : ""; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && !tp_preload_env_is_ours(p, len, self_base, flags)) {
			if (n + (n ? 1 : 0) + len + 1 > size) {
				out[0] = '\0';
				return -1;
			}
			if (n)
				out[n++] = ':';
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
		while (*p == ':' || *p == ' ')
			p++;
	}
	out[n] = '\0';
	return (ssize_t)n;
}
