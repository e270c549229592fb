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

/* The buffer and the numbers of the JSON writer; strings are json_str.c's,
 * the cache of escaped strings json_strcache.c's.  Writing a Chrome trace is
 * dominated by these files: a complete event is about fifteen calls here.  So the per-event functions avoid printf entirely, and
 * the buffer check is a single comparison on the common path. */

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

const char tp_json_hex_digits[16] = "0123456789abcdef";

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
char *tp_json_reserve_slow(struct tp_json *j, size_t n)
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
		char *d = tp_json_reserve(j, k);
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
	char *d = tp_json_reserve(j, 20);
	if (d)
		tp_json_commit(j, tp_json_put_u64(d, v));
}

void tp_json_i64(struct tp_json *j, int64_t v)
{
	char *d = tp_json_reserve(j, 20);
	if (d)
		tp_json_commit(j, tp_json_put_i64(d, v));
}

void tp_json_us(struct tp_json *j, int64_t ns)
{
	char *d = tp_json_reserve(j, 22);
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
		d[3] = tp_json_hex_digits[v & 15];
	d[3 + n] = '"';
	return d + 4 + n;
}
#endif

void tp_json_hex(struct tp_json *j, uint64_t v)
{
	char *d = tp_json_reserve(j, 20);
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
