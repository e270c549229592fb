/* The JSON writer's strings: escaping (quotes, backslashes, control
 * characters; invalid UTF-8 replaced with U+FFFD), a word or sixteen bytes at
 * a time where nothing needs escaping.  See format/json.h. */
#include "format/json.h"

#include <stdint.h>
#include <string.h>

#include "common/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JS_LIKELY(x) __builtin_expect(!!(x), 1)

/* Byte classes for the escaper: 0 copies as is, 1 needs an escape, 2 starts
 * (or continues) a multi-byte sequence that must be validated. */
static const unsigned char js_class[256] = {
	/* 0x00-0x1f: control characters. */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x20-0x7f: '"' (0x22) and '\\' (0x5c). */
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x80-0xff. */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/* The short escapes JSON defines for control characters; 'u' means \u00XX. */
static const char js_short[32] = {
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
};

#define JS_ONES 0x0101010101010101ull
#define JS_HIGHS 0x8080808080808080ull

/* True when one of the eight bytes in w needs attention: >= 0x80, < 0x20,
 * '"' or '\\'.  Each test sets that byte's high bit (the classic "has a zero
 * byte" trick); false positives only occur in bytes above a true one, and the
 * byte loop after it sorts those out. */
static inline int js_word_special(uint64_t w)
{
	uint64_t q = w ^ (JS_ONES * 0x22);
	uint64_t b = w ^ (JS_ONES * 0x5c);
	return ((w | ((w - JS_ONES * 0x20) & ~w) | ((q - JS_ONES) & ~q) | ((b - JS_ONES) & ~b)) &
		JS_HIGHS) != 0;
}

/* Escapes sequences starting before `limit` (sequences may read up to n, so a
 * chunked caller never splits one); returns the bytes written to dst and sets
 * *used to the input consumed.  dst needs 6 * (limit + 3) bytes. */
static size_t js_escape_core(char *dst, const unsigned char *src, size_t n, size_t limit,
			     size_t *used)
{
	char *d = dst;
	size_t i = 0;
	while (i < limit) {
		/* Plain ASCII is copied a word at a time as it is checked (each
		 * safe input byte is one output byte, so this never writes past
		 * what the caller reserved), then byte by byte up to the next
		 * byte that needs work. */
		while (i + 8 <= limit) {
			uint64_t w;
			memcpy(&w, src + i, 8);
			if (js_word_special(w))
				break;
			memcpy(d, &w, 8);
			d += 8;
			i += 8;
		}
		while (i < limit && js_class[src[i]] == 0)
			*d++ = (char)src[i++];
		if (i >= limit)
			break;
		unsigned c = src[i];
		if (c < 0x80) {
			d[0] = '\\';
			if (c == '"' || c == '\\') {
				d[1] = (char)c;
				d += 2;
			} else if (js_short[c] != 'u') {
				d[1] = js_short[c];
				d += 2;
			} else {
				d[1] = 'u';
				d[2] = '0';
				d[3] = '0';
				d[4] = tp_json_hex_digits[c >> 4];
				d[5] = tp_json_hex_digits[c & 15];
				d += 6;
			}
			i++;
			continue;
		}
		int k = tp_utf8_seq(src + i, n - i);
		if (k > 0) {
			memcpy(d, src + i, (size_t)k);
			d += k;
			i += (size_t)k;
		} else {
			d[0] = (char)0xef;
			d[1] = (char)0xbf;
			d[2] = (char)0xbd;
			d += 3;
			i += (size_t)-k;
		}
	}
	*used = i;
	return (size_t)(d - dst);
}

size_t tp_json_escape(char *dst, const char *src, size_t n)
{
	size_t used;
	size_t w = js_escape_core(dst, (const unsigned char *)src, n, n, &used);
	dst[w] = '\0';
	return w;
}

/* The common case, a name of plain ASCII (kernel, API and thread names):
 * copies it a word at a time while checking it, the last word overlapping the
 * one before instead of a byte loop.  Returns 1, or 0 when some byte needs
 * the full escaper (which then rewrites dst from the start).  dst has room for
 * at least n + 8 bytes (the caller reserved 6 * n). */
static inline int js_copy_plain(char *dst, const unsigned char *src, size_t n)
{
	uint64_t w;
	size_t i = 0;
#if defined(__SSE2__)
	/* Sixteen bytes per step.  A signed compare with 0x20 catches both the
	 * control characters and every byte >= 0x80 (negative as signed). */
	if (n >= 16) {
		const __m128i sp = _mm_set1_epi8(0x20), qu = _mm_set1_epi8('"'),
			      bs = _mm_set1_epi8('\\');
		for (;; i += 16) {
			if (i + 16 > n)
				i = n - 16; /* the last block overlaps the one before */
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
			__m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, sp),
						   _mm_or_si128(_mm_cmpeq_epi8(v, qu),
								_mm_cmpeq_epi8(v, bs)));
			if (_mm_movemask_epi8(bad))
				return 0;
			_mm_storeu_si128((__m128i *)(void *)(dst + i), v);
			if (i + 16 == n)
				return 1;
		}
	}
#endif
	if (n < 8) {
		/* Too short for a word (and reading past the end is not allowed):
		 * tolerate the per-byte loop. */
		for (i = 0; i < n; i++) {
			if (js_class[src[i]])
				return 0;
			dst[i] = (char)src[i];
		}
		return 1;
	}
	for (; i + 8 < n; i += 8) {
		memcpy(&w, src + i, 8);
		if (js_word_special(w))
			return 0;
		memcpy(dst + i, &w, 8);
	}
	memcpy(&w, src + n - 8, 8);
	if (js_word_special(w))
		return 0;
	memcpy(dst + n - 8, &w, 8);
	return 1;
}


char *tp_json_put_strn(char *d, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t used;
	*d++ = '"';
	d += js_copy_plain(d, u, n) ? n : js_escape_core(d, u, n, n, &used);
	*d++ = '"';
	return d;
}

void tp_json_strn(struct tp_json *j, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	if (JS_LIKELY(n <= TP_JSON_STR_CHUNK)) {
		char *d = tp_json_reserve(j, tp_json_strn_max(n));
		if (d)
			tp_json_commit(j, tp_json_put_strn(d, s, n));
		return;
	}
	tp_json_char(j, '"');
	while (n) {
		size_t limit = n < TP_JSON_STR_CHUNK ? n : TP_JSON_STR_CHUNK;
		char *d = tp_json_reserve(j, 6 * (limit + 3));
		if (!d)
			return;
		size_t used;
		j->len += js_escape_core(d, u, n, limit, &used);
		u += used;
		n -= used;
	}
	tp_json_char(j, '"');
}

void tp_json_str(struct tp_json *j, const char *s)
{
	if (!s) {
		tp_json_raw(j, "\"\"", 2);
		return;
	}
	tp_json_strn(j, s, strlen(s));
}

