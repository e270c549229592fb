/* The one hash function family of traceprof: 64-bit keys, pairs of them,
 * and byte strings.  Every open-addressing table (common/hashmap.h and the
 * few tables with a layout of their own) indexes with these, so that a
 * weakness found in one is fixed for all.
 *
 * Keys are mostly pointers (aligned: the low bits are zero) and counters
 * (dense: only the low bits vary); tables take the LOW bits of the hash
 * (h & (cap - 1)), so every input bit must reach them.  tp_hash_u64 is
 * MurmurHash3's fmix64 finaliser.  The tables this replaced used only its
 * first half (one multiply): 1024 page-aligned pointers then filled 366 of
 * 1024 buckets, where a random function fills ~647 (test_hashmap checks
 * this); the second multiply costs a few cycles.  Inline: callers hash on
 * the flush thread's per-event path. */
#ifndef TP_COMMON_HASH_H
#define TP_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t tp_hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* Two keys, order-sensitive: (a, b) and (b, a) hash differently (a frame
 * tree's (ip, parent) nodes). */
static inline uint64_t tp_hash_pair(uint64_t a, uint64_t b)
{
	return tp_hash_u64(a ^ (b * 0x9e3779b97f4a7c15ull));
}

/* n bytes at p, 8 at a time; never 0, so that a table may keep 0 for an
 * empty slot's hash (common/hashmap.h's tp_smap does). */
static inline uint64_t tp_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	if (n) {
		uint64_t v = 0;
		memcpy(&v, s, n);
		h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
	}
	h ^= h >> 32;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h ? h : 1;
}

#endif
