/* Unit tests for format/trace.c: the exact text of event heads (written
 * with one reservation each; CUDA API args: test_api_args.c), the
 * cached pid/tid text, names escaped once (tp_json_strcache), and sticky
 * errors. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/annos.h"
#include "format/json.h"
#include "format/trace.h"

#include "test/unit/check_main.h"

static struct tp_trace tr;

static void setup(void)
{
	memset(&tr, 0, sizeof(tr));
	ck_assert_int_eq(tp_json_init(&tr.j, NULL), 0);
	tr.mono_base = 0; /* ts = monotonic ns / 1000 */
}

static void teardown(void)
{
	tp_json_free(&tr.j);
}

/* Everything written since the last call, as a C string. */
static const char *take(void)
{
	static char out[1 << 18];
	ck_assert_uint_lt(tr.j.len, sizeof(out));
	memcpy(out, tr.j.buf, tr.j.len);
	out[tr.j.len] = '\0';
	tr.j.len = 0;
	return out;
}

/* deviceProperties: in the header when the devices are known as the file
 * begins (Kineto's place), else once, after the footer. */
START_TEST(test_device_properties_place)
{
	struct tp_trace_header h = { .trace_name = "t", .world_size = 1, .local_world_size = 1 };
	h.device_properties_json = "[{\"id\":0}]";
	tp_trace_begin(&tr, &h);
	const char *head = take();
	ck_assert_msg(strstr(head, "\"deviceProperties\": [{\"id\":0}],\n  \"traceEvents\": [\n"),
		      "%s", head);
	tp_trace_device_properties(&tr, "[{\"id\":1}]");
	ck_assert_str_eq(take(), "");

	memset(&tr.devprops_done, 0, sizeof(tr.devprops_done));
	h.device_properties_json = NULL;
	tp_trace_begin(&tr, &h);
	head = take();
	ck_assert_msg(!strstr(head, "deviceProperties"), "%s", head);
	ck_assert_msg(strstr(head, "},\n  \"traceEvents\": [\n"), "%s", head);
	tp_trace_device_properties(&tr, "[{\"id\":1}]");
	ck_assert_str_eq(take(), ",\n  \"deviceProperties\": [{\"id\":1}]");
	tp_trace_device_properties(&tr, "[{\"id\":2}]");
	ck_assert_str_eq(take(), "");

	h.device_properties_json = NULL;
	tp_trace_begin(&tr, &h);
	take();
	tp_trace_device_properties(&tr, NULL);
	ck_assert_str_eq(take(), ",\n  \"deviceProperties\": []");
}
END_TEST

START_TEST(test_api_event_result_only)
{
	/* dur is double(end) - double(ts), exactly (see tp_trace_put_dur()): at
	 * 6.9e12 us a multiple of 2^-10 us, within a ns of the 139.501 us. */
	tp_trace_api_open(&tr, "cuda_runtime", "cudaEventRecord", 15, 1234567, 7654321,
			  6900669626790479ull, 6900669626929980ull, 0);
	tp_json_char(&tr.j, '}');
	tp_trace_event_close(&tr);
	ck_assert_str_eq(take(), "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaEventRecord\","
				 "\"pid\":1234567,\"tid\":7654321,\"ts\":6900669626790.479,"
				 "\"dur\":139.501953125,\"args\":{\"result\":0}}");
	/* The second event is separated by ",\n"; a negative result, and an
	 * end before the start (clock trouble) gives dur 0. */
	tp_trace_api_open(&tr, "cuda_driver", "cuInit", 6, 1234567, 7654321, 5000, 4000, -1);
	tp_json_char(&tr.j, '}');
	tp_trace_event_close(&tr);
	ck_assert_str_eq(take(), ",\n{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuInit\","
				 "\"pid\":1234567,\"tid\":7654321,\"ts\":5.000,\"dur\":0.000,"
				 "\"args\":{\"result\":-1}}");
	ck_assert_uint_eq(tr.events, 2);
	/* While CUPTI records, the correlation follows the result; 0 is none. */
	tp_trace_api_open(&tr, "cuda_runtime", "a", 1, 1, 2, 0, 1, 0);
	tp_trace_api_corr(&tr, 123456789);
	tp_json_char(&tr.j, '}');
	tp_trace_event_close(&tr);
	ck_assert_str_eq(take(), ",\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"a\",\"pid\":1,"
				 "\"tid\":2,\"ts\":0.000,\"dur\":0.001,"
				 "\"args\":{\"result\":0,\"correlation\":123456789}}");
	tp_trace_api_open(&tr, "cuda_runtime", "a", 1, 1, 2, 0, 1, 0);
	tp_trace_api_corr(&tr, 0);
	tp_json_char(&tr.j, '}');
	tp_trace_event_close(&tr);
	ck_assert_str_eq(take(), ",\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"a\",\"pid\":1,"
				 "\"tid\":2,\"ts\":0.000,\"dur\":0.001,\"args\":{\"result\":0}}");
}
END_TEST

/* Readers take a slice's end as double(ts) + double(dur) (DevTools' trace
 * engine) or as (double(ts) - double(first ts)) + double(dur) (speedscope).
 * For any start and end in integer ns both must give double(end printed as
 * ts is) (minus the first ts), so that back-to-back slices touch and never
 * overlap, and children end inside their parents; the printed duration stays
 * within a ns of the true one.  Times near 6.9e12 us (a Kineto base late in
 * its 3-month bucket), at the top of the bucket, at 2^42 us and at 1e9 us
 * (17 minutes into it), consecutive and random. */
static int dur_check(uint64_t first_ns, uint64_t start_ns, uint64_t end_ns, double *err_ns)
{
	tp_trace_complete_open(&tr, "c", "n", 1, 1, 2, start_ns, end_ns);
	tp_trace_event_close(&tr);
	const char *out = take();
	const char *ts = strstr(out, "\"ts\":");
	const char *dur = strstr(out, "\"dur\":");
	ck_assert_ptr_nonnull(ts);
	ck_assert_ptr_nonnull(dur);
	double t = strtod(ts + 5, NULL), du = strtod(dur + 6, NULL);
	char end[40], first[40];
	snprintf(end, sizeof(end), "%llu.%03llu", (unsigned long long)(end_ns / 1000),
		 (unsigned long long)(end_ns % 1000));
	snprintf(first, sizeof(first), "%llu.%03llu", (unsigned long long)(first_ns / 1000),
		 (unsigned long long)(first_ns % 1000));
	double g = strtod(end, NULL), f = strtod(first, NULL);
	volatile double devtools = t + du;
	volatile double rebased = t - f;
	volatile double speedscope = rebased + du;
	*err_ns = du * 1e3 - (double)(end_ns - start_ns);
	return devtools == g && speedscope == g - f;
}
START_TEST(test_dur_sums_to_end)
{
	static const uint64_t bases[] = { 6900000000000000ull, 7775000000000000ull,
					  4398046511104000ull, 1000000000000ull };
	uint64_t x = 88172645463325252ull;
	int bad = 0, n = 0;
	double worst = 0;
	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		uint64_t t = bases[b], first = t;
		for (int i = 0; i < 20000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Durations from 1 ns to 1 ms, a few up to 100 s. */
			uint64_t len = 1 + (x % 1000000) * ((x >> 40) % 64 == 0 ? 100000 : 1);
			double err;
			if (!dur_check(first, t, t + len, &err)) {
				if (bad++ < 5)
					fprintf(stderr, "start %llu end %llu: sum is not the end\n",
						(unsigned long long)t, (unsigned long long)(t + len));
			}
			if (err < 0)
				err = -err;
			if (err > worst) {
				worst = err;
				if (worst >= 1.0)
					fprintf(stderr, "start %llu end %llu: dur %.3f ns off\n",
						(unsigned long long)t, (unsigned long long)(t + len), err);
			}
			n++;
			t += len; /* the next slice starts where this one ended */
		}
	}
	ck_assert_msg(bad == 0, "%d of %d slices do not end at their end as readers compute it", bad, n);
	ck_assert_msg(worst < 1.0, "a duration is %.3f ns off", worst);
}
END_TEST

/* Past the first minutes after the base, dur is the exact decimal of
 * double(end) - double(ts) and its shortest: no digit cut (the value read
 * back is exactly that difference) and no trailing zero past 3 places.
 * Times from 5 minutes to 100 days after the base, durations from 1 ns to
 * 100 s. */
START_TEST(test_dur_shortest_exact)
{
	uint64_t x = 0x9E3779B97F4A7C15ull;
	int n = 0;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t start = 300000000000ull + x % 8640000000000000ull;
		uint64_t len = 1 + (x >> 20) % ((x >> 60) < 4 ? 100000000000ull : 10000000ull);
		tp_trace_complete_open(&tr, "c", "n", 1, 1, 2, start, start + len);
		tp_trace_event_close(&tr);
		const char *out = take();
		const char *ts = strstr(out, "\"ts\":"), *dur = strstr(out, "\"dur\":");
		ck_assert_ptr_nonnull(ts);
		ck_assert_ptr_nonnull(dur);
		double t = strtod(ts + 5, NULL);
		char end[40], *p;
		snprintf(end, sizeof(end), "%llu.%03llu", (unsigned long long)((start + len) / 1000),
			 (unsigned long long)((start + len) % 1000));
		double g = strtod(end, NULL);
		if (g > 2 * t)
			continue; /* not the exact form: longer than the time since the base */
		double du = strtod(dur + 6, &p);
		const char *dot = strchr(dur, '.');
		ck_assert_ptr_nonnull(dot);
		ck_assert_msg(du == g - t, "%s: dur is not double(end) - double(ts) = %.17g", out,
			      g - t);
		ck_assert_msg(p - dot - 1 >= 3, "%s: fewer than 3 places", out);
		ck_assert_msg(p - dot - 1 == 3 || p[-1] != '0', "%s: a trailing zero", out);
		n++;
	}
	ck_assert_int_gt(n, 90000);
}
END_TEST

/* The cached "ph":..,"cat":..,"name": prefix follows every change of phase
 * or category, and a category too long for its block (47 bytes here: 16 of
 * ph and 9 of the name's key make 72) is written all the same, before and
 * after cached ones. */
START_TEST(test_prefix_cache_follows_changes)
{
	static const char lng[] = "a category of forty-seven bytes, longer than 64";
	static const char a[] = "cuda_runtime", b[] = "kernel";
	const struct {
		int instant;
		const char *cat;
	} c[] = { { 0, a }, { 0, a }, { 1, a }, { 0, b }, { 0, lng }, { 1, lng }, { 0, a }, { 1, b } };
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		tr.nfirst = 0;
		if (c[i].instant) {
			tp_trace_instant(&tr, c[i].cat, "n", 1, 1, 2, 1000);
		} else {
			tp_trace_complete_open(&tr, c[i].cat, "n", 1, 1, 2, 1000, 2000);
			tp_trace_event_close(&tr);
		}
		char want[256];
		snprintf(want, sizeof(want),
			 "{\"ph\":\"%s,\"cat\":\"%s\",\"name\":\"n\",\"pid\":1,\"tid\":2,"
			 "\"ts\":1.000%s}",
			 c[i].instant ? "i\",\"s\":\"t\"" : "X\"", c[i].cat,
			 c[i].instant ? "" : ",\"dur\":1.000");
		ck_assert_str_eq(take(), want);
	}
}
END_TEST

START_TEST(test_ids_cache_follows_changes)
{
	/* The cached ,"pid":..,"tid":.. text must change whenever either does,
	 * including extreme values (20 characters each). */
	const int64_t ids[][2] = { { 1, 2 },
				   { 1, 3 },
				   { 4, 3 },
				   { INT64_MIN, INT64_MAX },
				   { INT64_MIN, INT64_MAX },
				   { -1, 0 },
				   { 1, 2 } };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		tr.nfirst = 0;
		tp_trace_complete_open(&tr, "c", "n", 1, ids[i][0], ids[i][1], 1000, 2000);
		tp_trace_event_close(&tr);
		char want[256];
		snprintf(want, sizeof(want),
			 "{\"ph\":\"X\",\"cat\":\"c\",\"name\":\"n\",\"pid\":%lld,\"tid\":%lld,"
			 "\"ts\":1.000,\"dur\":1.000}",
			 (long long)ids[i][0], (long long)ids[i][1]);
		ck_assert_str_eq(take(), want);
	}
}
END_TEST

START_TEST(test_heads_escape_names)
{
	tp_trace_complete_open(&tr, "user_annotation", "a\"b\\c\n\xff", 7, 1, 2, 0, 1500);
	tp_trace_event_close(&tr);
	ck_assert_str_eq(take(), "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
				 "\"a\\\"b\\\\c\\n\xef\xbf\xbd\",\"pid\":1,\"tid\":2,\"ts\":0.000,"
				 "\"dur\":1.500}");
	tr.nfirst = 0;
	tp_trace_instant(&tr, "user_annotation", "mark", 4, 1, 2, 999);
	ck_assert_str_eq(take(), "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\","
				 "\"name\":\"mark\",\"pid\":1,\"tid\":2,\"ts\":0.999}");
	/* A time before the base is negative, not a huge number. */
	tr.nfirst = 0;
	tr.mono_base = 10000;
	tp_trace_instant(&tr, "c", "x", 1, 1, 2, 4995);
	ck_assert_str_eq(take(), "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"c\",\"name\":\"x\","
				 "\"pid\":1,\"tid\":2,\"ts\":-5.005}");
}
END_TEST

START_TEST(test_long_name_head)
{
	/* Names past the inline limit take the general path; the head around
	 * them must be the same. */
	size_t n = 100000;
	char *name = malloc(n);
	memset(name, 'k', n);
	name[n / 2] = '"';
	tp_trace_api_open(&tr, "cuda_runtime", name, n, 1, 2, 1000, 3000, 5);
	tp_json_char(&tr.j, '}');
	tp_trace_event_close(&tr);
	const char *out = take();
	const char *head = "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"kkk";
	ck_assert_int_eq(strncmp(out, head, strlen(head)), 0);
	const char *tail = "kkk\",\"pid\":1,\"tid\":2,\"ts\":1.000,\"dur\":2.000,"
			   "\"args\":{\"result\":5}}";
	ck_assert_uint_eq(strlen(out), strlen(head) - 3 + n + 1 + strlen(tail) - 3);
	ck_assert_str_eq(out + strlen(out) - strlen(tail), tail);
	ck_assert_ptr_nonnull(strstr(out, "k\\\"k"));
	free(name);
}
END_TEST

START_TEST(test_strcache)
{
	struct tp_json_strcache c;
	memset(&c, 0, sizeof(c));
	ck_assert_ptr_null(tp_json_strcache_get(&c, NULL));
	/* Keyed by address: two equal strings at two addresses are two
	 * entries; the same address is one entry, found again after many
	 * others made the table grow. */
	static char names[1000][16];
	for (int i = 0; i < 1000; i++)
		snprintf(names[i], sizeof(names[i]), "k%d\t", i);
	const struct tp_json_cached *first = tp_json_strcache_get(&c, names[0]);
	ck_assert_str_eq(first->json, "\"k0\\t\"");
	ck_assert_uint_eq(first->len, 6);
	for (int i = 1; i < 1000; i++)
		ck_assert_ptr_nonnull(tp_json_strcache_get(&c, names[i]));
	ck_assert_uint_eq(c.n, 1000);
	for (int i = 0; i < 1000; i++) {
		const struct tp_json_cached *e = tp_json_strcache_get(&c, names[i]);
		char want[32];
		snprintf(want, sizeof(want), "\"k%d\\t\"", i);
		ck_assert_str_eq(e->json, want);
		ck_assert_uint_eq(e->len, strlen(want));
		ck_assert_ptr_eq(e->key, names[i]);
	}
	ck_assert_uint_eq(c.n, 1000);
	char copy[16];
	strcpy(copy, names[5]);
	ck_assert_ptr_eq(tp_json_strcache_get(&c, copy)->key, copy);
	ck_assert_ptr_eq(tp_json_strcache_get(&c, names[5])->key, names[5]);
	ck_assert_uint_eq(c.n, 1001);
	/* An address that now holds another string (freed and reused) gives
	 * the new string, in the same slot. */
	strcpy(copy, "a\"b");
	ck_assert_str_eq(tp_json_strcache_get(&c, copy)->json, "\"a\\\"b\"");
	strcpy(copy, "xyz");
	ck_assert_str_eq(tp_json_strcache_get(&c, copy)->json, "\"xyz\"");
	ck_assert_uint_eq(c.n, 1001);
	/* Too long to cache: NULL, the caller escapes it itself. */
	size_t big = 70000;
	char *huge = malloc(big + 1);
	memset(huge, 'x', big);
	huge[big] = '\0';
	ck_assert_ptr_null(tp_json_strcache_get(&c, huge));
	free(huge);
	/* Written as is. */
	tp_json_write_cached(&tr.j, tp_json_strcache_get(&c, names[7]));
	ck_assert_str_eq(take(), "\"k7\\t\"");
	tp_json_strcache_free(&c);
	ck_assert_uint_eq(c.n, 0);
	ck_assert_ptr_null(c.slots);
}
END_TEST

START_TEST(test_sticky_error)
{
	/* After an error every writer is a no-op. */
	tp_trace_api_open(&tr, "cuda_runtime", "a", 1, 1, 2, 0, 1, 0);
	size_t len = tr.j.len;
	tr.j.error = -EIO;
	tp_trace_api_open(&tr, "cuda_runtime", "a", 1, 1, 2, 0, 1, 0);
	tp_trace_complete_open(&tr, "c", "n", 1, 1, 2, 0, 1);
	tp_trace_instant(&tr, "c", "n", 1, 1, 2, 0);
	ck_assert_uint_eq(tr.j.len, len);
}
END_TEST

/* The annotation store (moved from here to collector/annos.c): nothing kept
 * until asked, then every annotation with its name, in order; dropping
 * keeps the names of those left. */
START_TEST(test_annos_store)
{
	size_t n;
	tp_annos_add(1, 2, "early", 5, 0, 10);
	tp_annos(&n);
	ck_assert_uint_eq(n, 0);
	tp_annos_keep();
	tp_annos_add(1, 2, "ProfilerStep#1", 14, 100, 200);
	tp_annos_add(1, 3, "fwd\0x", 5, 150, 400);
	tp_annos_add(1, 2, "ProfilerStep#2", 14, 200, 500);
	const struct tp_anno *a = tp_annos(&n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(tp_anno_name(&a[0]), "ProfilerStep#1");
	ck_assert_int_eq(a[1].tid, 3);
	ck_assert_uint_eq(a[1].name_len, 5);
	ck_assert_mem_eq(tp_anno_name(&a[1]), "fwd\0x", 6);
	tp_annos_drop_before(300);
	a = tp_annos(&n);
	ck_assert_uint_eq(n, 2);
	ck_assert_mem_eq(tp_anno_name(&a[0]), "fwd\0x", 6);
	ck_assert_str_eq(tp_anno_name(&a[1]), "ProfilerStep#2");
	ck_assert_uint_eq(a[1].start, 200);
	ck_assert_uint_eq(a[1].end, 500);
	ck_assert_uint_eq(tp_annos_missed(), 0);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_api_event_result_only);
	tcase_add_test(tc, test_ids_cache_follows_changes);
	tcase_add_test(tc, test_heads_escape_names);
	tcase_add_test(tc, test_long_name_head);
	tcase_add_test(tc, test_strcache);
	tcase_add_test(tc, test_sticky_error);
	tcase_add_test(tc, test_device_properties_place);
	tcase_add_test(tc, test_dur_sums_to_end);
	tcase_add_test(tc, test_dur_shortest_exact);
	tcase_add_test(tc, test_prefix_cache_follows_changes);
	tcase_add_test(tc, test_annos_store);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(trace_suite());
}
