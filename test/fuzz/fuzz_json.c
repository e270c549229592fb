/* libFuzzer target for the JSON string writer (format/json.c).
 *
 * Every input is escaped three ways (tp_json_escape, tp_json_strn on a short
 * string, tp_json_strn on a string longer than its 64 KiB chunk, with the
 * input placed across the chunk boundary) and each result must be a valid
 * JSON string: only escapes JSON defines, no raw control character, strictly
 * valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
 * The chunked and one-shot escapes must agree byte for byte.  The numbers
 * writers get the first bytes as values and must round-trip.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE \
 *         test/fuzz/fuzz_json.c format/json.c format/json_str.c format/json_strcache.c test/fuzz/stub_sink.c -lm
 * See docs/development.md, "Fuzzing and sanitizers", for the 10-minute runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                         \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "fuzz_json: check failed: %s (line %d)\n", #c,   \
				__LINE__);                                               \
			abort();                                                         \
		}                                                                        \
	} while (0)

/* Strict UTF-8: returns the sequence length at s, or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Checks that s[0..n) is the inside of a valid JSON string. */
static void check_inside(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = u[i];
		CHECK(c >= 0x20);
		CHECK(c != '"');
		if (c == '\\') {
			CHECK(i + 1 < n);
			unsigned e = u[i + 1];
			if (e == 'u') {
				CHECK(i + 5 < n);
				for (int k = 2; k < 6; k++) {
					unsigned h = u[i + k];
					CHECK((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') ||
					      (h >= 'A' && h <= 'F'));
				}
				i += 6;
			} else {
				CHECK(strchr("\"\\/bfnrt", (int)e) && e);
				i += 2;
			}
			continue;
		}
		size_t l = utf8_len(u + i, n - i);
		CHECK(l > 0);
		i += l;
	}
}

/* One quoted string at j->buf + from, ending at j->len. */
static void check_quoted(const struct tp_json *j, size_t from)
{
	CHECK(j->len >= from + 2);
	CHECK(j->buf[from] == '"' && j->buf[j->len - 1] == '"');
	check_inside(j->buf + from + 1, j->len - from - 2);
}

static void check_numbers(const uint8_t *data, size_t size)
{
	if (size < 8)
		return;
	uint64_t u;
	double d;
	memcpy(&u, data, 8);
	memcpy(&d, data, 8);
	struct tp_json j;
	CHECK(tp_json_init(&j, NULL) == 0);
	char tmp[64];

	tp_json_u64(&j, u);
	CHECK(j.len < sizeof(tmp));
	memcpy(tmp, j.buf, j.len);
	tmp[j.len] = '\0';
	CHECK(strtoull(tmp, NULL, 10) == u);

	j.len = 0;
	tp_json_i64(&j, (int64_t)u);
	memcpy(tmp, j.buf, j.len);
	tmp[j.len] = '\0';
	CHECK(strtoll(tmp, NULL, 10) == (long long)(int64_t)u);

	j.len = 0;
	tp_json_us(&j, (int64_t)u);
	memcpy(tmp, j.buf, j.len);
	tmp[j.len] = '\0';
	char *dot = strchr(tmp, '.');
	CHECK(dot && strlen(dot) == 4);

	j.len = 0;
	tp_json_double(&j, d);
	memcpy(tmp, j.buf, j.len);
	tmp[j.len] = '\0';
	if (isfinite(d))
		CHECK(strtod(tmp, NULL) == d);
	else
		CHECK(!strcmp(tmp, "null"));

	j.len = 0;
	tp_json_hex(&j, u);
	memcpy(tmp, j.buf, j.len);
	tmp[j.len] = '\0';
	CHECK(tmp[0] == '"' && tmp[1] == '0' && tmp[2] == 'x');
	CHECK(strtoull(tmp + 3, NULL, 16) == u);
	tp_json_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;

	/* One-shot escape into a caller buffer. */
	char *esc = malloc(6 * size + 1);
	CHECK(esc);
	size_t w = tp_json_escape(esc, s, size);
	CHECK(w <= 6 * size);
	CHECK(esc[w] == '\0');
	check_inside(esc, w);

	/* The buffered writer must produce the same bytes, quoted. */
	struct tp_json j;
	CHECK(tp_json_init(&j, NULL) == 0);
	tp_json_char(&j, '[');
	tp_json_strn(&j, s, size);
	CHECK(!tp_json_error(&j));
	CHECK(j.len == w + 3);
	CHECK(!memcmp(j.buf + 2, esc, w));
	check_quoted(&j, 1);

	/* A long string puts the input across the 64 KiB chunk boundary of
	 * tp_json_strn: place it so that it starts a few bytes before.  One
	 * input in four (it is slow: a 64 KiB escape per run). */
	if (size > 0 && data[0] % 4 == 0) {
		size_t pre = 65536 - (data[0] % 8);
		size_t n = pre + size;
		char *big = malloc(n);
		CHECK(big);
		memset(big, 'a', pre);
		memcpy(big + pre, s, size);
		char *big_esc = malloc(6 * n + 1);
		CHECK(big_esc);
		size_t bw = tp_json_escape(big_esc, big, n);
		j.len = 0;
		tp_json_strn(&j, big, n);
		CHECK(!tp_json_error(&j));
		CHECK(j.len == bw + 2);
		CHECK(!memcmp(j.buf + 1, big_esc, bw));
		check_quoted(&j, 0);
		free(big_esc);
		free(big);
	}
	tp_json_free(&j);
	free(esc);
	check_numbers(data, size);
	return 0;
}
