/* The trace's exact durations: the digits of "dur" (format/trace_dur.h;
 * the layout that writes them is format/trace.c). */
#include "format/trace_dur.h"

#include <string.h>

#include "common/layout.h"
#include "format/json.h"

/* ---- Durations that end where readers think they end ---------------------
 *
 * Readers parse ts and dur into doubles.  DevTools' trace engine takes a
 * slice's end as ts + dur; speedscope first subtracts the thread's earliest
 * ts (exact: the values are within a factor of two) and then adds dur.
 * Decimal microseconds are not exact binary fractions, so with 3-place
 * durations either sum lands up to an ulp (about 1 ns near 7e12 us, where
 * Kineto's 3-month base puts ts) past the next slice's start, or a child's
 * end past its parent's: DevTools drops such a slice as a partial overlap,
 * speedscope nests the next step inside the one before.
 *
 * So dur is written as r = double(end) - double(ts), where end is the true
 * end in integer ns printed as ts is.  That difference is exact (Sterbenz:
 * end <= 2 ts), and so is any sum (ts - c) + r a reader forms with an exact
 * ts - c: it gives double(end) - c, the same for every slice that ends at
 * that ns, and monotonic in the ns (correct rounding).  Back-to-back slices
 * touch and never overlap, children end inside their parents, for every
 * such reader.  r is a multiple of ulp(ts) = 2^-k, so its exact decimal has
 * k places (10 from 51 days into a base, up to 24 in its first 9 minutes),
 * which is also its shortest decimal; it is within a ns of the true
 * duration (readers that count whole ns, as Perfetto does, see the duration
 * to a ns).  Trailing zeros are cut down to 3 places.
 *
 * Where that does not hold (ts within 9 minutes of the base, or a slice
 * longer than the time since the base) the 3-place duration is written when
 * double(ts) + double(dur) == double(end); else tenths of a ns to 9 places
 * are tried, and last the 3-place duration is trimmed until that sum is not
 * past double(end).
 *
 * Doubles are IEEE binary64 with round-to-nearest on every target this
 * builds for (SSE2 on x86-64, not x87); the volatile sums below are rounded
 * to a double before they are compared, as a JavaScript engine does. */

/* Powers of ten up to 10^9, exact as doubles. */
static const double tr_pow10[10] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };

/* The most fraction digits tr_put_dyadic() writes (k <= TR_DYADIC_MAX_K). */
#define TR_DYADIC_MAX_K 24

/* x / 10^p as a decimal with exactly p places (p <= 9, x >= 0). */
static char *tr_put_fixed(char *d, uint64_t x, unsigned p)
{
	uint64_t div = (uint64_t)tr_pow10[p];
	uint64_t frac = x % div;
	d = tp_json_put_u64(d, x / div);
	*d++ = '.';
	for (unsigned i = p; i > 0; i--) {
		d[i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	return d + p;
}

/* 5^k for k <= 19: frac * 5^k < 10^k fits 64 bits. */
static const uint64_t tr_pow5[20] = {
	1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull,
	1953125ull, 9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull,
	30517578125ull, 152587890625ull, 762939453125ull, 3814697265625ull,
	19073486328125ull,
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The `places` digits of f, zero-padded (3 <= places <= 19, f < 10^places),
 * stored as whole 8-byte words from registers, left to right so that each
 * word overwrites the excess of the one before it.  Up to 5 bytes past the
 * digits are written (places < 8): TR_HEAD_MAX's room has more slack than
 * that, and what follows overwrites them.  Digits formatted into a scratch buffer and copied out with
 * wider loads stalled on store forwarding (the copy waits for the byte-pair
 * stores to retire), every slice; pairs taken from a 64-bit value one
 * division at a time cost twice the instructions. */
static char *tr_put_places(char *d, uint64_t f, unsigned places)
{
	uint64_t w;
	if (places <= 8) {
		w = tp_json__digits8((uint32_t)f) >> (8 * (8 - places));
		memcpy(d, &w, 8);
		return d + places;
	}
	uint64_t hi = f / 100000000;
	if (places <= 16) {
		w = tp_json__digits8((uint32_t)hi) >> (8 * (16 - places));
	} else {
		w = tp_json__digits8((uint32_t)(hi / 100000000)) >> (8 * (24 - places));
		memcpy(d, &w, 8);
		w = tp_json__digits8((uint32_t)(hi % 100000000));
		d += places - 16;
		places = 16;
	}
	memcpy(d, &w, 8);
	w = tp_json__digits8((uint32_t)(f % 100000000));
	memcpy(d + places - 8, &w, 8);
	return d + places;
}
#else
/* The `places` digits of f, zero-padded (3 <= places <= 19, f < 10^places):
 * eight-digit groups of 32-bit pairs (tp_json__put8) into a scratch buffer,
 * then copied by two overlapping fixed-size moves.  Digit pairs taken from a
 * 64-bit value one division at a time cost twice as much, and this runs for
 * every slice. */
static char *tr_put_places(char *d, uint64_t f, unsigned places)
{
	char tmp[24];
	tp_json__put8(tmp + 16, (uint32_t)(f % 100000000));
	if (places > 8) {
		uint64_t hi = f / 100000000;
		tp_json__put8(tmp + 8, (uint32_t)(hi % 100000000));
		if (places > 16)
			tp_json__put8(tmp, (uint32_t)(hi / 100000000));
	}
	const char *s = tmp + sizeof(tmp) - places;
	if (places >= 16) {
		memcpy(d, s, 16);
		memcpy(d + places - 16, s + places - 16, 16);
	} else if (places >= 8) {
		memcpy(d, s, 8);
		memcpy(d + places - 8, s + places - 8, 8);
	} else if (places >= 4) {
		memcpy(d, s, 4);
		memcpy(d + places - 4, s + places - 4, 4);
	} else {
		memcpy(d, s, 2);
		memcpy(d + places - 2, s + places - 2, 2);
	}
	return d + places;
}
#endif

/* m * 2^-k exactly, with at least 3 and at most k places (k <= 24). */
static char *tr_put_dyadic(char *d, uint64_t m, unsigned k)
{
	uint64_t mask = ((uint64_t)1 << k) - 1, frac = m & mask;
	d = tp_json_put_u64(d, m >> k);
	*d++ = '.';
	if (k <= 19) {
		/* frac / 2^k = frac * 5^k / 10^k: the k digits of one integer,
		 * then trailing zeros cut. */
		uint64_t f = frac * tr_pow5[k];
		unsigned places = k < 3 ? 3 : k;
		if (k < 3)
			f *= k == 0 ? 1000 : k == 1 ? 100 : 10;
		tr_put_places(d, f, places);
		/* f = frac * 5^k has exactly ctz(frac) trailing decimal zeros
		 * (frac < 2^k has fewer than k factors of 2, and f has k of
		 * 5), so the length is known without reading the digits back:
		 * a loop over them mispredicts its exit on most slices, and
		 * only once the digits are computed. */
		if (k < 3 || !frac)
			return d + 3;
		unsigned keep = k - (unsigned)__builtin_ctzll(frac);
		return d + (keep < 3 ? 3 : keep);
	}
	unsigned n = 0;
	while (n < 3 || (frac && n < k)) {
		frac *= 10;
		*d++ = (char)('0' + (frac >> k));
		frac &= mask;
		n++;
	}
	return d;
}

/* True when a reader's double(ts) + double(x * 10^-p) equals g: x < 2^53,
 * so double(x) / 10^p is the correctly rounded value of that decimal. */
static int tr_sum_is(double ts, uint64_t x, unsigned p, double g)
{
	volatile double sum = ts + (double)x / tr_pow10[p];
	return sum == g;
}

/* The fallback described above, for times near the base. */
/* The rule's parameters are scripts/layout.spec's (TIME_PLACES,
 * DUR_PLACES_MAX, DUR_TRIM_MAX); tp_json_put_us() writes TIME_PLACES
 * places, and tr_pow10 holds up to 10^DUR_PLACES_MAX. */
_Static_assert(TP_TIME_PLACES == 3, "tp_json_put_us() writes ns as us with 3 places");
_Static_assert(TP_DUR_PLACES_MAX <= 9, "tr_pow10 and tr_put_fixed() go to 10^9");
static char *tr_put_dur_near_base(char *d, uint64_t dur, double ts, double g)
{
	if (tr_sum_is(ts, dur, TP_TIME_PLACES, g))
		return tp_json_put_us(d, (int64_t)dur);
	for (unsigned p = TP_TIME_PLACES + 1; p <= TP_DUR_PLACES_MAX; p++) {
		/* Candidates must stay below 2^53 to be exact as doubles. */
		if (dur >= ((uint64_t)1 << 53) / (uint64_t)tr_pow10[p - TP_TIME_PLACES])
			break;
		/* The p-place decimal nearest g - ts, and its neighbours. */
		uint64_t x = dur * (uint64_t)tr_pow10[p - TP_TIME_PLACES];
		double want = (g - ts) * tr_pow10[p];
		if (want > 0 && want < (double)((uint64_t)1 << 53))
			x = (uint64_t)(want + 0.5);
		if (tr_sum_is(ts, x, p, g))
			return tr_put_fixed(d, x, p);
		if (tr_sum_is(ts, x + 1, p, g))
			return tr_put_fixed(d, x + 1, p);
		if (x > 0 && tr_sum_is(ts, x - 1, p, g))
			return tr_put_fixed(d, x - 1, p);
	}
	/* Bounded: each ns shorter moves the sum down by at least an ulp. */
	for (int k = 0; k < TP_DUR_TRIM_MAX && dur > 0; k++) {
		volatile double sum = ts + (double)dur / tr_pow10[TP_TIME_PLACES];
		if (sum <= g)
			break;
		dur--;
	}
	return tp_json_put_us(d, (int64_t)dur);
}

char *tp_trace_put_dur(char *d, int64_t s, int64_t e)
{
	double ts = (double)s / 1e3, g = (double)e / 1e3;
	d = tp_json_put_raw(d, ",\"dur\":", 7);
	/* ts in [2^x, 2^(x+1)) has ulp 2^(x-52) = 2^-k: x from the exponent
	 * bits (ts > 0 and normal here), 2^k built the same way (exact). */
	uint64_t bits;
	memcpy(&bits, &ts, sizeof(bits));
	int k = 52 - ((int)((bits >> 52) & 0x7ff) - 1023);
	if (s > 0 && g <= 2 * ts && k >= 0 && k <= TR_DYADIC_MAX_K) {
		double r = g - ts, scale; /* r exact */
		uint64_t sb = (uint64_t)(1023 + k) << 52;
		memcpy(&scale, &sb, sizeof(scale));
		return tr_put_dyadic(d, (uint64_t)(r * scale), (unsigned)k);
	}
	return tr_put_dur_near_base(d, (uint64_t)(e - s), ts, g);
}
