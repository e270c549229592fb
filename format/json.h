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

/* Makes room for n more bytes (flushing if needed); returns where to write or
 * NULL after an error.  The caller adds what it wrote to j->len. */
char *tp_json_reserve(struct tp_json *j, size_t n);

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
