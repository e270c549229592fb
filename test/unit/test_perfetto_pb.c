/* Unit tests for format/pb.h, the Perfetto encoder: the bytes of varints,
 * UTF-8 text and nested lengths (the writer's decoded output:
 * test_perfetto_writer.c). */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/pb.h"
#include "format/sink.h"
#include "format/writer.h"

#include "test/unit/check_main.h"

/* ---- the encoder -------------------------------------------------------------- */

START_TEST(test_varint_bytes)
{
	uint8_t b[16], *e;
	e = tp_pb_put_varint(b, 300);
	ck_assert_int_eq(e - b, 2);
	ck_assert_int_eq(b[0], 0xac);
	ck_assert_int_eq(b[1], 0x02);
	e = tp_pb_put_varint(b, 0);
	ck_assert_int_eq(e - b, 1);
	ck_assert_int_eq(b[0], 0);
	e = tp_pb_put_varint(b, UINT64_MAX);
	ck_assert_int_eq(e - b, 10);
	ck_assert_int_eq(b[9], 0x01);
	/* A negative int64 is its two's complement: 10 bytes. */
	e = tp_pb_put_int(b, 1, -1);
	ck_assert_int_eq(e - b, 11);
	ck_assert_int_eq(b[0], 0x08);
	/* field 47, fixed64: tag (47 << 3 | 1) = 377 = f9 02. */
	e = tp_pb_put_fixed64(b, 47, 0x0102030405060708ull);
	ck_assert_int_eq(e - b, 10);
	ck_assert_int_eq(b[0], 0xf9);
	ck_assert_int_eq(b[1], 0x02);
	ck_assert_int_eq(b[2], 0x08);
	ck_assert_int_eq(b[9], 0x01);
	ck_assert_uint_eq(tp_pb_varint_len(127), 1);
	ck_assert_uint_eq(tp_pb_varint_len(128), 2);
}
END_TEST

/* A string field's text (tp_pb_put_text): bytes as given when they are
 * UTF-8, each invalid sequence (maximal subpart) replaced by U+FFFD, within
 * TP_PB_TEXT_ROOM. */
static void text_is(const char *in, size_t n, const char *want, size_t wn)
{
	uint8_t b[512], *e;
	ck_assert_uint_le(TP_PB_TAG_MAX + TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(n), sizeof(b));
	e = tp_pb_put_text(b, 6, in, n);
	ck_assert_int_eq(b[0], 6 << 3 | 2);
	ck_assert_uint_eq(b[1], wn); /* one varint byte below 128 */
	ck_assert_uint_eq((size_t)(e - b), 2 + wn);
	ck_assert_msg(!memcmp(b + 2, want, wn), "text of %zu bytes not as wanted", n);
	ck_assert_uint_le((size_t)(e - b), TP_PB_TAG_MAX + TP_PB_VARINT_MAX + TP_PB_TEXT_ROOM(n));
}

#define TEXT_IS(in, want) text_is(in, sizeof(in) - 1, want, sizeof(want) - 1)
#define FFFD "\xef\xbf\xbd"

START_TEST(test_text_utf8)
{
	TEXT_IS("cudaLaunchKernel", "cudaLaunchKernel");
	TEXT_IS("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	TEXT_IS("a\xff" "b", "a" FFFD "b");
	TEXT_IS("bad \xc3(", "bad " FFFD "(");
	/* A name cut inside a character (a thread name at 15 bytes). */
	TEXT_IS("\xe2\x82\xac\xe2\x82", "\xe2\x82\xac" FFFD);
	/* A surrogate and an overlong form: one U+FFFD a byte. */
	TEXT_IS("\xed\xa0\x80", FFFD FFFD FFFD);
	TEXT_IS("\xc0\xaf", FFFD FFFD);
	/* The worst case: every byte invalid, three times as long. */
	char in[100], want[300];
	memset(in, 0xff, sizeof(in));
	for (size_t i = 0; i < sizeof(in); i++)
		memcpy(want + 3 * i, FFFD, 3);
	uint8_t b[400], *e = tp_pb_put_text(b, 6, in, sizeof(in));
	ck_assert_uint_eq((size_t)(e - b), 1 + 2 + sizeof(want));
	ck_assert(!memcmp(e - sizeof(want), want, sizeof(want)));
}
END_TEST

/* A nested message of n body bytes: its length takes 1, 2 or (redundantly) 4
 * bytes, and the body follows it. */
static size_t nested(uint8_t *buf, size_t n, uint8_t **body)
{
	uint8_t *m, *d = tp_pb_open(buf, 1, &m);
	/* As the writer does: room for the slot's widest form. */
	ck_assert_uint_ge(40000 - (size_t)(d - buf), n + 3);
	memset(d, 'x', n);
	d[0] = 'a';
	d[n - 1] = 'z';
	d = tp_pb_close(m, d + n);
	*body = m;
	return (size_t)(d - buf);
}

START_TEST(test_nested_lengths)
{
	static uint8_t buf[40000];
	uint8_t *m;
	ck_assert_uint_eq(nested(buf, 5, &m), 1 + 1 + 5);
	ck_assert_int_eq(m[0], 5);
	ck_assert_int_eq(m[1], 'a');
	ck_assert_int_eq(m[5], 'z');
	ck_assert_uint_eq(nested(buf, 200, &m), 1 + 2 + 200);
	ck_assert_int_eq(m[0], (200 & 0x7f) | 0x80);
	ck_assert_int_eq(m[1], 200 >> 7);
	ck_assert_int_eq(m[2], 'a');
	ck_assert_int_eq(m[201], 'z');
	ck_assert_uint_eq(nested(buf, 20000, &m), 1 + 4 + 20000);
	uint64_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint64_t)(m[i] & 0x7f) << (7 * i);
	ck_assert_uint_eq(v, 20000);
	ck_assert_int_eq(m[2] & 0x80, 0x80);
	ck_assert_int_eq(m[3] & 0x80, 0);
	ck_assert_int_eq(m[4], 'a');
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("perfetto_pb");
	TCase *tc = tcase_create("encoder");
	tcase_add_test(tc, test_varint_bytes);
	tcase_add_test(tc, test_text_utf8);
	tcase_add_test(tc, test_nested_lengths);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(suite());
}
