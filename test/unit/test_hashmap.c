/* Unit tests for common/hash.h and common/hashmap.c: the one hash function
 * family and the one open-addressing map (issue 23 item 2).  Collisions are
 * made on purpose (keys searched for a chosen home slot), so that clusters,
 * deletion inside them and wraparound at the array's end are exercised, and
 * a random sequence of operations is checked against a plain array. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/hashmap.h"

#include "test/unit/check_main.h"

/* A fresh map has 64 slots (hashmap.c's HM_MIN_CAP) until its 33rd key. */
#define CAP0 64

/* The next key after *from whose home slot in a table of cap slots is home. */
static uint64_t key_with_home(uint64_t *from, size_t cap, size_t home)
{
	for (uint64_t k = *from + 1;; k++)
		if ((tp_hash_u64(k) & (cap - 1)) == home) {
			*from = k;
			return k;
		}
}

static size_t slot_of(const struct tp_map *m, uint64_t key)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key == key)
			return i;
	return (size_t)-1;
}

START_TEST(test_put_get_replace)
{
	struct tp_map m = { 0 };
	ck_assert_ptr_null(tp_map_get(&m, 5));
	ck_assert_int_eq(tp_map_put(&m, 5, 50, 0), 0);
	ck_assert_int_eq(tp_map_put(&m, 6, 60, 0), 0);
	ck_assert_int_eq(tp_map_put(&m, 5, 55, 0), 0);
	ck_assert_uint_eq(m.n, 2);
	ck_assert_uint_eq(tp_map_get(&m, 5)->val, 55);
	ck_assert_uint_eq(tp_map_get(&m, 6)->val, 60);
	ck_assert_int_eq(tp_map_put(&m, 6, 61, 99), 0);
	ck_assert_uint_eq(tp_map_get(&m, 6)->aux, 99);
	ck_assert_ptr_null(tp_map_get(&m, 7));
	ck_assert_int_eq(tp_map_put(&m, 0, 1, 0), -EINVAL);
	ck_assert_ptr_null(tp_map_get(&m, 0));
	int created = -1;
	struct tp_map_slot *v = tp_map_upsert(&m, 7, &created);
	ck_assert_int_eq(created, 1);
	ck_assert_uint_eq(v->val, 0);
	ck_assert_uint_eq(v->aux, 0);
	v->val = 70;
	v->aux = 7;
	v = tp_map_upsert(&m, 7, &created);
	ck_assert_int_eq(created, 0);
	ck_assert_uint_eq(v->val, 70);
	ck_assert_uint_eq(v->aux, 7);
	ck_assert_ptr_null(tp_map_upsert(&m, 0, &created));
	ck_assert_int_eq(created, 0);
	tp_map_free(&m);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_ptr_null(tp_map_get(&m, 5));
}
END_TEST

START_TEST(test_delete_inside_cluster)
{
	/* Five keys with the same home slot form one cluster 10..14; each
	 * deletion must leave every other key reachable. */
	for (int victim = 0; victim < 5; victim++) {
		struct tp_map m = { 0 };
		uint64_t k[5], from = 1000;
		for (int i = 0; i < 5; i++) {
			k[i] = key_with_home(&from, CAP0, 10);
			ck_assert_int_eq(tp_map_put(&m, k[i], 100 + (uint64_t)i, 0), 0);
		}
		ck_assert_uint_eq(m.cap, CAP0);
		ck_assert_uint_eq(slot_of(&m, k[4]), 14);
		struct tp_map_slot old = { 0, 0, 0 };
		ck_assert_int_eq(tp_map_del(&m, k[victim], &old), 1);
		ck_assert_uint_eq(old.key, k[victim]);
		ck_assert_uint_eq(old.val, 100 + (uint64_t)victim);
		ck_assert_int_eq(tp_map_del(&m, k[victim], NULL), 0);
		ck_assert_uint_eq(m.n, 4);
		for (int i = 0; i < 5; i++) {
			struct tp_map_slot *v = tp_map_get(&m, k[i]);
			if (i == victim) {
				ck_assert_ptr_null(v);
			} else {
				ck_assert_msg(v, "key %d lost after deleting key %d", i, victim);
				ck_assert_uint_eq(v->val, 100 + (uint64_t)i);
			}
		}
		/* The cluster closed up: no hole before its end. */
		ck_assert_uint_eq(m.slots[14].key, 0);
		tp_map_free(&m);
	}
}
END_TEST

START_TEST(test_delete_keeps_others_home)
{
	/* Home 10: a, b (slots 10, 11); home 11: c (slot 12); home 12: d
	 * (slot 13).  Deleting a moves b to 10, c to 11, d to 12. */
	struct tp_map m = { 0 };
	uint64_t from = 5000;
	uint64_t a = key_with_home(&from, CAP0, 10), b = key_with_home(&from, CAP0, 10);
	from = 5000;
	uint64_t c = key_with_home(&from, CAP0, 11);
	from = 5000;
	uint64_t d = key_with_home(&from, CAP0, 12);
	uint64_t keys[] = { a, b, c, d };
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tp_map_put(&m, keys[i], (uint64_t)i + 1, 0), 0);
	ck_assert_int_eq(tp_map_del(&m, a, NULL), 1);
	ck_assert_uint_eq(slot_of(&m, b), 10);
	ck_assert_uint_eq(slot_of(&m, c), 11);
	ck_assert_uint_eq(slot_of(&m, d), 12);
	/* A key at its home stays even when a hole opens before it. */
	tp_map_free(&m);
	uint64_t e = key_with_home(&from, CAP0, 20), f;
	from = 9000;
	f = key_with_home(&from, CAP0, 21);
	ck_assert_int_eq(tp_map_put(&m, e, 1, 0), 0);
	ck_assert_int_eq(tp_map_put(&m, f, 2, 0), 0);
	ck_assert_int_eq(tp_map_del(&m, e, NULL), 1);
	ck_assert_uint_eq(slot_of(&m, f), 21);
	tp_map_free(&m);
}
END_TEST

START_TEST(test_wraparound)
{
	/* Three keys at home 63 take slots 63, 0 and 1; one at home 0 goes to
	 * slot 2.  Deleting across the end must pull them back. */
	struct tp_map m = { 0 };
	uint64_t from = 77, k[3];
	for (int i = 0; i < 3; i++) {
		k[i] = key_with_home(&from, CAP0, CAP0 - 1);
		ck_assert_int_eq(tp_map_put(&m, k[i], (uint64_t)i + 1, 0), 0);
	}
	from = 77;
	uint64_t z = key_with_home(&from, CAP0, 0);
	ck_assert_int_eq(tp_map_put(&m, z, 9, 0), 0);
	ck_assert_uint_eq(slot_of(&m, k[0]), CAP0 - 1);
	ck_assert_uint_eq(slot_of(&m, k[1]), 0);
	ck_assert_uint_eq(slot_of(&m, k[2]), 1);
	ck_assert_uint_eq(slot_of(&m, z), 2);
	ck_assert_int_eq(tp_map_del(&m, k[0], NULL), 1);
	ck_assert_uint_eq(slot_of(&m, k[1]), CAP0 - 1);
	ck_assert_uint_eq(slot_of(&m, k[2]), 0);
	ck_assert_uint_eq(slot_of(&m, z), 1);
	for (int i = 1; i < 3; i++)
		ck_assert_uint_eq(tp_map_get(&m, k[i])->val, (uint64_t)i + 1);
	ck_assert_uint_eq(tp_map_get(&m, z)->val, 9);
	tp_map_free(&m);
}
END_TEST

START_TEST(test_growth_and_limit)
{
	struct tp_map m = { 0 };
	for (uint64_t k = 1; k <= 20000; k++)
		ck_assert_int_eq(tp_map_put(&m, k * 4096, k, 0), 0);
	ck_assert_uint_eq(m.n, 20000);
	ck_assert_uint_eq(m.cap & (m.cap - 1), 0);
	ck_assert_uint_ge(m.cap, 40000);
	for (uint64_t k = 1; k <= 20000; k++) {
		struct tp_map_slot *v = tp_map_get(&m, k * 4096);
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_eq(v->val, k);
	}
	tp_map_free(&m);

	/* A capped map fails its 65th key with -ENOSPC and keeps the rest. */
	struct tp_map c = { .max_cap = 128 };
	for (uint64_t k = 1; k <= 64; k++)
		ck_assert_int_eq(tp_map_put(&c, k, k, 0), 0);
	ck_assert_int_eq(tp_map_put(&c, 65, 65, 0), -ENOSPC);
	ck_assert_int_eq(tp_map_put(&c, 64, 640, 0), 0); /* present: no growth needed */
	ck_assert_uint_eq(c.n, 64);
	ck_assert_uint_eq(tp_map_get(&c, 64)->val, 640);
	tp_map_free(&c);
	ck_assert_uint_eq(c.max_cap, 128);
}
END_TEST

/* Random puts and deletes over a small key range (dense clusters), checked
 * after each step against a plain array. */
START_TEST(test_against_model)
{
	enum { KEYS = 200, STEPS = 200000 };
	static uint64_t model[KEYS + 1];
	static unsigned char present[KEYS + 1];
	struct tp_map m = { 0 };
	size_t n = 0;
	srand(23);
	for (int step = 0; step < STEPS; step++) {
		uint64_t k = 1 + (uint64_t)(rand() % KEYS);
		if (rand() % 3) {
			uint64_t v = (uint64_t)rand();
			ck_assert_int_eq(tp_map_put(&m, k, v, 0), 0);
			n += !present[k];
			present[k] = 1;
			model[k] = v;
		} else {
			ck_assert_int_eq(tp_map_del(&m, k, NULL), present[k]);
			n -= present[k];
			present[k] = 0;
		}
		ck_assert_uint_eq(m.n, n);
		if (step % 97 == 0)
			for (uint64_t j = 1; j <= KEYS; j++) {
				struct tp_map_slot *v = tp_map_get(&m, j);
				ck_assert_msg(present[j] ? v && v->val == model[j] : !v,
					      "step %d: key %llu is %s", step,
					      (unsigned long long)j,
					      v ? "wrong or unexpected" : "missing");
			}
	}
	tp_map_free(&m);
}
END_TEST

START_TEST(test_iterate)
{
	struct tp_map m = { 0 };
	for (uint64_t k = 1; k <= 500; k++)
		ck_assert_int_eq(tp_map_put(&m, k, k * 3, 0), 0);
	static unsigned char seen[501];
	size_t count = 0;
	for (const struct tp_map_slot *s = NULL; (s = tp_map_next(&m, s));) {
		ck_assert_uint_le(s->key, 500);
		ck_assert_uint_eq(s->val, s->key * 3);
		ck_assert_int_eq(seen[s->key], 0);
		seen[s->key] = 1;
		count++;
	}
	ck_assert_uint_eq(count, 500);
	tp_map_free(&m);
	ck_assert_ptr_null(tp_map_next(&m, NULL));
}
END_TEST

struct filter_ctx {
	unsigned calls[4096];
};

static int keep_even(const struct tp_map_slot *s, void *ctx)
{
	struct filter_ctx *c = ctx;
	c->calls[s->val]++;
	return s->key % 2 == 0;
}

START_TEST(test_filter_each_once)
{
	/* A cluster across the end (home 62 and 63) and one inside; filter
	 * deletes the odd keys while it walks. */
	struct tp_map m = { 0 };
	uint64_t keys[24], from = 0;
	size_t nk = 0;
	size_t homes[] = { 62, 62, 63, 63, 63, 0, 5, 5, 5, 6 };
	for (size_t h = 0; h < sizeof(homes) / sizeof(homes[0]); h++) {
		keys[nk] = key_with_home(&from, CAP0, homes[h]);
		ck_assert_int_eq(tp_map_put(&m, keys[nk], nk, 0), 0);
		nk++;
	}
	ck_assert_uint_eq(m.cap, CAP0);
	static struct filter_ctx c;
	tp_map_filter(&m, keep_even, &c);
	size_t even = 0;
	for (size_t i = 0; i < nk; i++) {
		ck_assert_msg(c.calls[i] == 1, "keep() called %u times for key %zu", c.calls[i], i);
		struct tp_map_slot *v = tp_map_get(&m, keys[i]);
		if (keys[i] % 2 == 0) {
			even++;
			ck_assert_ptr_nonnull(v);
			ck_assert_uint_eq(v->val, i);
		} else {
			ck_assert_ptr_null(v);
		}
	}
	ck_assert_uint_eq(m.n, even);
	tp_map_free(&m);
}
END_TEST

static int keep_few(const struct tp_map_slot *s, void *ctx)
{
	(void)ctx;
	return s->key % 1000 == 0;
}

START_TEST(test_filter_shrinks)
{
	/* After a burst, a window's filter leaves few entries: the table
	 * shrinks, and what is left is still found. */
	struct tp_map m = { 0 };
	for (uint64_t k = 1; k <= 10000; k++)
		ck_assert_int_eq(tp_map_put(&m, k, k, k + 1), 0);
	size_t big = m.cap;
	tp_map_filter(&m, keep_few, NULL);
	ck_assert_uint_eq(m.n, 10);
	ck_assert_uint_lt(m.cap, big);
	ck_assert_uint_eq(m.cap, CAP0);
	for (uint64_t k = 1000; k <= 10000; k += 1000) {
		struct tp_map_slot *v = tp_map_get(&m, k);
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_eq(v->aux, k + 1);
	}
	tp_map_free(&m);
}
END_TEST

START_TEST(test_hash_spreads_aligned)
{
	/* 1024 page-aligned pointers into 1024 buckets: a hash that ignored
	 * the high bits would put them all in one. */
	static unsigned char used[1024];
	size_t distinct = 0;
	for (uint64_t i = 0; i < 1024; i++) {
		size_t b = tp_hash_u64(0x7f0000000000ull + i * 4096) & 1023;
		distinct += !used[b];
		used[b] = 1;
	}
	ck_assert_uint_gt(distinct, 550); /* random: ~647 */
	ck_assert_uint_ne(tp_hash_pair(1, 2), tp_hash_pair(2, 1));
	ck_assert_uint_ne(tp_hash_pair(5, 0), tp_hash_pair(0, 5));
	/* Lengths count: zero bytes are not padding. */
	ck_assert_uint_ne(tp_hash_bytes("\0", 1), tp_hash_bytes("\0\0", 2));
	ck_assert_uint_ne(tp_hash_bytes("", 0), tp_hash_bytes("\0", 1));
	ck_assert_uint_ne(tp_hash_bytes("abcdefgh1", 9), tp_hash_bytes("abcdefgh2", 9));
	ck_assert_uint_eq(tp_hash_bytes("kernel", 6), tp_hash_bytes("kernel", 6));
	ck_assert_uint_ne(tp_hash_bytes("", 0), 0);
}
END_TEST

START_TEST(test_smap)
{
	struct tp_smap m = { 0 };
	/* Colliding hashes on purpose: the keys' bytes decide. */
	char key[32];
	for (int i = 0; i < 300; i++) {
		int n = snprintf(key, sizeof(key), "name-%d", i);
		uint64_t h = i < 100 ? 42 : tp_hash_bytes(key, (size_t)n);
		ck_assert_ptr_null(tp_smap_find(&m, h, key, (size_t)n));
		struct tp_smap_ent *e = tp_smap_add(&m, h, key, (size_t)n, (uint64_t)i);
		ck_assert_ptr_nonnull(e);
		ck_assert_ptr_ne(e->key, key); /* copied */
	}
	ck_assert_uint_eq(m.n, 300);
	const char *copy0 = tp_smap_find(&m, 42, "name-0", 6)->key;
	for (int i = 0; i < 300; i++) {
		int n = snprintf(key, sizeof(key), "name-%d", i);
		uint64_t h = i < 100 ? 42 : tp_hash_bytes(key, (size_t)n);
		struct tp_smap_ent *e = tp_smap_find(&m, h, key, (size_t)n);
		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(e->val, (uint64_t)i);
		ck_assert_uint_eq(e->len, (uint32_t)n);
		ck_assert(!memcmp(e->key, key, (size_t)n));
	}
	/* The key's copy does not move when the table grows. */
	ck_assert_ptr_eq(tp_smap_find(&m, 42, "name-0", 6)->key, copy0);
	/* A prefix is another key; an empty key is a key. */
	ck_assert_ptr_null(tp_smap_find(&m, 42, "name-1", 5));
	ck_assert_ptr_nonnull(tp_smap_add(&m, tp_hash_bytes("", 0), "", 0, 7));
	ck_assert_uint_eq(tp_smap_find(&m, tp_hash_bytes("", 0), "", 0)->val, 7);
	tp_smap_free(&m);
	ck_assert_ptr_null(tp_smap_find(&m, 42, "name-0", 6));
}
END_TEST

static Suite *hashmap_suite(void)
{
	Suite *s = suite_create("hashmap");
	TCase *tc = tcase_create("hashmap");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_put_get_replace);
	tcase_add_test(tc, test_delete_inside_cluster);
	tcase_add_test(tc, test_delete_keeps_others_home);
	tcase_add_test(tc, test_wraparound);
	tcase_add_test(tc, test_growth_and_limit);
	tcase_add_test(tc, test_against_model);
	tcase_add_test(tc, test_iterate);
	tcase_add_test(tc, test_filter_each_once);
	tcase_add_test(tc, test_filter_shrinks);
	tcase_add_test(tc, test_hash_spreads_aligned);
	tcase_add_test(tc, test_smap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(hashmap_suite());
}
