#include "format/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/utf8.h"
#include "format/sink.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Writing a Chrome trace is dominated by this file: a complete event is about
 * fifteen calls here.  So the per-event functions avoid printf entirely, and
 * the buffer check is a single comparison on the common path. */

#define JS_LIKELY(x) __builtin_expect(!!(x), 1)
#define JS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* "00" "01" ... "99": integers are printed two digits per division, which
 * halves the number of (slow) 64-bit divisions. */
const char tp_json_digits2[201] = "00010203040506070809"
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

void tp_json_u64(struct tp_json *j, uint64_t v)
{
	char *d = js_reserve(j, 20);
	if (d)
		tp_json_commit(j, tp_json_put_u64(d, v));
}

void tp_json_i64(struct tp_json *j, int64_t v)
{
	char *d = js_reserve(j, 20);
	if (d)
		tp_json_commit(j, tp_json_put_i64(d, v));
}

void tp_json_us(struct tp_json *j, int64_t ns)
{
	char *d = js_reserve(j, 22);
	if (d)
		tp_json_commit(j, tp_json_put_us(d, ns));
}

#if defined(__SSE2__) && defined(__x86_64__)
/* All 16 digits at once: the bytes most significant first, each split into
 * its two nibbles, '0' added, and 39 more to the nibbles of 10 and above
 * ('a' - '0' - 10); then the significant ones copied.  A digit pair per
 * step costs about three times the instructions for a 12-digit pointer. */
char *tp_json_put_hex(char *d, uint64_t v)
{
	unsigned bits = v ? 64 - (unsigned)__builtin_clzll(v) : 1;
	unsigned n = (bits + 3) / 4; /* hex digits, at least one */
	const __m128i nib = _mm_set1_epi8(0x0f);
	__m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i b = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi64(x, 4), nib),
				      _mm_and_si128(x, nib));
	__m128i ten = _mm_and_si128(_mm_cmpgt_epi8(b, _mm_set1_epi8(9)), _mm_set1_epi8(39));
	char w[16];
	_mm_storeu_si128((__m128i *)(void *)w,
			 _mm_add_epi8(_mm_add_epi8(b, _mm_set1_epi8('0')), ten));
	const char *s = w + 16 - n;
	d[0] = '"';
	d[1] = '0';
	d[2] = 'x';
	/* The last n of the 16 digits, by two overlapping fixed-size copies. */
	if (n >= 8) {
		memcpy(d + 3, s, 8);
		memcpy(d + 3 + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d + 3, s, 4);
		memcpy(d + 3 + n - 4, s + n - 4, 4);
	} else {
		d[3] = s[0];
		d[3 + n / 2] = s[n / 2];
		d[3 + n - 1] = s[n - 1];
	}
	d[3 + n] = '"';
	return d + 4 + n;
}
#else
/* "00" "01" ... "ff": a pointer is written a byte (two digits) per step
 * instead of a digit per step. */
static const char js_hex2[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

char *tp_json_put_hex(char *d, uint64_t v)
{
	unsigned bits = v ? 64 - (unsigned)__builtin_clzll(v) : 1;
	unsigned n = (bits + 3) / 4; /* hex digits, at least one */
	d[0] = '"';
	d[1] = '0';
	d[2] = 'x';
	char *e = d + 3 + n; /* one past the last digit */
	while (e - (d + 3) >= 2) {
		e -= 2;
		memcpy(e, js_hex2 + 2 * (v & 0xff), 2);
		v >>= 8;
	}
	if (e > d + 3)
		d[3] = js_hex[v & 15];
	d[3 + n] = '"';
	return d + 4 + n;
}
#endif

void tp_json_hex(struct tp_json *j, uint64_t v)
{
	char *d = js_reserve(j, 20);
	if (d)
		tp_json_commit(j, tp_json_put_hex(d, v));
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

/* Input processed per reservation, so that escaping a huge string needs at
 * most 6 * (JS_CHUNK + 3) + 2 bytes of buffer (well below TP_JSON_BUF). */
#define JS_CHUNK 65536

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
	if (JS_LIKELY(n <= JS_CHUNK)) {
		char *d = js_reserve(j, tp_json_strn_max(n));
		if (d)
			tp_json_commit(j, tp_json_put_strn(d, s, n));
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

/* ---- Strings escaped once ------------------------------------------------ */

/* The cache keeps its own table (struct tp_json_cached in json.h holds the
 * escaped text in the slot, read on the writer's per-string path, and a
 * slot keeps its key when its text is forgotten), hashed with common/hash.h. */
static size_t js_cache_slot(const struct tp_json_strcache *c, const char *key)
{
	size_t i = (size_t)tp_hash_u64((uint64_t)(uintptr_t)key) & (c->cap - 1);
	while (c->slots[i].key && c->slots[i].key != key)
		i = (i + 1) & (c->cap - 1);
	return i;
}

static int js_cache_grow(struct tp_json_strcache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	struct tp_json_cached *old = c->slots;
	size_t ocap = c->cap;
	c->slots = calloc(cap, sizeof(*c->slots));
	if (!c->slots) {
		c->slots = old;
		return -1;
	}
	c->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key)
			c->slots[js_cache_slot(c, old[i].key)] = old[i];
	free(old);
	return 0;
}

/* Frees what a slot holds; the slot keeps its key, so that the probe chains
 * through it stay whole (entries are never deleted). */
static void js_cache_forget(struct tp_json_strcache *c, struct tp_json_cached *e)
{
	c->bytes -= (size_t)e->src_len + 1 + e->len + 1;
	free(e->src);
	free(e->json);
	e->src = NULL;
	e->json = NULL;
	e->len = 0;
}

/* The slow half of tp_json_strcache_get(): s (n bytes) is not what slot e
 * holds (e is empty, or its address now holds another string). */
static const struct tp_json_cached *js_cache_fill(struct tp_json_strcache *c,
						  struct tp_json_cached *e, const char *s,
						  size_t n)
{
	if (e->src)
		js_cache_forget(c, e);
	if (n > JS_CHUNK || c->bytes + n + 1 + tp_json_strn_max(n) + 1 > TP_JSON_STRCACHE_MAX)
		return NULL;
	if (!e->key && (c->n + 1) * 2 > c->cap) {
		if (js_cache_grow(c) < 0)
			return NULL;
		e = &c->slots[js_cache_slot(c, s)];
	}
	char *src = malloc(n + 1);
	char *tmp = malloc(tp_json_strn_max(n) + 1);
	if (!src || !tmp) {
		free(src);
		free(tmp);
		return NULL;
	}
	memcpy(src, s, n);
	src[n] = '\0';
	size_t len = (size_t)(tp_json_put_strn(tmp, s, n) - tmp);
	/* Keep only what the escaped form needs, not the worst case. */
	char *json = realloc(tmp, len + 1);
	if (!json)
		json = tmp;
	json[len] = '\0';
	if (!e->key) {
		e->key = s;
		c->n++;
	}
	e->src = src;
	e->json = json;
	e->len = (uint32_t)len;
	e->src_len = (uint32_t)n;
	c->bytes += n + 1 + len + 1;
	return e;
}

const struct tp_json_cached *tp_json_strcache_get(struct tp_json_strcache *c, const char *s)
{
	if (!s)
		return NULL;
	if (JS_UNLIKELY(!c->cap) && js_cache_grow(c) < 0)
		return NULL;
	struct tp_json_cached *e = &c->slots[js_cache_slot(c, s)];
	if (JS_LIKELY(e->src != NULL && strcmp(e->src, s) == 0))
		return e;
	return js_cache_fill(c, e, s, strlen(s));
}

const struct tp_json_cached *tp_json_strcache_getn(struct tp_json_strcache *c, const char *s,
						   size_t n)
{
	if (!s)
		return NULL;
	if (JS_UNLIKELY(!c->cap) && js_cache_grow(c) < 0)
		return NULL;
	struct tp_json_cached *e = &c->slots[js_cache_slot(c, s)];
	/* The length first, then memcmp(): faster than strcmp() on the long
	 * names this cache holds (about 25 instructions against 80 for a
	 * 70-byte kernel name). */
	if (JS_LIKELY(e->src != NULL && e->src_len == n && memcmp(e->src, s, n) == 0))
		return e;
	return js_cache_fill(c, e, s, n);
}

void tp_json_strcache_free(struct tp_json_strcache *c)
{
	for (size_t i = 0; i < c->cap; i++) {
		free(c->slots[i].src);
		free(c->slots[i].json);
	}
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
