#include "format/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/sink.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Writing a Chrome trace is dominated by this file: a complete event is about
 * fifteen calls here.  So the per-event functions avoid printf entirely, and
 * the buffer check is a single comparison on the common path. */

#define JS_LIKELY(x) __builtin_expect(!!(x), 1)

/* "00" "01" ... "99": integers are printed two digits per division, which
 * halves the number of (slow) 64-bit divisions. */
static const char js_digits2[201] = "00010203040506070809"
				    "10111213141516171819"
				    "20212223242526272829"
				    "30313233343536373839"
				    "40414243444546474849"
				    "50515253545556575859"
				    "60616263646566676869"
				    "70717273747576777879"
				    "80818283848586878889"
				    "90919293949596979899";

static const char js_hex[16] = "0123456789abcdef";

int tp_json_init(struct tp_json *j, struct tp_sink *sink)
{
	memset(j, 0, sizeof(*j));
	j->sink = sink;
	j->buf = malloc(TP_JSON_BUF);
	if (!j->buf) {
		j->error = -ENOMEM;
		return -ENOMEM;
	}
	j->cap = TP_JSON_BUF;
	return 0;
}

void tp_json_free(struct tp_json *j)
{
	free(j->buf);
	j->buf = NULL;
	j->len = 0;
	j->cap = 0;
}

int tp_json_flush(struct tp_json *j)
{
	if (j->error)
		return j->error;
	if (!j->sink || j->len == 0)
		return 0;
	int rc = tp_sink_write(j->sink, j->buf, j->len);
	j->total += j->len;
	j->len = 0;
	if (rc) {
		/* Sticky: the file now has a hole, so nothing after it is worth
		 * writing; tp_sink_close() will report the same error. */
		j->error = rc;
		return rc;
	}
	return 0;
}

/* The slow half of reserve: flush to the sink, or grow the buffer when there
 * is no sink (tests) or when one request is larger than the whole buffer. */
static char *js_reserve_slow(struct tp_json *j, size_t n)
{
	if (j->error)
		return NULL;
	if (j->sink && tp_json_flush(j))
		return NULL;
	if (j->cap - j->len >= n)
		return j->buf + j->len;
	size_t cap = j->cap ? j->cap : TP_JSON_BUF;
	while (cap - j->len < n) {
		if (cap > SIZE_MAX / 2) {
			j->error = -ENOMEM;
			return NULL;
		}
		cap *= 2;
	}
	char *nb = realloc(j->buf, cap);
	if (!nb) {
		j->error = -ENOMEM;
		return NULL;
	}
	j->buf = nb;
	j->cap = cap;
	return j->buf + j->len;
}

/* After an error every writer must be a no-op; the slow path returns NULL
 * then, so the fast path only has to send errored writers there. */
static inline char *js_reserve(struct tp_json *j, size_t n)
{
	if (JS_LIKELY(j->cap - j->len >= n && !j->error))
		return j->buf + j->len;
	return js_reserve_slow(j, n);
}

char *tp_json_reserve(struct tp_json *j, size_t n)
{
	return js_reserve(j, n);
}

void tp_json_raw_slow(struct tp_json *j, const char *s, size_t n)
{
	/* Large pieces are copied a buffer at a time so that a sink never forces
	 * the buffer to grow. */
	while (n) {
		size_t room = j->cap - j->len;
		size_t k = n;
		if (k > room) {
			if (j->sink && room)
				k = room;
			else if (j->sink)
				k = n < TP_JSON_BUF ? n : TP_JSON_BUF;
		}
		char *d = js_reserve(j, k);
		if (!d)
			return;
		memcpy(d, s, k);
		j->len += k;
		s += k;
		n -= k;
	}
}

/* Integers are cut into groups of at most eight digits that fit in 32 bits,
 * and each group into independent two-digit pairs: 32-bit divisions by
 * constants are cheap multiplications, and the pairs do not wait on each
 * other the way a digit-by-digit loop does. */

static inline void js_put2(char *d, uint32_t v) /* v < 100, two digits */
{
	memcpy(d, js_digits2 + 2 * v, 2);
}

static inline void js_put4(char *d, uint32_t v) /* v < 10000, four digits */
{
	js_put2(d, v / 100);
	js_put2(d + 2, v % 100);
}

static inline void js_put8(char *d, uint32_t v) /* v < 10^8, eight digits */
{
	js_put4(d, v / 10000);
	js_put4(d + 4, v % 10000);
}

/* v < 10000 without leading zeros; returns the end. */
static inline char *js_put_upto4(char *d, uint32_t v)
{
	if (v < 100) {
		if (v < 10) {
			*d = (char)('0' + v);
			return d + 1;
		}
		js_put2(d, v);
		return d + 2;
	}
	uint32_t hi = v / 100, lo = v % 100;
	if (hi < 10) {
		*d = (char)('0' + hi);
		js_put2(d + 1, lo);
		return d + 3;
	}
	js_put2(d, hi);
	js_put2(d + 2, lo);
	return d + 4;
}

/* v < 10^8 without leading zeros; returns the end. */
static inline char *js_put_upto8(char *d, uint32_t v)
{
	if (v < 10000)
		return js_put_upto4(d, v);
	d = js_put_upto4(d, v / 10000);
	js_put4(d, v % 10000);
	return d + 4;
}

/* The decimal digits of v at d (at most 20 bytes); returns the end. */
static inline __attribute__((always_inline)) char *js_put_u64(char *d, uint64_t v)
{
	if (v < 100000000)
		return js_put_upto8(d, (uint32_t)v);
	uint64_t hi = v / 100000000;
	uint32_t lo = (uint32_t)(v % 100000000);
	if (hi < 100000000) {
		d = js_put_upto8(d, (uint32_t)hi);
	} else {
		/* hi < 1.9 * 10^11: at most four more leading digits. */
		d = js_put_upto4(d, (uint32_t)(hi / 100000000));
		js_put8(d, (uint32_t)(hi % 100000000));
		d += 8;
	}
	js_put8(d, lo);
	return d + 8;
}

void tp_json_u64(struct tp_json *j, uint64_t v)
{
	char *d = js_reserve(j, 20);
	if (!d)
		return;
	j->len = (size_t)(js_put_u64(d, v) - j->buf);
}

void tp_json_i64(struct tp_json *j, int64_t v)
{
	char *d = js_reserve(j, 21);
	if (!d)
		return;
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		*d++ = '-';
		/* Negating in unsigned arithmetic is defined for INT64_MIN too. */
		u = 0 - u;
	}
	j->len = (size_t)(js_put_u64(d, u) - j->buf);
}

void tp_json_us(struct tp_json *j, int64_t ns)
{
	/* Sign, 17 digits of INT64_MIN / 1000, the point and three decimals. */
	char *d = js_reserve(j, 22);
	if (!d)
		return;
	uint64_t u = (uint64_t)ns;
	if (ns < 0) {
		*d++ = '-';
		u = 0 - u;
	}
	uint32_t frac = (uint32_t)(u % 1000);
	d = js_put_u64(d, u / 1000);
	d[0] = '.';
	d[1] = (char)('0' + frac / 100);
	js_put2(d + 2, frac % 100);
	j->len = (size_t)(d + 4 - j->buf);
}

void tp_json_hex(struct tp_json *j, uint64_t v)
{
	char *d = js_reserve(j, 20);
	if (!d)
		return;
	unsigned n = 1;
	for (uint64_t t = v >> 4; t; t >>= 4)
		n++;
	d[0] = '"';
	d[1] = '0';
	d[2] = 'x';
	for (unsigned i = 0; i < n; i++)
		d[3 + n - 1 - i] = js_hex[(v >> (4 * i)) & 15];
	d[3 + n] = '"';
	j->len += 4 + n;
}

void tp_json_double(struct tp_json *j, double v)
{
	if (!isfinite(v)) {
		tp_json_raw(j, "null", 4);
		return;
	}
	/* Every decimal of at most 15 significant digits survives a trip through
	 * a double (DBL_DIG), so when a 15-digit or shorter form exists, "%.15g"
	 * finds it; otherwise the correctly rounded 16-digit form round-trips if
	 * any 16-digit form does, and 17 digits always do. */
	char tmp[40];
	int n = 0;
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (n <= 0 || (size_t)n >= sizeof(tmp)) {
			tp_json_raw(j, "null", 4);
			return;
		}
		/* strtod reads the same locale snprintf wrote in, so the check is
		 * valid even when the program changed LC_NUMERIC. */
		if (strtod(tmp, NULL) == v)
			break;
	}
	/* A program may have set a locale whose decimal point is ',' or even
	 * several bytes; JSON wants '.'.  Anything that is not a digit, sign or
	 * exponent letter is that decimal point. */
	char out[40];
	int o = 0;
	for (int i = 0; i < n; i++) {
		char c = tmp[i];
		if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E') {
			out[o++] = c;
		} else {
			out[o++] = '.';
			while (i + 1 < n && !((tmp[i + 1] >= '0' && tmp[i + 1] <= '9') ||
					      tmp[i + 1] == 'e' || tmp[i + 1] == 'E'))
				i++;
		}
	}
	tp_json_raw(j, out, (size_t)o);
}

/* ---- Strings ---------------------------------------------------------- */

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

/* Length of the valid UTF-8 sequence at s (2 to 4), or, when it is invalid,
 * minus the length of its maximal subpart (the bytes replaced by one U+FFFD,
 * as Unicode recommends: at least 1).  s[0] >= 0x80; n >= 1 bytes remain. */
static inline int js_utf8(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xbf;
	int len;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800..U+DFFF */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		/* A stray continuation byte, C0/C1 (always overlong) or F5..FF. */
		return -1;
	}
	if (n < 2 || s[1] < lo || s[1] > hi)
		return -1;
	for (int k = 2; k < len; k++) {
		if ((size_t)k >= n || (s[k] & 0xc0) != 0x80)
			return -k;
	}
	return len;
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
				d[4] = js_hex[c >> 4];
				d[5] = js_hex[c & 15];
				d += 6;
			}
			i++;
			continue;
		}
		int k = js_utf8(src + i, n - i);
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

/* Input processed per reservation, so that escaping a huge string needs at
 * most 6 * (JS_CHUNK + 3) + 2 bytes of buffer (well below TP_JSON_BUF). */
#define JS_CHUNK 65536

void tp_json_strn(struct tp_json *j, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	if (JS_LIKELY(n <= JS_CHUNK)) {
		char *d = js_reserve(j, 6 * n + 2);
		if (!d)
			return;
		size_t used;
		d[0] = '"';
		size_t w = js_copy_plain(d + 1, u, n) ? n : js_escape_core(d + 1, u, n, n, &used);
		d[1 + w] = '"';
		j->len += w + 2;
		return;
	}
	tp_json_char(j, '"');
	while (n) {
		size_t limit = n < JS_CHUNK ? n : JS_CHUNK;
		char *d = js_reserve(j, 6 * (limit + 3));
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
