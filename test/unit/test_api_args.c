/* format/api_args.c through the JSON writer: the args of CUDA API events
 * (after "result"), typed by the builders, written by format/json_writer.c
 * with the exact text the trace had before the event layer (keys, order,
 * "0x..." handles, escaped kernel names). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/api_args.h"
#include "format/writer.h"

#include "test/unit/check_main.h"
#include "test/unit/writer_text.h"

static struct wt wt;
static struct tp_arg args[1 + TP_API_ARGS_MAX];
static unsigned nargs;

static void setup(void)
{
	wt_open(&wt, NULL);
}

static void teardown(void)
{
	wt_free(&wt);
}

static void begin(void)
{
	nargs = 0;
	args[nargs++] = TP_ARG(i64, "result", 0);
}

/* Writes an API event with args[] and returns its args after "result":0,
 * without the closing braces. */
static const char *take(void)
{
	static char out[4096];
	ck_assert_uint_le(nargs, 1 + TP_API_ARGS_MAX);
	size_t from = wt.len;
	tp_writer_slice(wt.w, "cuda_runtime", "cudaX", 5, 1, 2, 1000, 2000, args, nargs);
	const char *r = strstr(wt_text(&wt) + from, "\"args\":{\"result\":0");
	ck_assert_msg(r != NULL, "no result in %s", wt.text + from);
	r += strlen("\"args\":{\"result\":0");
	/* The event ends its line (a comma follows when more events do). */
	size_t n = strcspn(r, "\n");
	ck_assert_uint_lt(n, sizeof(out));
	memcpy(out, r, n);
	out[n] = '\0';
	if (n && out[n - 1] == ',')
		out[--n] = '\0';
	ck_assert_msg(n >= 2 && !strcmp(out + n - 2, "}}"), "event not closed: %s", out);
	out[n - 2] = '\0';
	return out;
}

START_TEST(test_launch_args)
{
	const char *kname = "void k<\"q\">(int)";
	struct tp_api_launch l = {
		.name = kname,
		.handle = 0x1234,
		.grid = { 4294967295u, 65535, 1 },
		.block = { 1024, 1, 64 },
		.shared = 49152,
		.stream = 0,
	};
	const char *want = ",\"kernel\":\"void k<\\\"q\\\">(int)\",\"grid\":[4294967295,65535,1],"
			   "\"block\":[1024,1,64],\"shared memory\":49152,\"stream handle\":\"0x0\"";
	begin();
	tp_api_args_launch(args, &nargs, &l);
	ck_assert_str_eq(take(), want);
	/* A stable name is escaped once and reused: the same bytes. */
	begin();
	tp_api_args_launch(args, &nargs, &l);
	ck_assert_str_eq(take(), want);
	/* No name: the handle. */
	l.name = NULL;
	l.stream = 0x7f00deadbeefull;
	begin();
	tp_api_args_launch(args, &nargs, &l);
	ck_assert_str_eq(take(), ",\"kernel\":\"0x1234\",\"grid\":[4294967295,65535,1],"
				 "\"block\":[1024,1,64],\"shared memory\":49152,"
				 "\"stream handle\":\"0x7f00deadbeef\"");
}
END_TEST

START_TEST(test_other_args)
{
	begin();
	tp_api_args_memcpy(args, &nargs, 4096, 1, 0x7f0000001000ull, 0x55000000ull, 0, 0);
	ck_assert_str_eq(take(), ",\"bytes\":4096,\"kind\":\"HtoD\",\"dst\":\"0x7f0000001000\","
				 "\"src\":\"0x55000000\",\"async\":false");
	begin();
	tp_api_args_memcpy(args, &nargs, 512, 2, 1, 2, 1, 0x5000);
	ck_assert_str_eq(take(), ",\"bytes\":512,\"kind\":\"DtoH\",\"dst\":\"0x1\",\"src\":\"0x2\","
				 "\"stream handle\":\"0x5000\",\"async\":true");
	begin();
	tp_api_args_memcpy(args, &nargs, 1, 4, 1, 2, 0, 0);
	ck_assert_str_eq(take(), ",\"bytes\":1,\"kind\":\"Default\",\"dst\":\"0x1\",\"src\":\"0x2\","
				 "\"async\":false");
	begin();
	tp_api_args_memcpy(args, &nargs, 1, 9, 1, 2, 0, 0);
	ck_assert_str_eq(take(), ",\"bytes\":1,\"kind\":\"unknown\",\"dst\":\"0x1\",\"src\":\"0x2\","
				 "\"async\":false");
	begin();
	tp_api_args_memset(args, &nargs, 100, 7, 0xabc, 1, 0x5000);
	ck_assert_str_eq(take(), ",\"bytes\":100,\"value\":7,\"ptr\":\"0xabc\",\"stream handle\":\"0x5000\","
				 "\"async\":true");
	begin();
	tp_api_args_alloc(args, &nargs, UINT64_MAX, 0xffffffffffffffffull, 1, 0x5000, 0);
	ck_assert_str_eq(take(), ",\"bytes\":18446744073709551615,\"ptr\":\"0xffffffffffffffff\","
				 "\"stream handle\":\"0x5000\",\"pool\":\"default\",\"async\":true");
	begin();
	tp_api_args_alloc(args, &nargs, 8, 0x10, 1, 0x5000, 0x99);
	ck_assert_str_eq(take(), ",\"bytes\":8,\"ptr\":\"0x10\",\"stream handle\":\"0x5000\","
				 "\"pool\":\"0x99\",\"async\":true");
	begin();
	tp_api_args_alloc(args, &nargs, 8, 0x10, 0, 0, 0);
	ck_assert_str_eq(take(), ",\"bytes\":8,\"ptr\":\"0x10\",\"async\":false");
	begin();
	tp_api_args_free(args, &nargs, 0x10, 0, 0);
	ck_assert_str_eq(take(), ",\"ptr\":\"0x10\",\"async\":false");
	begin();
	tp_api_args_free(args, &nargs, 0x10, 1, 0x5000);
	ck_assert_str_eq(take(), ",\"ptr\":\"0x10\",\"stream handle\":\"0x5000\",\"async\":true");
	begin();
	tp_api_args_sync(args, &nargs, 1, 0, 0);
	ck_assert_str_eq(take(), ",\"stream handle\":\"0x0\"");
	begin();
	tp_api_args_sync(args, &nargs, 0, 0, 0x42);
	ck_assert_str_eq(take(), ",\"event\":\"0x42\"");
	begin();
	tp_api_args_sync(args, &nargs, 0, 0, 0);
	ck_assert_str_eq(take(), "");
}
END_TEST

/* The longest builder fits the room the API decoder reserves. */
START_TEST(test_room)
{
	struct tp_api_launch l = { .name = "k" };
	unsigned most = 0;
	nargs = 0;
	tp_api_args_launch(args, &nargs, &l);
	most = nargs > most ? nargs : most;
	nargs = 0;
	tp_api_args_memcpy(args, &nargs, 1, 1, 1, 1, 1, 1);
	most = nargs > most ? nargs : most;
	nargs = 0;
	tp_api_args_alloc(args, &nargs, 1, 1, 1, 1, 1);
	most = nargs > most ? nargs : most;
	ck_assert_uint_eq(most, TP_API_ARGS_MAX);
}
END_TEST

static Suite *api_args_suite(void)
{
	Suite *s = suite_create("api_args");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_launch_args);
	tcase_add_test(tc, test_other_args);
	tcase_add_test(tc, test_room);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(api_args_suite());
}
