/* Unit tests for format/digest.c: the samples' digest is the same however
 * the bytes arrive (one write, byte by byte, random pieces); the samples sit
 * where the rule says (k * stride, 64 bytes, fewer than 64 of them, the
 * stride doubling); a change inside a sample changes the digest and one
 * between samples does not; the value is the CRC-32 of the samples' CRC-32s
 * (what the reader, traces/aggtable.py, recomputes). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "format/digest.h"

#include "test/unit/check_main.h"

static unsigned char *bytes_of(size_t n, unsigned seed)
{
	unsigned char *b = malloc(n);
	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (unsigned char)(seed >> 16);
	}
	return b;
}

static void whole(struct tp_digest *d, const unsigned char *b, size_t n)
{
	tp_digest_init(d);
	tp_digest_add(d, b, n);
}

/* The digest as the reader computes it: samples read at k * stride. */
static uint32_t by_rule(const unsigned char *b, size_t n, uint64_t stride, uint32_t count)
{
	unsigned char le[4 * TP_DIGEST_MAX];
	for (uint32_t k = 0; k < count; k++) {
		ck_assert_uint_le(k * stride + TP_DIGEST_SAMPLE, n);
		uint32_t c = (uint32_t)crc32(0, b + k * stride, TP_DIGEST_SAMPLE);
		le[4 * k] = (unsigned char)c;
		le[4 * k + 1] = (unsigned char)(c >> 8);
		le[4 * k + 2] = (unsigned char)(c >> 16);
		le[4 * k + 3] = (unsigned char)(c >> 24);
	}
	return (uint32_t)crc32(0, le, 4 * count);
}

START_TEST(test_pieces)
{
	size_t sizes[] = { 0, 63, 64, 4096, 4160, 4161, 300000, 262144 + 64, 5000000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned char *b = bytes_of(n ? n : 1, (unsigned)i);
		struct tp_digest one, bytewise, pieces;
		whole(&one, b, n);
		tp_digest_init(&bytewise);
		for (size_t j = 0; j < n && n <= 300000; j++)
			tp_digest_add(&bytewise, b + j, 1);
		tp_digest_init(&pieces);
		unsigned seed = 7;
		for (size_t j = 0; j < n;) {
			seed = seed * 1103515245u + 12345u;
			size_t k = (seed >> 8) % 9000;
			if (k > n - j)
				k = n - j;
			tp_digest_add(&pieces, b + j, k);
			j += k;
		}
		ck_assert_uint_eq(one.len, n);
		ck_assert_uint_eq(pieces.len, n);
		ck_assert_uint_eq(tp_digest_value(&pieces), tp_digest_value(&one));
		ck_assert_uint_eq(pieces.n, one.n);
		if (n <= 300000) {
			ck_assert_uint_eq(tp_digest_value(&bytewise), tp_digest_value(&one));
			ck_assert_uint_eq(bytewise.stride, one.stride);
		}
		/* The rule: fewer than TP_DIGEST_MAX samples, the next one not
		 * complete, the last one complete; the digest of those. */
		ck_assert_uint_lt(one.n, TP_DIGEST_MAX);
		ck_assert_uint_gt(one.n * one.stride + TP_DIGEST_SAMPLE, n);
		if (one.n)
			ck_assert_uint_le((one.n - 1) * one.stride + TP_DIGEST_SAMPLE, n);
		ck_assert_uint_eq(tp_digest_value(&one), by_rule(b, n, one.stride, one.n));
		free(b);
	}
}
END_TEST

START_TEST(test_stride_doubles)
{
	/* 64 samples at 4096 complete at 63 * 4096 + 64 bytes: then 32 at 8192. */
	size_t n = 63 * 4096 + 64;
	unsigned char *b = bytes_of(n, 1);
	struct tp_digest d;
	whole(&d, b, n - 1);
	ck_assert_uint_eq(d.stride, TP_DIGEST_STRIDE0);
	ck_assert_uint_eq(d.n, 63);
	tp_digest_add(&d, b + n - 1, 1);
	ck_assert_uint_eq(d.stride, 2 * TP_DIGEST_STRIDE0);
	ck_assert_uint_eq(d.n, TP_DIGEST_MAX / 2);
	free(b);
}
END_TEST

START_TEST(test_changes)
{
	size_t n = 1000000;
	unsigned char *b = bytes_of(n, 3);
	struct tp_digest d, e;
	whole(&d, b, n);
	uint64_t s = d.stride;
	/* Inside sample 5: seen. */
	b[5 * s + 17] ^= 1;
	whole(&e, b, n);
	ck_assert_uint_ne(tp_digest_value(&e), tp_digest_value(&d));
	b[5 * s + 17] ^= 1;
	/* Between samples 5 and 6: not seen (the documented limit). */
	b[5 * s + TP_DIGEST_SAMPLE + 100] ^= 1;
	whole(&e, b, n);
	ck_assert_uint_eq(tp_digest_value(&e), tp_digest_value(&d));
	/* One byte fewer: the length differs. */
	whole(&e, b, n - 1);
	ck_assert_uint_ne(e.len, d.len);
	free(b);
}
END_TEST

static Suite *digest_suite(void)
{
	Suite *s = suite_create("digest");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_pieces);
	tcase_add_test(tc, test_stride_doubles);
	tcase_add_test(tc, test_changes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(digest_suite());
}
