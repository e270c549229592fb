/* Unit tests for format/json.c: escaping, UTF-8 repair and buffering into
 * a real sink (number formatting: test_json_numbers.c). */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/json.h"
#include "format/sink.h"

#include "test/unit/check_main.h"

#include "test/unit/json_buf.h"

START_TEST(test_control_chars)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (int c = 0; c < 32; c++) {
		char in = (char)c, want[16];
		switch (c) {
		case '\b': strcpy(want, "\"\\b\""); break;
		case '\t': strcpy(want, "\"\\t\""); break;
		case '\n': strcpy(want, "\"\\n\""); break;
		case '\f': strcpy(want, "\"\\f\""); break;
		case '\r': strcpy(want, "\"\\r\""); break;
		default: snprintf(want, sizeof(want), "\"\\u%04x\"", c); break;
		}
		ck_assert_str_eq(esc(&j, &in, 1), want);
	}
	/* DEL is not a control character for JSON. */
	ck_assert_str_eq(esc(&j, "\x7f", 1), "\"\x7f\"");
	/* Embedded NUL in the middle of a run. */
	ck_assert_str_eq(esc(&j, "ab\0cd", 5), "\"ab\\u0000cd\"");
	tp_json_free(&j);
}
END_TEST

START_TEST(test_quotes_backslash)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	ck_assert_str_eq(esc(&j, "a\"b\\c", 5), "\"a\\\"b\\\\c\"");
	ck_assert_str_eq(esc(&j, "\"\"", 2), "\"\\\"\\\"\"");
	ck_assert_str_eq(esc(&j, "", 0), "\"\"");
	jreset(&j);
	tp_json_str(&j, NULL);
	ck_assert_str_eq(jout(&j), "\"\"");
	jreset(&j);
	tp_json_str(&j, "cudaLaunchKernel/with spaces & <tags>");
	ck_assert_str_eq(jout(&j), "\"cudaLaunchKernel/with spaces & <tags>\"");
	/* Long runs exercise the eight-bytes-at-a-time scan: a special byte at
	 * every position of a 24-byte string. */
	for (int pos = 0; pos < 24; pos++) {
		char in[25], want[64];
		memset(in, 'x', 24);
		in[24] = '\0';
		in[pos] = '\\';
		snprintf(want, sizeof(want), "\"%.*s\\\\%s\"", pos, in, in + pos + 1);
		ck_assert_str_eq(esc(&j, in, 24), want);
	}
	tp_json_free(&j);
}
END_TEST

START_TEST(test_fast_path_positions)
{
	/* The plain-ASCII fast path works in 16- and 8-byte blocks whose last
	 * one overlaps: put each kind of special byte at every position of
	 * strings of every length up to 40 and compare with the byte-wise
	 * escaper behind tp_json_escape(). */
	static const char specials[] = { '\x01', '\x1f', '"', '\\', '\x80', '\xc3', '\xff', '\x7f' };
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (size_t n = 1; n <= 40; n++) {
		for (size_t pos = 0; pos < n; pos++) {
			for (size_t k = 0; k < sizeof(specials); k++) {
				char in[41], want[6 * 41 + 3];
				for (size_t i = 0; i < n; i++)
					in[i] = (char)('A' + i % 26);
				in[pos] = specials[k];
				want[0] = '"';
				size_t w = tp_json_escape(want + 1, in, n);
				want[1 + w] = '"';
				want[2 + w] = '\0';
				ck_assert_str_eq(esc(&j, in, n), want);
			}
		}
		char plain[41];
		for (size_t i = 0; i < n; i++)
			plain[i] = (char)('a' + i % 26);
		plain[n] = '\0';
		jreset(&j);
		tp_json_str(&j, plain);
		ck_assert_uint_eq(j.len, n + 2);
		ck_assert_int_eq(memcmp(j.buf + 1, plain, n), 0);
	}
	tp_json_free(&j);
}
END_TEST

START_TEST(test_utf8_valid)
{
	static const char *const ok[] = {
		"\xc2\x80",	    /* U+0080 */
		"\xc3\xa9",	    /* é */
		"\xdf\xbf",	    /* U+07FF */
		"\xe0\xa0\x80",	    /* U+0800 */
		"\xe2\x82\xac",	    /* € */
		"\xed\x9f\xbf",	    /* U+D7FF, just below the surrogates */
		"\xee\x80\x80",	    /* U+E000, just above */
		"\xef\xbf\xbf",	    /* U+FFFF */
		"\xf0\x90\x80\x80", /* U+10000 */
		"\xf0\x9d\x84\x9e", /* 𝄞 */
		"\xf4\x8f\xbf\xbf", /* U+10FFFF */
		"gr\xc3\xbc\xc3\x9f \xe6\x97\xa5\xe6\x9c\xac kernel \xf0\x9f\x9a\x80",
	};
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char want[128];
		snprintf(want, sizeof(want), "\"%s\"", ok[i]);
		ck_assert_str_eq(esc(&j, ok[i], strlen(ok[i])), want);
	}
	tp_json_free(&j);
}
END_TEST

#define FFFD "\xef\xbf\xbd"

START_TEST(test_utf8_invalid)
{
	/* Each maximal ill-formed subpart becomes one U+FFFD (Unicode's
	 * recommended practice), and the next byte is examined afresh. */
	static const struct {
		const char *in;
		size_t n;
		const char *want;
	} cases[] = {
		{ "\xc0\xaf", 2, FFFD FFFD },			/* overlong '/' */
		{ "\xc1\xbf", 2, FFFD FFFD },			/* overlong, C1 */
		{ "\xe0\x80\xaf", 3, FFFD FFFD FFFD },		/* overlong, 3 bytes */
		{ "\xe0\x9f\xbf", 3, FFFD FFFD FFFD },		/* overlong U+07FF */
		{ "\xf0\x80\x80\xaf", 4, FFFD FFFD FFFD FFFD }, /* overlong, 4 bytes */
		{ "\xf0\x8f\xbf\xbf", 4, FFFD FFFD FFFD FFFD }, /* overlong U+FFFF */
		{ "\xed\xa0\x80", 3, FFFD FFFD FFFD },		/* surrogate U+D800 */
		{ "\xed\xbf\xbf", 3, FFFD FFFD FFFD },		/* surrogate U+DFFF */
		{ "\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD }, /* U+110000 */
		{ "\xf5\x80\x80\x80", 4, FFFD FFFD FFFD FFFD }, /* F5 lead */
		{ "\xf8\x88\x80\x80\x80", 5, FFFD FFFD FFFD FFFD FFFD }, /* 5-byte form */
		{ "\xfe", 1, FFFD },
		{ "\xff", 1, FFFD },
		{ "\x80", 1, FFFD },				/* stray continuation */
		{ "\xbf\x80", 2, FFFD FFFD },
		{ "\xc3", 1, FFFD },				/* truncated at the end */
		{ "\xe2\x82", 2, FFFD },
		{ "\xf0\x9f\x98", 3, FFFD },
		{ "\xc3" "A", 2, FFFD "A" },			/* truncated mid-string */
		{ "\xe2\x82" "A", 3, FFFD "A" },
		{ "\xf0\x9f\x98" "A", 4, FFFD "A" },
		{ "\xe2" "A\xe2\x82\xac", 5, FFFD "A\xe2\x82\xac" },
		{ "a\xe2\x82" "b\xc3\xa9", 6, "a" FFFD "b\xc3\xa9" },
		{ "\xe2\x82\n", 3, FFFD "\\n" },		/* cut by an escape */
		{ "\xe2\x82\"", 3, FFFD "\\\"" },
	};
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "\"%s\"", cases[i].want);
		ck_assert_str_eq(esc(&j, cases[i].in, cases[i].n), want);
	}
	tp_json_free(&j);
}
END_TEST

START_TEST(test_escape_function)
{
	char dst[6 * 8 + 1];
	size_t n = tp_json_escape(dst, "a\x01\"\xff\xc3\xa9", 6);
	ck_assert_str_eq(dst, "a\\u0001\\\"" FFFD "\xc3\xa9");
	ck_assert_uint_eq(n, strlen(dst));
	/* Worst case: six output bytes per input byte. */
	n = tp_json_escape(dst, "\x01\x02\x03\x04\x05\x06\x07\x0b", 8);
	ck_assert_uint_eq(n, 48);
}
END_TEST

START_TEST(test_long_strings)
{
	/* Longer than one escaping chunk (64 KiB): sequences straddling the
	 * chunk boundary must come out as if unchunked. */
	size_t n = 300000;
	char *in = malloc(n);
	ck_assert_ptr_nonnull(in);
	for (size_t i = 0; i < n; i++)
		in[i] = (char)('a' + i % 26);
	for (size_t b = 65536; b < n; b += 65536) {
		memcpy(in + b - 1, "\xe2\x82\xac", 3); /* valid, straddles */
		memcpy(in + b - 8, "\xf0\x9f\x98", 3);	/* truncated */
		in[b + 5] = '\n';
		in[b + 9] = '\xed';			/* ill-formed lead */
	}
	memcpy(in + n - 2, "\xe2\x82", 2); /* truncated at the very end */
	char *want = malloc(6 * n + 3);
	ck_assert_ptr_nonnull(want);
	want[0] = '"';
	size_t w = tp_json_escape(want + 1, in, n);
	want[1 + w] = '"';
	want[2 + w] = '\0';

	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	tp_json_strn(&j, in, n);
	ck_assert_uint_eq(j.len, w + 2);
	ck_assert_int_eq(memcmp(j.buf, want, w + 2), 0);
	tp_json_free(&j);
	free(in);
	free(want);
}
END_TEST

START_TEST(test_grows_without_sink)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (int i = 0; i < 500000; i++)
		tp_json_lit(&j, "0123456789");
	ck_assert_uint_eq(j.len, 5000000);
	ck_assert_uint_ge(j.cap, 5000000);
	ck_assert_int_eq(tp_json_flush(&j), 0);
	ck_assert_uint_eq(j.len, 5000000); /* no sink: kept */
	ck_assert_int_eq(memcmp(j.buf + 4999990, "0123456789", 10), 0);
	tp_json_free(&j);
}
END_TEST

static char *make_dir(void)
{
	char *d = strdup("/tmp/tp-json-test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)sz + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return b;
}

/* The same output through a sink (crossing the 1 MiB buffer many times, plus
 * pieces larger than the buffer) and without one must be identical. */
static void write_events(struct tp_json *j)
{
	static char big[3 << 19]; /* 1.5 MiB, larger than the buffer */
	memset(big, 'r', sizeof(big));
	tp_json_lit(j, "{\"traceEvents\":[");
	for (int i = 0; i < 40000; i++) {
		tp_json_lit(j, "{\"ph\":\"X\",\"name\":");
		tp_json_str(j, i % 7 ? "cudaLaunchKernel" : "bad\xff\n");
		tp_json_lit(j, ",\"ts\":");
		tp_json_us(j, (int64_t)i * 1234567);
		tp_json_lit(j, ",\"tid\":");
		tp_json_u64(j, (uint64_t)i);
		tp_json_lit(j, "},");
		if (i == 20000) {
			tp_json_raw(j, big, sizeof(big));
			tp_json_strn(j, big, 200000); /* escaped in chunks */
		}
	}
	tp_json_lit(j, "{}]}");
}

START_TEST(test_flush_to_sink)
{
	char *dir = make_dir();
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, "t.json", TP_SINK_PLAIN, 0, 0), 0);
	struct tp_json j, ref;
	ck_assert_int_eq(tp_json_init(&j, s), 0);
	ck_assert_int_eq(tp_json_init(&ref, NULL), 0);
	write_events(&j);
	write_events(&ref);
	ck_assert_uint_eq(j.cap, TP_JSON_BUF); /* a sink never makes it grow */
	ck_assert_uint_gt(ref.len, 3u * TP_JSON_BUF);
	ck_assert_int_eq(tp_json_flush(&j), 0);
	ck_assert_uint_eq(j.len, 0);
	ck_assert_uint_eq(tp_json_total(&j), ref.len);
	ck_assert_uint_eq(tp_sink_bytes_out(s), ref.len);
	char path[4096];
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), 0);
	size_t n;
	char *got = read_file(path, &n);
	ck_assert_uint_eq(n, ref.len);
	ck_assert_int_eq(memcmp(got, ref.buf, n), 0);
	free(got);
	tp_json_free(&j);
	tp_json_free(&ref);
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(test_sticky_error)
{
	/* A file-size limit makes write(2) fail with EFBIG after 1 MiB, which
	 * stands in for a full disk. */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { 1 << 20, 1 << 20 };
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	char *dir = make_dir();
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, "t.json", TP_SINK_PLAIN, 0, 0), 0);
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, s), 0);
	for (int i = 0; i < 300000; i++)
		tp_json_lit(&j, "0123456789");
	ck_assert_int_eq(tp_json_error(&j), -EFBIG);
	ck_assert_int_eq(tp_json_flush(&j), -EFBIG);
	size_t len = j.len;
	tp_json_lit(&j, "more");
	tp_json_u64(&j, 1);
	tp_json_str(&j, "x");
	ck_assert_ptr_null(tp_json_reserve(&j, 1));
	ck_assert_uint_eq(j.len, len);
	ck_assert_int_eq(tp_json_error(&j), -EFBIG);
	char path[4096];
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), -EFBIG);
	ck_assert_int_eq(rmdir(dir), 0); /* the temporary file is gone */
	tp_json_free(&j);
	free(dir);
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_control_chars);
	tcase_add_test(tc, test_quotes_backslash);
	tcase_add_test(tc, test_fast_path_positions);
	tcase_add_test(tc, test_utf8_valid);
	tcase_add_test(tc, test_utf8_invalid);
	tcase_add_test(tc, test_escape_function);
	tcase_add_test(tc, test_long_strings);
	tcase_add_test(tc, test_grows_without_sink);
	tcase_add_test(tc, test_flush_to_sink);
	tcase_add_test(tc, test_sticky_error);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(json_suite());
}
