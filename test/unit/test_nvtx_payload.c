/* Unit tests for collector/nvtx_payload_decode.c: a payload's fields
 * decode by their registered schema of the record's domain only; a field
 * past the bytes the hot path copied, or a schema never registered, is
 * counted and never read; signed fields keep their sign; an enum value
 * with no name stays a number; a record's extras are parsed back. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "collector/nvtx_payload_decode.h"

#include "test/unit/check_main.h"

enum { T_INT = 5, T_UINT64 = 18, T_SIZE = 22 };
#define ENUM_ID ((1ull << 24) + 11)

static const struct tp_arg *find(const struct tp_arg *a, unsigned n, const char *key)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].klen == strlen(key) && !memcmp(a[i].key, key, a[i].klen))
			return &a[i];
	return NULL;
}

static void setup(void)
{
	static int done;
	if (done++)
		return;
	uint64_t v[] = { 0, 2 };
	const char *names[] = { "Sum", "Max" };
	ck_assert_int_eq(tp_nvtx_enum_add(7, ENUM_ID, 4, v, names, 2), 0);
	struct tp_nvtx_payload_entry e[3] = {
		{ .type = T_UINT64, .offset = 0, .name = "NCCL communicator ID" },
		{ .type = T_SIZE, .offset = 8, .name = "Message size [bytes]" },
		{ .type = ENUM_ID, .offset = 16, .name = "Reduction operation" },
	};
	ck_assert_int_eq(tp_nvtx_schema_add(7, 100, e, 3), 0);
	struct tp_nvtx_payload_entry s[2] = {
		{ .type = T_INT, .offset = 0, .name = "Peer rank" },
		{ .type = T_INT, .offset = 4, .name = "other" },
	};
	ck_assert_int_eq(tp_nvtx_schema_add(7, 101, s, 2), 0);
}

START_TEST(test_decode)
{
	setup();
	struct { uint64_t comm, bytes; int op, pad; } p = { 0xab, 4096, 2, 0 };
	struct tp_nvtx_payload_hdr h = { .schema = 100, .copied = sizeof(p), .size = sizeof(p) };
	struct tp_arg a[TP_NVTX_PAYLOAD_ARGS];
	unsigned n = tp_nvtx_payload_args(7, &h, (const unsigned char *)&p, a);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(find(a, n, "comm")->u, 0xab);
	ck_assert_int_eq(find(a, n, "comm")->type, TP_VAL_HEX);
	ck_assert_uint_eq(find(a, n, "bytes")->u, 4096);
	const struct tp_arg *op = find(a, n, "op");
	ck_assert_int_eq(op->type, TP_VAL_STR);
	ck_assert(op->n == 3 && !memcmp(op->s, "Max", 3));
	/* A value the enum does not name: the number. */
	p.op = 9;
	n = tp_nvtx_payload_args(7, &h, (const unsigned char *)&p, a);
	ck_assert_int_eq(find(a, n, "op")->type, TP_VAL_U64);
	ck_assert_uint_eq(find(a, n, "op")->u, 9);
}
END_TEST

START_TEST(test_counted)
{
	setup();
	uint64_t before = tp_nvtx_payload_undecoded();
	int v[2] = { -3, 5 };
	struct tp_nvtx_payload_hdr h = { .schema = 101, .copied = 4, .size = 8 };
	struct tp_arg a[TP_NVTX_PAYLOAD_ARGS];
	/* Only 4 bytes copied: "other" (at 4) is not read, and counted. */
	unsigned n = tp_nvtx_payload_args(7, &h, (const unsigned char *)v, a);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(find(a, n, "peer")->type, TP_VAL_I64);
	ck_assert_int_eq(find(a, n, "peer")->i, -3);
	ck_assert_uint_eq(tp_nvtx_payload_undecoded(), before + 1);
	/* Another domain: its schemas are its own. */
	h.copied = 8;
	ck_assert_uint_eq(tp_nvtx_payload_args(8, &h, (const unsigned char *)v, a), 0);
	ck_assert_uint_eq(tp_nvtx_payload_undecoded(), before + 2);
}
END_TEST

START_TEST(test_record)
{
	unsigned char buf[sizeof(struct tp_record) + 2 * TP_REC_EXTRA_BYTES] = { 0 };
	struct tp_record *r = (struct tp_record *)buf;
	r->nextra = 2;
	r->flags = TP_RF_STRING | TP_RF_PAYLOAD;
	unsigned char *x = buf + sizeof(*r);
	memcpy(x, "ncclSend", 9);
	struct tp_nvtx_payload_hdr h = { .schema = 101, .copied = 8, .size = 8 };
	memcpy(x + 16, &h, sizeof(h));
	int v[2] = { 5, 6 };
	memcpy(x + 16 + sizeof(h), v, 8);
	const struct tp_nvtx_payload_hdr *hp;
	const unsigned char *pl;
	ck_assert_int_eq(tp_nvtx_payload_get(r, &hp, &pl), 1);
	ck_assert_uint_eq(hp->schema, 101);
	ck_assert(!memcmp(pl, v, 8));
	/* A length past the extras is refused, not read. */
	h.copied = 200;
	memcpy(x + 16, &h, sizeof(h));
	ck_assert_int_eq(tp_nvtx_payload_get(r, &hp, &pl), 0);
	r->flags = TP_RF_STRING;
	ck_assert_int_eq(tp_nvtx_payload_get(r, &hp, &pl), 0);
}
END_TEST

static Suite *nvtx_payload_suite(void)
{
	Suite *s = suite_create("nvtx_payload");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_decode);
	tcase_add_test(tc, test_counted);
	tcase_add_test(tc, test_record);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(nvtx_payload_suite());
}
