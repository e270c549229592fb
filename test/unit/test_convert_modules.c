/* Unit tests for collector/convert.c's nn.Module markers: a marker named
 * TP_MODULE_PREFIX "..." (TRACEPROF_PYTORCH=modules) is written as
 * torch.profiler(with_stack=True) writes a module call, a python_function
 * slice with "Python id", "Python parent id" (the enclosing module call's;
 * absent for an outermost one) and "Python module id" (the same for every
 * call of one module), which TensorBoard's Module view builds its tree from;
 * every other marker stays a user_annotation slice without them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/convert.h"
#include "collector/fthread.h"
#include "collector/record.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/layout.h"
#include "format/writer.h"

#include "test/unit/check_main.h"
#include "test/unit/writer_text.h"

#define HOST_PID 4242
#define HOST_TID 77

static struct wt wt;
static struct tp_thread th;

static void setup(void)
{
	wt_open(&wt, NULL);
	memset(&th, 0, sizeof(th));
	th.tid = HOST_TID;
	ck_assert_ptr_nonnull(tp_fthread_get(&th));
}

static void teardown(void)
{
	tp_fthread_forget(&th);
	wt_free(&wt);
}

/* A marker start or finish record named name at time t, as
 * traceprof_marker_start/finish emit it: the name in the extras. */
static void marker(int kind, const char *name, uint64_t t)
{
	struct tp_record r[1 + TP_REC_MAX_EXTRA];
	memset(r, 0, sizeof(r));
	size_t n = strlen(name) + 1;
	ck_assert_uint_le(n, TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES);
	r[0].kind = (uint8_t)kind;
	r[0].start = r[0].end = t;
	r[0].flags = TP_RF_STRING;
	r[0].nextra = (uint8_t)((n + TP_REC_EXTRA_BYTES - 1) / TP_REC_EXTRA_BYTES);
	memcpy(r + 1, name, n);
	tp_convert_record(wt.w, &th, r, HOST_PID);
}

#define BEGIN(name, t) marker(TP_REC_MARKER_BEGIN, name, t)
#define END(name, t) marker(TP_REC_MARKER_END, name, t)

/* The line of the k-th (from 0) event named name. */
static const char *event_of(const char *name, int k, char *buf, size_t size)
{
	char key[160];
	snprintf(key, sizeof(key), "\"name\":\"%s\"", name);
	/* Once: each call closes the file and moves the text. */
	const char *all = wt_text(&wt), *s = all;
	const char *at = NULL;
	for (int i = 0; i <= k; i++, s = at + 1) {
		at = strstr(s, key);
		ck_assert_msg(at != NULL, "no event %d named %s in %s", k, name, all);
	}
	/* The JSON writer writes one event a line. */
	const char *b = at;
	while (b > all && b[-1] != '\n')
		b--;
	const char *e = strchr(at, '\n');
	size_t len = e ? (size_t)(e - b) : strlen(b);
	ck_assert_msg(len < size, "%.*s", (int)(len < 3000 ? len : 3000), b);
	memcpy(buf, b, len);
	buf[len] = '\0';
	return buf;
}

/* The number after "key": in ev, or -1 when ev has no such arg. */
static long long arg_num(const char *ev, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(ev, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

START_TEST(test_module_tree)
{
	/* MLP { Linear a; my_range { Linear b } }, then MLP again. */
	BEGIN("nn.Module: MLP", 1000);
	BEGIN("nn.Module: Linear a", 1100);
	END("nn.Module: Linear a", 1200);
	BEGIN("my_range", 1300);
	BEGIN("nn.Module: Linear b", 1400);
	END("nn.Module: Linear b", 1500);
	END("my_range", 1600);
	END("nn.Module: MLP", 1700);
	BEGIN("nn.Module: MLP", 2000);
	END("nn.Module: MLP", 2100);
	char mlp[1024], a[1024], b[1024], rng[1024], mlp2[1024];
	event_of("nn.Module: MLP", 0, mlp, sizeof(mlp));
	event_of("nn.Module: Linear a", 0, a, sizeof(a));
	event_of("nn.Module: Linear b", 0, b, sizeof(b));
	event_of("my_range", 0, rng, sizeof(rng));
	event_of("nn.Module: MLP", 1, mlp2, sizeof(mlp2));
	const char *mods[] = { mlp, a, b, mlp2 };
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(strstr(mods[i], "\"cat\":\"" TP_CAT_PYTHON_FUNCTION "\""), "%s", mods[i]);
		ck_assert_msg(arg_num(mods[i], TP_MODULE_ARG_ID) > 0, "%s", mods[i]);
		ck_assert_msg(arg_num(mods[i], TP_MODULE_ARG_MODULE) >= 0, "%s", mods[i]);
	}
	/* Children name their module's call: my_range is no module, so Linear
	 * b's parent is MLP. */
	ck_assert_int_eq(arg_num(mlp, TP_MODULE_ARG_PARENT), -1);
	ck_assert_int_eq(arg_num(a, TP_MODULE_ARG_PARENT), arg_num(mlp, TP_MODULE_ARG_ID));
	ck_assert_int_eq(arg_num(b, TP_MODULE_ARG_PARENT), arg_num(mlp, TP_MODULE_ARG_ID));
	ck_assert_int_eq(arg_num(mlp2, TP_MODULE_ARG_PARENT), -1);
	/* Each call its own id; each module its own module id, the same for
	 * both calls of MLP. */
	long long ids[] = { arg_num(mlp, TP_MODULE_ARG_ID), arg_num(a, TP_MODULE_ARG_ID),
			    arg_num(b, TP_MODULE_ARG_ID), arg_num(mlp2, TP_MODULE_ARG_ID) };
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			ck_assert_int_ne(ids[i], ids[j]);
	ck_assert_int_eq(arg_num(mlp, TP_MODULE_ARG_MODULE), arg_num(mlp2, TP_MODULE_ARG_MODULE));
	ck_assert_int_ne(arg_num(a, TP_MODULE_ARG_MODULE), arg_num(b, TP_MODULE_ARG_MODULE));
	/* Other markers are as before. */
	ck_assert_msg(strstr(rng, "\"cat\":\"" TP_CAT_USER_ANNOTATION "\""), "%s", rng);
	ck_assert_int_eq(arg_num(rng, TP_MODULE_ARG_ID), -1);
}
END_TEST

START_TEST(test_module_open_at_window_end)
{
	/* A module still running when its window ends: written unfinished,
	 * still a module call. */
	BEGIN("nn.Module: Net", 1000);
	BEGIN("nn.Module: Linear head", 1100);
	tp_convert_close_markers(wt.w, &th, HOST_PID, tp_clock_to_ns(5000));
	char net[1024], head[1024];
	event_of("nn.Module: Net", 0, net, sizeof(net));
	event_of("nn.Module: Linear head", 0, head, sizeof(head));
	ck_assert_msg(strstr(net, "\"cat\":\"" TP_CAT_PYTHON_FUNCTION "\""), "%s", net);
	ck_assert_msg(strstr(net, "\"unfinished\":true"), "%s", net);
	ck_assert_int_eq(arg_num(head, TP_MODULE_ARG_PARENT), arg_num(net, TP_MODULE_ARG_ID));
	/* "nn.Module: " alone names no module. */
	BEGIN("nn.Module: ", 6000);
	END("nn.Module: ", 6100);
	char bare[1024];
	event_of("nn.Module: ", 0, bare, sizeof(bare));
	ck_assert_msg(strstr(bare, "\"cat\":\"" TP_CAT_USER_ANNOTATION "\""), "%s", bare);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("convert_modules");
	TCase *tc = tcase_create("modules");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_module_tree);
	tcase_add_test(tc, test_module_open_at_window_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(suite());
}
