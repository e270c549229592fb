/* Unit tests for format/json.c's number formatting: integers, the
 * microsecond times, doubles and hex (escaping and buffering: test_json.c). */
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

START_TEST(test_integers)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	static const struct {
		uint64_t v;
		const char *s;
	} u[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ 9, "9" },
		{ 10, "10" },
		{ 99, "99" },
		{ 100, "100" },
		{ 9999, "9999" },
		{ 10000, "10000" },
		{ UINT32_MAX, "4294967295" },
		{ 10000000000000000000ull, "10000000000000000000" },
		{ UINT64_MAX, "18446744073709551615" },
	};
	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		jreset(&j);
		tp_json_u64(&j, u[i].v);
		ck_assert_str_eq(jout(&j), u[i].s);
	}
	static const struct {
		int64_t v;
		const char *s;
	} s[] = {
		{ 0, "0" },
		{ -1, "-1" },
		{ -10, "-10" },
		{ INT64_MAX, "9223372036854775807" },
		{ INT64_MIN, "-9223372036854775808" },
	};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		jreset(&j);
		tp_json_i64(&j, s[i].v);
		ck_assert_str_eq(jout(&j), s[i].s);
	}
	/* Every digit count, against printf. */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = x >> (x % 64);
		char want[32];
		snprintf(want, sizeof(want), "%" PRIu64, v);
		jreset(&j);
		tp_json_u64(&j, v);
		ck_assert_str_eq(jout(&j), want);
		snprintf(want, sizeof(want), "%" PRId64, (int64_t)v);
		jreset(&j);
		tp_json_i64(&j, (int64_t)v);
		ck_assert_str_eq(jout(&j), want);
	}
	tp_json_free(&j);
}
END_TEST

START_TEST(test_us)
{
	static const struct {
		int64_t ns;
		const char *s;
	} c[] = {
		{ 0, "0.000" },
		{ 1, "0.001" },
		{ 999, "0.999" },
		{ 1000, "1.000" },
		{ 1001, "1.001" },
		{ 1234567, "1234.567" },
		{ -5, "-0.005" },
		{ -999, "-0.999" },
		{ -1000, "-1.000" },
		{ -1234567, "-1234.567" },
		{ 86400000000000ll, "86400000000.000" },
		{ INT64_MAX, "9223372036854775.807" },
		{ INT64_MIN, "-9223372036854775.808" },
	};
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		jreset(&j);
		tp_json_us(&j, c[i].ns);
		ck_assert_str_eq(jout(&j), c[i].s);
	}
	tp_json_free(&j);
}
END_TEST

/* Every digit count, both sides of each power of ten (10^8 and 10^16 ns
 * bound the word-at-a-time path), and random values, against snprintf;
 * the bytes after the number are overwritten, never relied on. */
static void us_check(struct tp_json *j, int64_t ns)
{
	char want[40];
	uint64_t u = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(want, sizeof(want), "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", u / 1000,
		 u % 1000);
	jreset(j);
	tp_json_us(j, ns);
	ck_assert_str_eq(jout(j), want);
}
START_TEST(test_us_every_width)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	uint64_t p = 1;
	for (int e = 0; e <= 18; e++, p *= 10) {
		for (int64_t dlt = -3; dlt <= 3; dlt++) {
			int64_t v = (int64_t)p + dlt;
			us_check(&j, v);
			us_check(&j, -v);
		}
	}
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* A random number of digits, then a random value with them. */
		us_check(&j, (int64_t)((x >> 8) % (1ull << (x % 56))));
	}
	tp_json_free(&j);
}
END_TEST

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The word-at-a-time digits equal the digit pairs' for all 10^8 inputs. */
START_TEST(test_digits8_all)
{
	for (uint32_t v = 0; v < 100000000; v++) {
		char a[8], b[8];
		uint64_t w = tp_json__digits8(v);
		memcpy(a, &w, 8);
		tp_json__put8(b, v);
		if (memcmp(a, b, 8))
			ck_abort_msg("%u: %.8s, not %.8s", v, a, b);
	}
}
END_TEST
#endif

/* A JSON number per RFC 8259: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int is_json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return 0;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

START_TEST(test_double)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	static const struct {
		double v;
		const char *s;
	} exact[] = {
		{ 0.0, "0" },
		{ 1.5, "1.5" },
		{ 0.1, "0.1" },
		{ 100.0, "100" },
		{ -2.25, "-2.25" },
		{ 1e20, "1e+20" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 123456.789, "123456.789" },
	};
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		jreset(&j);
		tp_json_double(&j, exact[i].v);
		ck_assert_str_eq(jout(&j), exact[i].s);
	}
	const double special[] = { NAN, -NAN, INFINITY, -INFINITY };
	for (size_t i = 0; i < 4; i++) {
		jreset(&j);
		tp_json_double(&j, special[i]);
		ck_assert_str_eq(jout(&j), "null");
	}
	double vals[] = { 1.0 / 3, 2.0 / 3, M_PI, -M_E, DBL_MAX, -DBL_MAX, DBL_MIN, 5e-324,
			  1e-7, 123e300, -0.0, 9007199254740993.0, 0.1 + 0.2, 1e21, 1e-5 };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		jreset(&j);
		tp_json_double(&j, vals[i]);
		const char *s = jout(&j);
		ck_assert_msg(is_json_number(s), "not a JSON number: %s", s);
		ck_assert_msg(strtod(s, NULL) == vals[i], "%s does not round-trip", s);
	}
	/* Random bit patterns: round trip, JSON syntax, and no longer than
	 * needed (never more than 17 significant digits). */
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v;
		memcpy(&v, &x, sizeof(v));
		jreset(&j);
		tp_json_double(&j, v);
		const char *s = jout(&j);
		if (!isfinite(v)) {
			ck_assert_str_eq(s, "null");
			continue;
		}
		ck_assert_msg(is_json_number(s), "not a JSON number: %s", s);
		ck_assert_msg(strtod(s, NULL) == v, "%s does not round-trip", s);
		ck_assert_uint_le(strlen(s), 24);
	}
	tp_json_free(&j);
}
END_TEST

START_TEST(test_hex_and_raw)
{
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	tp_json_hex(&j, 0);
	tp_json_char(&j, ',');
	tp_json_hex(&j, 0xdeadbeef);
	tp_json_char(&j, ',');
	tp_json_hex(&j, UINT64_MAX);
	tp_json_lit(&j, ",{}");
	tp_json_raw(&j, "[1]xyz", 3);
	ck_assert_str_eq(jout(&j), "\"0x0\",\"0xdeadbeef\",\"0xffffffffffffffff\",{}[1]");
	ck_assert_uint_eq(tp_json_total(&j), j.len);
	tp_json_free(&j);
}
END_TEST

START_TEST(test_hex_every_width)
{
	/* Every digit count, odd and even (the writer goes a byte at a time),
	 * against printf. */
	struct tp_json j;
	ck_assert_int_eq(tp_json_init(&j, NULL), 0);
	for (int k = 0; k < 64; k++) {
		uint64_t vs[] = { 1ull << k, (1ull << k) - 1, (1ull << k) | 0x5a5a5a5a5a5a5a5aull >> (63 - k) };
		for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
			char want[32];
			snprintf(want, sizeof(want), "\"0x%" PRIx64 "\"", vs[i]);
			jreset(&j);
			tp_json_hex(&j, vs[i]);
			ck_assert_str_eq(jout(&j), want);
		}
	}
	tp_json_free(&j);
}
END_TEST

static Suite *json_numbers_suite(void)
{
	Suite *s = suite_create("json_numbers");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_integers);
	tcase_add_test(tc, test_us);
	tcase_add_test(tc, test_us_every_width);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	tcase_add_test(tc, test_digits8_all);
#endif
	tcase_add_test(tc, test_double);
	tcase_add_test(tc, test_hex_and_raw);
	tcase_add_test(tc, test_hex_every_width);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(json_numbers_suite());
}
