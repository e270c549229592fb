/* Invalid UTF-8 replaced by U+FFFD (common/utf8.h). */
#include "common/utf8.h"

size_t tp_utf8_fixed_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, len = 0;
	while (i < n) {
		if (u[i] < 0x80) {
			i++;
			len++;
			continue;
		}
		int k = tp_utf8_seq(u + i, n - i);
		i += (size_t)(k > 0 ? k : -k);
		len += k > 0 ? (size_t)k : 3;
	}
	return len;
}

char *tp_utf8_fix(char *dst, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		if (u[i] < 0x80) {
			*dst++ = (char)u[i++];
			continue;
		}
		int k = tp_utf8_seq(u + i, n - i);
		if (k > 0) {
			memcpy(dst, u + i, (size_t)k);
			dst += k;
			i += (size_t)k;
		} else {
			memcpy(dst, "\xef\xbf\xbd", 3);
			dst += 3;
			i += (size_t)-k;
		}
	}
	return dst;
}
