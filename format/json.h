/* A buffered JSON writer for the flush thread.
 *
 * Output goes into a private buffer that is handed to a sink (format/sink.h)
 * whenever it fills; nothing here allocates per event.  Every string goes
 * through tp_json_str(), which escapes quotes, backslashes and control
 * characters and replaces invalid UTF-8 with U+FFFD, so that the output is
 * valid JSON whatever the program names its kernels, ranges or threads.
 * Errors are sticky: after the first sink error every call is a no-op and
 * tp_json_error() returns the -errno. */
#ifndef TP_FORMAT_JSON_H
#define TP_FORMAT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tp_sink;

#define TP_JSON_BUF (1u << 20)

/* Input processed per reservation, so that escaping a huge string needs at
 * most 6 * (TP_JSON_STR_CHUNK + 3) + 2 bytes of buffer (well below TP_JSON_BUF). */
#define TP_JSON_STR_CHUNK 65536

struct tp_json {
	char *buf; /* TP_JSON_BUF bytes */
	size_t len;
	uint64_t total; /* bytes handed to the sink so far; tp_json_total() adds
			 * what is still buffered */
	int error;	/* 0 or the first -errno */
	struct tp_sink *sink; /* NULL: output is kept in buf only (tests) and the
			       * buffer grows */
	size_t cap;
};

int tp_json_init(struct tp_json *j, struct tp_sink *sink);
void tp_json_free(struct tp_json *j);
/* Hands buffered bytes to the sink.  Returns 0 or -errno. */
int tp_json_flush(struct tp_json *j);
static inline int tp_json_error(const struct tp_json *j)
{
	return j->error;
}

/* Bytes produced so far, flushed or not.  Computed rather than counted so
 * that writers using tp_json_reserve() need only advance len. */
static inline uint64_t tp_json_total(const struct tp_json *j)
{
	return j->total + j->len;
}

/* The slow half of tp_json_reserve(): flushes to the sink, or grows the
 * buffer when there is no sink (tests) or one request is larger than it. */
char *tp_json_reserve_slow(struct tp_json *j, size_t n);

/* Makes room for n more bytes (flushing if needed); returns where to write or
 * NULL after an error.  The caller then ends with tp_json_commit().  After an
 * error every writer must be a no-op: the slow half returns NULL then, so
 * the fast one only has to send errored writers there. */
static inline char *tp_json_reserve(struct tp_json *j, size_t n)
{
	if (__builtin_expect(j->cap - j->len >= n && !j->error, 1))
		return j->buf + j->len;
	return tp_json_reserve_slow(j, n);
}

/* Ends a write into the room tp_json_reserve() gave: `end` is one past the
 * last byte written there. */
static inline void tp_json_commit(struct tp_json *j, const char *end)
{
	j->len = (size_t)(end - j->buf);
}

/* The slow half of tp_json_raw(): pieces that do not fit, and errors. */
void tp_json_raw_slow(struct tp_json *j, const char *s, size_t n);

/* Raw bytes.  Inline because a trace is mostly short constant pieces: with a
 * literal, strlen() folds and memcpy() becomes a few moves, which is most of
 * the difference between 6 and 20 million events per second. */
static inline void tp_json_raw(struct tp_json *j, const char *s, size_t n)
{
	if (__builtin_expect(j->cap - j->len >= n && !j->error, 1)) {
		memcpy(j->buf + j->len, s, n);
		j->len += n;
		return;
	}
	tp_json_raw_slow(j, s, n);
}

/* Raw, NUL-terminated. */
static inline void tp_json_lit(struct tp_json *j, const char *s)
{
	tp_json_raw(j, s, strlen(s));
}

static inline void tp_json_char(struct tp_json *j, char c)
{
	tp_json_raw(j, &c, 1);
}

/* ---- Writing into reserved space ---------------------------------------
 *
 * The event writers of format/trace.c reserve room for a whole event once
 * (tp_json_reserve) and then write its pieces with the tp_json_put_*()
 * functions below, which take the write position and return the new one.
 * One bounds check per event instead of one per field took a result-only
 * API event from 48 to 31 ns (bench/bench_json).  Each function states the
 * most it writes; the caller's reservation must cover the sum, and the
 * caller sets j->len from the final position. */

/* "00" "01" ... "99" and a NUL (json.c). */
extern const char tp_json_digits2[201];
extern const char tp_json_hex_digits[16]; /* "0123456789abcdef" */

static inline char *tp_json_put_raw(char *d, const void *s, size_t n)
{
	memcpy(d, s, n);
	return d + n;
}

/* Integers are cut into groups of at most eight digits that fit in 32 bits,
 * and each group into independent two-digit pairs: 32-bit divisions by
 * constants are cheap multiplications, and the pairs do not wait on each
 * other the way a digit-by-digit loop does. */

static inline void tp_json__put2(char *d, uint32_t v) /* v < 100, two digits */
{
	memcpy(d, tp_json_digits2 + 2 * v, 2);
}

static inline void tp_json__put4(char *d, uint32_t v) /* v < 10000, four digits */
{
	tp_json__put2(d, v / 100);
	tp_json__put2(d + 2, v % 100);
}

static inline void tp_json__put8(char *d, uint32_t v) /* v < 10^8, eight digits */
{
	tp_json__put4(d, v / 10000);
	tp_json__put4(d + 4, v % 10000);
}

/* v < 10000 without leading zeros. */
static inline char *tp_json__upto4(char *d, uint32_t v)
{
	if (v < 100) {
		if (v < 10) {
			*d = (char)('0' + v);
			return d + 1;
		}
		tp_json__put2(d, v);
		return d + 2;
	}
	uint32_t hi = v / 100, lo = v % 100;
	if (hi < 10) {
		*d = (char)('0' + hi);
		tp_json__put2(d + 1, lo);
		return d + 3;
	}
	tp_json__put2(d, hi);
	tp_json__put2(d + 2, lo);
	return d + 4;
}

/* v < 10^8 without leading zeros. */
static inline char *tp_json__upto8(char *d, uint32_t v)
{
	if (v < 10000)
		return tp_json__upto4(d, v);
	d = tp_json__upto4(d, v / 10000);
	tp_json__put4(d, v % 10000);
	return d + 4;
}

/* The decimal digits of v: at most 20 bytes. */
static inline char *tp_json_put_u64(char *d, uint64_t v)
{
	if (v < 100000000)
		return tp_json__upto8(d, (uint32_t)v);
	uint64_t hi = v / 100000000;
	uint32_t lo = (uint32_t)(v % 100000000);
	if (hi < 100000000) {
		d = tp_json__upto8(d, (uint32_t)hi);
	} else {
		/* hi < 1.9 * 10^11: at most four more leading digits. */
		d = tp_json__upto4(d, (uint32_t)(hi / 100000000));
		tp_json__put8(d, (uint32_t)(hi % 100000000));
		d += 8;
	}
	tp_json__put8(d, lo);
	return d + 8;
}

/* At most 20 bytes. */
static inline char *tp_json_put_i64(char *d, int64_t v)
{
	uint64_t u = (uint64_t)v;
	if (v < 0) {
		*d++ = '-';
		/* Negating in unsigned arithmetic is defined for INT64_MIN too. */
		u = 0 - u;
	}
	return tp_json_put_u64(d, u);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The eight digits of v < 10^8, zero-padded, as the bytes of a word (the
 * first digit in the lowest byte), computed in registers: 2 and 4 digits per
 * lane by multiply-shift divisions (10486 / 2^20 and 103 / 2^10 divide
 * exactly by 100 and 10 in these ranges).  Checked against tp_json__put8()
 * for all 10^8 values (test_json_numbers).  Stored as a whole word, the digits need
 * no scratch buffer: digits built with narrow stores and copied out with a
 * wide load stall on store forwarding. */
static inline uint64_t tp_json__digits8(uint32_t v)
{
	uint64_t x = v;
	uint64_t merged = (x / 10000) | ((x % 10000) << 32);
	uint64_t top = ((merged * 10486ull) >> 20) & ((0x7Full << 32) | 0x7Full);
	uint64_t hundreds = ((merged - 100ull * top) << 16) + top;
	uint64_t tens = ((hundreds * 103ull) >> 10) & 0x000F000F000F000Full;
	tens += (hundreds - 10ull * tens) << 8;
	return tens + 0x3030303030303030ull;
}
#endif

/* A time in nanoseconds as microseconds with exactly 3 decimals: at most 22
 * bytes (sign, 16 digits of INT64_MIN / 1000, the point, three decimals),
 * and it may write up to 19 bytes from d whatever its length.
 *
 * Every event's ts goes through here, almost always with 9 to 16 digits of
 * ns (0.1 s to 115 days after the trace's base; Kineto's base is at most
 * 90 days back): those are formatted as two words of 8 digits in
 * registers, stored whole, the integer part's leading zeros cut by a shift
 * (about 40 instructions against 90 for digit pairs). */
static inline char *tp_json_put_us(char *d, int64_t ns)
{
	uint64_t u = (uint64_t)ns;
	if (ns < 0) {
		*d++ = '-';
		u = 0 - u;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (u - 100000000ull < 10000000000000000ull - 100000000ull) {
		uint64_t hi = tp_json__digits8((uint32_t)(u / 100000000));
		uint64_t lo = tp_json__digits8((uint32_t)(u % 100000000));
		/* 16 digits (11.6 days after the base and later): a branch
		 * that is predicted, so that where the next bytes go does not
		 * wait for the digits.  Else u >= 10^8: hi has a non-zero
		 * digit after z leading zeros. */
		if (__builtin_expect(u >= 1000000000000000ull, 1)) {
			memcpy(d, &hi, 8);
			d += 8;
		} else {
			unsigned z = (unsigned)__builtin_ctzll(hi ^ 0x3030303030303030ull) / 8;
			hi >>= 8 * z;
			memcpy(d, &hi, 8);
			d += 8 - z;
		}
		/* lo's first 5 digits end the integer part, its last 3 are the
		 * decimals: the point overwrites the 6th, the decimals follow
		 * it (one byte more is written and overwritten by the caller). */
		memcpy(d, &lo, 8);
		d[5] = '.';
		uint32_t frac = (uint32_t)(lo >> 40);
		memcpy(d + 6, &frac, 4);
		return d + 9;
	}
#endif
	uint32_t frac = (uint32_t)(u % 1000);
	d = tp_json_put_u64(d, u / 1000);
	d[0] = '.';
	d[1] = (char)('0' + frac / 100);
	tp_json__put2(d + 2, frac % 100);
	return d + 4;
}

/* A hexadecimal string "0x..." (pointers): at most 20 bytes. */
char *tp_json_put_hex(char *d, uint64_t v);

/* A quoted, escaped string of n bytes: at most 6 * n + 2 bytes. */
char *tp_json_put_strn(char *d, const char *s, size_t n);

/* The most tp_json_put_strn() writes for n bytes. */
static inline size_t tp_json_strn_max(size_t n)
{
	return 6 * n + 2;
}

/* ---- Strings escaped once ------------------------------------------------
 *
 * Kernel names repeat on every launch; escaping them once and copying the
 * escaped bytes afterwards saves the scan, the strlen() and six times the
 * name's length of reservation.  Entries are found by the string's address
 * and then checked against a copy of the string (one strcmp, much cheaper
 * than escaping): an address freed and reused for another string, as the
 * kernel registry does when a module is loaded again, gets the new string,
 * never a stale one. */

struct tp_json_cached {
	const char *key; /* the address looked up; NULL: empty slot */
	char *src;	 /* a copy of the string, to check hits */
	char *json;	 /* the quoted, escaped string (NUL-terminated) */
	uint32_t len;	 /* bytes of json, quotes included */
	uint32_t src_len; /* bytes of src, its NUL not included */
};

struct tp_json_strcache {
	struct tp_json_cached *slots;
	size_t cap, n;
	size_t bytes; /* bytes held, bounded by TP_JSON_STRCACHE_MAX */
};

/* Bytes one cache may hold; beyond it strings are escaped each time. */
#define TP_JSON_STRCACHE_MAX (64u << 20)

/* The escaped form of s, valid until the next call; NULL when s is NULL, too
 * long, or memory ran out: the caller then writes s with tp_json_str(). */
const struct tp_json_cached *tp_json_strcache_get(struct tp_json_strcache *c, const char *s);
/* The same for the n bytes at s (a string arg's s and n): checked by length
 * and memcmp(), no strlen() or strcmp(). */
const struct tp_json_cached *tp_json_strcache_getn(struct tp_json_strcache *c, const char *s,
						   size_t n);
void tp_json_strcache_free(struct tp_json_strcache *c);

/* Writes a cached string. */
static inline void tp_json_write_cached(struct tp_json *j, const struct tp_json_cached *c)
{
	tp_json_raw(j, c->json, c->len);
}

/* A quoted, escaped string: n bytes of s (may contain anything). */
void tp_json_strn(struct tp_json *j, const char *s, size_t n);
void tp_json_str(struct tp_json *j, const char *s); /* NULL writes "" */
void tp_json_u64(struct tp_json *j, uint64_t v);
void tp_json_i64(struct tp_json *j, int64_t v);
/* A time in nanoseconds as microseconds with exactly 3 decimals: 1234567 ->
 * 1234.567, -5 -> -0.005. */
void tp_json_us(struct tp_json *j, int64_t ns);
/* A finite double in the shortest form that round-trips ("%.17g" quality);
 * NaN and infinities are written as null. */
void tp_json_double(struct tp_json *j, double v);
/* A hexadecimal string "0x..." (pointers). */
void tp_json_hex(struct tp_json *j, uint64_t v);

/* Escapes src into dst as the inside of a JSON string (no quotes); returns the
 * bytes written (dst must hold 6 * n + 1; the result is NUL-terminated). */
size_t tp_json_escape(char *dst, const char *src, size_t n);

#endif
