#include "format/trace.h"

#include <stdlib.h>
#include <string.h>

#include "common/layout.h"

/* "KEY": for a top-level member named in scripts/layout.spec. */
#define TR_KEY(k) "\"" k "\": "

/* Kineto floors the wall clock to a fixed bucket so that every rank shares
 * the base; its bucket is about three months. */
#define TP_BASE_BUCKET_NS (90LL * 24 * 3600 * 1000000000LL)

int64_t tp_trace_base_time(int64_t wall_ns)
{
	return wall_ns - wall_ns % TP_BASE_BUCKET_NS;
}

void tp_trace_begin(struct tp_trace *t, const struct tp_trace_header *h)
{
	struct tp_json *j = &t->j;
	t->mono_base = h->base_wall_ns - h->wall_offset_ns;
	t->pid = h->pid;
	t->events = 0;
	t->nfirst = 0;
	t->ids_len = 0;
	t->pre_ph = NULL;
	t->pre_cat = NULL;
	tp_json_lit(j, "{\n  " TR_KEY(TP_DOC_SCHEMA_VERSION) "1,\n");
	if (h->trace_name) {
		tp_json_lit(j, "  " TR_KEY(TP_DOC_TRACE_NAME));
		tp_json_str(j, h->trace_name);
		tp_json_lit(j, ",\n");
	}
	tp_json_lit(j, "  " TR_KEY(TP_DOC_DISPLAY_TIME_UNIT) "\"ms\",\n"
		       "  " TR_KEY(TP_DOC_BASE_TIME));
	tp_json_i64(j, h->base_wall_ns);
	tp_json_lit(j, ",\n  " TR_KEY(TP_DOC_DISTRIBUTED_INFO) "{" TR_KEY(TP_DI_BACKEND));
	tp_json_str(j, h->launcher ? h->launcher : TP_LAUNCHER_NONE);
	tp_json_lit(j, ", " TR_KEY(TP_DI_RANK));
	tp_json_i64(j, h->rank);
	tp_json_lit(j, ", " TR_KEY(TP_DI_WORLD_SIZE));
	tp_json_i64(j, h->world_size);
	tp_json_lit(j, ", " TR_KEY(TP_DI_LOCAL_RANK));
	tp_json_i64(j, h->local_rank);
	tp_json_lit(j, ", " TR_KEY(TP_DI_LOCAL_WORLD_SIZE));
	tp_json_i64(j, h->local_world_size);
	tp_json_lit(j, ", " TR_KEY(TP_DI_NODE_RANK));
	tp_json_i64(j, h->node_rank);
	tp_json_lit(j, "},\n  ");
	t->devprops_done = h->device_properties_json != NULL;
	if (t->devprops_done) {
		tp_json_lit(j, TR_KEY(TP_DOC_DEVICE_PROPERTIES));
		tp_json_lit(j, h->device_properties_json);
		tp_json_lit(j, ",\n  ");
	}
	if (h->window_name) {
		tp_json_lit(j, TR_KEY(TP_DOC_WINDOW) "{" TR_KEY(TP_WINDOW_NAME));
		tp_json_str(j, h->window_name);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_PART));
		tp_json_i64(j, h->window_part);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_FIRST_STEP));
		tp_json_i64(j, h->window_first_step);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_HOST));
		tp_json_str(j, h->hostname);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_PID));
		tp_json_i64(j, h->pid);
		tp_json_lit(j, ", " TR_KEY(TP_WINDOW_KEEP));
		tp_json_i64(j, h->window_keep);
		tp_json_lit(j, "},\n  ");
	}
	tp_json_lit(j, TR_KEY(TP_DOC_TRACE_EVENTS) "[\n");
}

void tp_trace_device_properties(struct tp_trace *t, const char *json)
{
	if (t->devprops_done)
		return;
	t->devprops_done = 1;
	tp_json_lit(&t->j, ",\n  " TR_KEY(TP_DOC_DEVICE_PROPERTIES));
	tp_json_lit(&t->j, json ? json : "[]");
}

void tp_trace_name(struct tp_trace *t, const char *name)
{
	tp_json_lit(&t->j, ",\n  " TR_KEY(TP_DOC_TRACE_NAME));
	tp_json_str(&t->j, name);
}

void tp_trace_event_open(struct tp_trace *t)
{
	if (t->nfirst)
		tp_json_raw(&t->j, ",\n", 2);
	t->nfirst = 1;
	t->events++;
	tp_json_char(&t->j, '{');
}

void tp_trace_ts(struct tp_trace *t, uint64_t mono_ns)
{
	tp_json_raw(&t->j, "\"ts\":", 5);
	tp_json_us(&t->j, (int64_t)mono_ns - t->mono_base);
}

/* ---- Event heads: one reservation per event ----------------------------
 *
 * A head is written with the tp_json_put_*() functions into room reserved
 * once (see format/json.h).  TR_HEAD_MAX bounds everything but the category
 * and the name: the separator and brace (3), the fixed keys and quotes of
 * the longest head (the API event's, under 64), the ids (TP_TRACE_IDS_MAX),
 * a time (22), a duration (41: tr_put_dur()) and a result (20). */
#define TR_HEAD_MAX 220

/* Names longer than this go through tp_json_strn(), which escapes huge
 * strings in pieces instead of reserving six times their length at once. */
#define TR_NAME_INLINE_MAX 4096

/* Reserves room for a head of `need` bytes and writes the separator and the
 * opening brace; NULL after an error (nothing is written then). */
static char *tr_begin(struct tp_trace *t, size_t need)
{
	char *d = tp_json_reserve(&t->j, need);
	if (!d)
		return NULL;
	if (t->nfirst)
		d = tp_json_put_raw(d, ",\n", 2);
	t->nfirst = 1;
	t->events++;
	*d++ = '{';
	return d;
}

static void tr_end(struct tp_trace *t, char *d)
{
	tp_json_commit(&t->j, d);
}

/* ,"pid":P,"tid":T from the cached text when the pair repeats.  The whole
 * cache block is copied (the reservation covers it): a fixed-size copy is a
 * few moves, a variable one a call. */
static char *tr_ids(struct tp_trace *t, char *d, int64_t pid, int64_t tid)
{
	if (t->ids_len == 0 || pid != t->ids_pid || tid != t->ids_tid) {
		char *e = tp_json_put_raw(t->ids, ",\"pid\":", 7);
		e = tp_json_put_i64(e, pid);
		e = tp_json_put_raw(e, ",\"tid\":", 7);
		e = tp_json_put_i64(e, tid);
		t->ids_len = (size_t)(e - t->ids);
		t->ids_pid = pid;
		t->ids_tid = tid;
	}
	memcpy(d, t->ids, TP_TRACE_IDS_MAX);
	return d + t->ids_len;
}

static char *tr_ts(const struct tp_trace *t, char *d, uint64_t mono_ns)
{
	d = tp_json_put_raw(d, ",\"ts\":", 6);
	return tp_json_put_us(d, (int64_t)mono_ns - t->mono_base);
}

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

/* ,"dur":.. for a slice from s to e (ns relative to the base, 0 <= s <= e
 * < 2^53). */
static char *tr_put_dur(char *d, int64_t s, int64_t e)
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

static char *tr_dur(const struct tp_trace *t, char *d, uint64_t start_ns, uint64_t end_ns)
{
	int64_t s = (int64_t)start_ns - t->mono_base;
	int64_t e = end_ns >= start_ns ? (int64_t)end_ns - t->mono_base : s;
	return tr_put_dur(d, s, e);
}

/* Caches the prefix for ph and cat (see tp_trace.pre). */
static __attribute__((noinline)) void tr_prefix(struct tp_trace *t, const char *ph, size_t phlen,
						const char *cat)
{
	size_t clen = strlen(cat);
	t->pre_ph = ph;
	t->pre_cat = cat;
	t->pre_clen = clen;
	t->pre_len = 0;
	if (phlen + clen + 9 > TP_TRACE_PRE_MAX)
		return;
	char *d = tp_json_put_raw(t->pre, ph, phlen);
	d = tp_json_put_raw(d, cat, clen);
	d = tp_json_put_raw(d, "\",\"name\":", 9);
	t->pre_len = (size_t)(d - t->pre);
}

/* {PH CAT","name":NAME,"pid":P,"tid":T,"ts":TS where ph is the literal
 * opening the event up to the category's opening quote.  Returns where the
 * head ends, with `extra` more bytes reserved after it; NULL after an error.
 * Inlined into each caller: a call with ten arguments costs about as much as
 * the head's fixed text. */
static inline __attribute__((always_inline)) char *
tr_head(struct tp_trace *t, const char *ph, size_t phlen, const char *cat, const char *name,
	size_t nlen, int64_t pid, int64_t tid, uint64_t ts_ns, size_t extra)
{
	if (ph != t->pre_ph || cat != t->pre_cat)
		tr_prefix(t, ph, phlen, cat);
	/* pre_len 0: the prefix did not fit the block. */
	size_t pre_room = t->pre_len ? TP_TRACE_PRE_MAX : phlen + t->pre_clen + 9;
	int inline_name = nlen <= TR_NAME_INLINE_MAX;
	char *d = tr_begin(t, TR_HEAD_MAX + pre_room + extra +
				      (inline_name ? tp_json_strn_max(nlen) : 0));
	if (!d)
		return NULL;
	if (__builtin_expect(t->pre_len != 0, 1)) {
		memcpy(d, t->pre, TP_TRACE_PRE_MAX);
		d += t->pre_len;
	} else {
		d = tp_json_put_raw(d, ph, phlen);
		d = tp_json_put_raw(d, cat, t->pre_clen);
		d = tp_json_put_raw(d, "\",\"name\":", 9);
	}
	if (inline_name) {
		d = tp_json_put_strn(d, name, nlen);
	} else {
		tr_end(t, d);
		tp_json_strn(&t->j, name, nlen);
		d = tp_json_reserve(&t->j, TR_HEAD_MAX + extra);
		if (!d)
			return NULL;
	}
	d = tr_ids(t, d, pid, tid);
	return tr_ts(t, d, ts_ns);
}

static const char tr_ph_x[] = "\"ph\":\"X\",\"cat\":\"";
static const char tr_ph_i[] = "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"";

char *tp_trace_complete_head(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			     int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
			     size_t extra)
{
	char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, cat, name, nlen, pid, tid, start_ns,
			  extra);
	return d ? tr_dur(t, d, start_ns, end_ns) : NULL;
}

char *tp_trace_instant_head(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t ts_ns, size_t extra)
{
	return tr_head(t, tr_ph_i, sizeof(tr_ph_i) - 1, cat, name, nlen, pid, tid, ts_ns, extra);
}

char *tp_trace_event_head(struct tp_trace *t, const struct tp_event *e, size_t extra)
{
	if (e->kind == TP_EV_SLICE) {
		char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, e->cat, e->name, e->name_len,
				  e->pid, e->tid, e->ts, extra);
		return d ? tr_dur(t, d, e->ts, e->end) : NULL;
	}
	return tr_head(t, tr_ph_i, sizeof(tr_ph_i) - 1, e->cat, e->name, e->name_len, e->pid,
		       e->tid, e->ts, extra);
}

void tp_trace_complete_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			    int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns)
{
	char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, cat, name, nlen, pid, tid, start_ns,
			  0);
	if (d)
		tr_end(t, tr_dur(t, d, start_ns, end_ns));
}

void tp_trace_api_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		       int64_t pid, int64_t tid, uint64_t start_ns, uint64_t end_ns,
		       int64_t result)
{
	static const char args[] = ",\"args\":{\"result\":";
	char *d = tr_head(t, tr_ph_x, sizeof(tr_ph_x) - 1, cat, name, nlen, pid, tid, start_ns,
			  sizeof(args) - 1);
	if (!d)
		return;
	d = tr_dur(t, d, start_ns, end_ns);
	d = tp_json_put_raw(d, args, sizeof(args) - 1);
	tr_end(t, tp_json_put_i64(d, result));
}

void tp_trace_api_corr(struct tp_trace *t, uint64_t corr)
{
	if (!corr)
		return;
	tp_json_lit(&t->j, ",\"correlation\":");
	tp_json_u64(&t->j, corr);
}

void tp_trace_instant_open(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
			   int64_t pid, int64_t tid, uint64_t ts_ns)
{
	char *d = tr_head(t, tr_ph_i, sizeof(tr_ph_i) - 1, cat, name, nlen, pid, tid, ts_ns, 0);
	if (d)
		tr_end(t, d);
}

void tp_trace_instant(struct tp_trace *t, const char *cat, const char *name, size_t nlen,
		      int64_t pid, int64_t tid, uint64_t ts_ns)
{
	tp_trace_instant_open(t, cat, name, nlen, pid, tid, ts_ns);
	tp_trace_event_close(t);
}

void tp_trace_counter(struct tp_trace *t, const char *name, size_t nlen, const char *key,
		      size_t klen, int64_t pid, int64_t tid, uint64_t ts_ns, double value)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"C\",\"name\":");
	tp_json_strn(j, name, nlen);
	tp_json_raw(j, ",\"pid\":", 7);
	tp_json_i64(j, pid);
	tp_json_raw(j, ",\"tid\":", 7);
	tp_json_i64(j, tid);
	tp_json_char(j, ',');
	tp_trace_ts(t, ts_ns);
	tp_json_lit(j, ",\"args\":{");
	tp_json_strn(j, key, klen);
	tp_json_char(j, ':');
	tp_json_double(j, value);
	tp_json_lit(j, "}}");
}

void tp_trace_meta_name(struct tp_trace *t, const char *what, int64_t pid, int64_t tid,
			const char *name)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"");
	tp_json_lit(j, what);
	tp_json_lit(j, "\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":");
	tp_json_i64(j, tid);
	tp_json_lit(j, ",\"args\":{\"name\":");
	tp_json_str(j, name);
	tp_json_lit(j, "}}");
}

void tp_trace_meta_sort(struct tp_trace *t, const char *what, int64_t pid, int64_t tid,
			int64_t index)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"");
	tp_json_lit(j, what);
	tp_json_lit(j, "\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":");
	tp_json_i64(j, tid);
	tp_json_lit(j, ",\"args\":{\"sort_index\":");
	tp_json_i64(j, index);
	tp_json_lit(j, "}}");
}

void tp_trace_meta_labels(struct tp_trace *t, int64_t pid, const char *labels)
{
	struct tp_json *j = &t->j;
	tp_trace_event_open(t);
	tp_json_lit(j, "\"ph\":\"M\",\"name\":\"" TP_META_PROCESS_LABELS "\",\"pid\":");
	tp_json_i64(j, pid);
	tp_json_lit(j, ",\"tid\":0,\"args\":{\"labels\":");
	tp_json_str(j, labels);
	tp_json_lit(j, "}}");
}

void tp_trace_footer_open(struct tp_trace *t)
{
	tp_json_lit(&t->j, "\n  ],\n  " TR_KEY(TP_DOC_FOOTER) "{");
}

void tp_trace_footer_close(struct tp_trace *t)
{
	tp_json_char(&t->j, '}');
}

int tp_trace_end(struct tp_trace *t)
{
	tp_json_lit(&t->j, "\n}\n");
	return tp_json_flush(&t->j);
}
