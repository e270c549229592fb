/* collector/stacks.c: reading IPs from a record's extras, the per-address
 * symbol cache, the frame tree and each file's stackFrames. */
#include <check.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/stacks.h"

#include "test/unit/check_main.h"

/* A record group: the record and its extras, laid out as
 * preload/stack.c writes them. */
struct group {
	struct tp_record rec[1 + TP_REC_MAX_EXTRA];
};

static void make(struct group *g, const char *name, const uint64_t *ips, size_t n)
{
	memset(g, 0, sizeof(*g));
	char *x = (char *)&g->rec[1];
	size_t off = 0;
	if (name) {
		size_t len = strlen(name);
		memcpy(x, name, len + 1);
		off = (len + 1 + 7) & ~(size_t)7;
		g->rec[0].flags |= TP_RF_STRING;
	}
	uint64_t depth = n;
	memcpy(x + off, &depth, 8);
	memcpy(x + off + 8, ips, n * 8);
	g->rec[0].flags |= TP_RF_STACK;
	g->rec[0].nextra = (uint8_t)((off + 8 + n * 8 + 63) / 64);
}

/* Addresses inside libc functions (exported, so dladdr names them). */
static uint64_t at(void *fn, unsigned off)
{
	return (uint64_t)(uintptr_t)fn + off;
}

/* The name dladdr gives fn (libc has aliases: getenv may be reported under
 * another name), "+0xOFF". */
static const char *nm(void *fn, unsigned off)
{
	static char buf[4][128];
	static int k;
	Dl_info info;
	ck_assert(dladdr(fn, &info) && info.dli_sname);
	char *b = buf[k++ % 4];
	snprintf(b, sizeof(buf[0]), "%s+0x%x", info.dli_sname, off);
	return b;
}

/* The file name dladdr gives fn's module ("libc.so.6").  Under a sanitizer
 * some libc functions resolve to the runtime's interceptors
 * (libasan.so.8), so the expected category is asked for, not assumed. */
static const char *lib(void *fn)
{
	Dl_info info;
	ck_assert(dladdr(fn, &info) && info.dli_fname);
	const char *slash = strrchr(info.dli_fname, '/');
	return slash ? slash + 1 : info.dli_fname;
}

/* fmt has one or two %s: a, then b (the module, or NULL when unused). */
static int has(const char *s, const char *fmt, const char *a, const char *b)
{
	char want[300];
	snprintf(want, sizeof(want), fmt, a, b);
	return strstr(s, want) != NULL;
}

#define F1 ((void *)getenv)
#define F2 ((void *)strtol)
#define F3 ((void *)atoi)
#define F4 ((void *)strtoul)

static struct tp_trace *new_trace(void)
{
	struct tp_trace *t = calloc(1, sizeof(*t));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tp_json_init(&t->j, NULL), 0);
	return t;
}

static char *text(struct tp_trace *t)
{
	char *s = malloc(t->j.len + 1);
	memcpy(s, t->j.buf, t->j.len);
	s[t->j.len] = '\0';
	return s;
}

static void free_trace(struct tp_trace *t)
{
	tp_json_free(&t->j);
	free(t);
}

START_TEST(ips_with_and_without_string)
{
	struct group g;
	uint64_t ips[3] = { 0x1000, 0x2000, 0x3000 };
	const uint64_t *got;
	make(&g, NULL, ips, 3);
	ck_assert_uint_eq(tp_stacks_ips(g.rec, &got), 3);
	ck_assert_uint_eq(got[2], 0x3000);
	make(&g, "a name of some length", ips, 2);
	ck_assert_uint_eq(tp_stacks_ips(g.rec, &got), 2);
	ck_assert_uint_eq(got[0], 0x1000);
	/* No stack flag: nothing. */
	g.rec[0].flags &= (uint8_t)~TP_RF_STACK;
	ck_assert_uint_eq(tp_stacks_ips(g.rec, &got), 0);
	/* A depth larger than the extras: rejected, not read past the end. */
	make(&g, NULL, ips, 3);
	uint64_t huge = 1000;
	memcpy(&g.rec[1], &huge, 8);
	ck_assert_uint_eq(tp_stacks_ips(g.rec, &got), 0);
}
END_TEST

START_TEST(symbols_cached_and_named)
{
	tp_stacks_reset();
	tp_stacks_set_self_module(NULL);
	struct group g;
	uint64_t ips[2] = { at(F1, 8), at(F2, 4) };
	make(&g, NULL, ips, 2);
	struct tp_trace *t = new_trace();
	tp_stacks_close_args(t, g.rec);
	tp_stacks_close_args(t, g.rec);
	char *s = text(t);
	/* Innermost first; the innermost IP is its own address, outer ones are
	 * return addresses (looked up at ip - 1, offset shown from ip). */
	ck_assert_msg(has(s, ",\"stack\":[\"%s (%s)", nm(F1, 8), lib(F1)) &&
			      !strncmp(s, ",\"stack\":[", 10),
		      "got %s", s);
	ck_assert_msg(has(s, "\"%s (%s)", nm(F2, 4), lib(F2)), "got %s", s);
	ck_assert_uint_eq(tp_stacks_symbol_count(), 2);
	free(s);
	free_trace(t);
}
END_TEST

START_TEST(self_frames_skipped)
{
	tp_stacks_reset();
	/* Pretend libc is traceprof: its frames disappear. */
	tp_stacks_set_self_module(F1);
	struct group g;
	uint64_t ips[2] = { at(F1, 8), 0x10 };
	make(&g, NULL, ips, 2);
	struct tp_trace *t = new_trace();
	tp_stacks_close_args(t, g.rec);
	char *s = text(t);
	ck_assert_msg(!strstr(s, "libc") && strstr(s, "[\"0x10 (?)\"]}"), "got %s", s);
	free(s);
	free_trace(t);
}
END_TEST

START_TEST(tree_shared_and_frames_per_file)
{
	tp_stacks_reset();
	tp_stacks_set_self_module(NULL);
	struct group g1, g2;
	/* Two stacks with the same two outer frames. */
	uint64_t a[3] = { at(F1, 8), at(F2, 4), at(F3, 2) };
	uint64_t b[3] = { at(F4, 2), at(F2, 4), at(F3, 2) };
	make(&g1, NULL, a, 3);
	make(&g2, NULL, b, 3);
	struct tp_trace *f1 = new_trace(), *f2 = new_trace();
	f1->events = 1;
	tp_stacks_close_args(f1, g1.rec);
	f1->events = 2;
	tp_stacks_close_args(f1, g2.rec);
	f2->events = 1;
	tp_stacks_close_args(f2, g2.rec);
	ck_assert_uint_eq(tp_stacks_node_count(), 4);
	/* Each record: its stack, the args' closing brace, then its leaf. */
	char *s1 = text(f1);
	const char *sf3 = strstr(s1, "]},\"sf\":3,\"stack\":["), *sf4 = strstr(s1, "]},\"sf\":4");
	ck_assert_msg(!strncmp(s1, ",\"stack\":[", 10) && sf3 && sf4 > sf3 && !strcmp(sf4, "]},\"sf\":4"),
		      "got %s", s1);
	free(s1);

	/* File 1 defines all four nodes; file 2 only the three it uses. */
	size_t l1 = f1->j.len, l2 = f2->j.len;
	tp_stacks_write_toplevel(&f1->j);
	tp_stacks_write_toplevel(&f2->j);
	char *t1 = text(f1) + l1, *t2 = text(f2) + l2;
	ck_assert_msg(strstr(t1, "\"stackFrames\"") &&
			      has(t1, "\"3\":{\"name\":\"%s\"", nm(F1, 8), NULL) &&
			      has(t1, "\"4\":{\"name\":\"%s\"", nm(F4, 2), NULL),
		      "got %s", t1);
	ck_assert_msg(has(t1, "\"1\":{\"name\":\"%s\",\"category\":\"%s\"", nm(F3, 2), lib(F3)),
		      "got %s", t1);
	ck_assert_msg(strstr(t1, "\"parent\":1}") && strstr(t1, "\"parent\":2}"), "got %s", t1);
	ck_assert_msg(!strstr(t2, "\"3\":") && strstr(t2, "\"4\":") && strstr(t2, "\"2\":"),
		      "got %s", t2);
	free(t1 - l1);
	free(t2 - l2);

	/* A file is forgotten after its top level: nothing more to write. */
	size_t before = f1->j.len;
	tp_stacks_write_toplevel(&f1->j);
	ck_assert_uint_eq(f1->j.len, before);
	free_trace(f1);
	free_trace(f2);
}
END_TEST

START_TEST(fields_for_events_without_args)
{
	tp_stacks_reset();
	tp_stacks_set_self_module(NULL);
	struct group g;
	uint64_t ips[1] = { at(F1, 8) };
	make(&g, "marker", ips, 1);
	struct tp_trace *t = new_trace();
	tp_stacks_write_fields(t, g.rec);
	char *s = text(t);
	ck_assert_msg(!strncmp(s, ",\"args\":{\"stack\":[\"", 19) &&
			      has(s, "[\"%s (%s)", nm(F1, 8), lib(F1)),
		      "got %s", s);
	ck_assert_msg(strstr(s, "\"]},\"sf\":1"), "got %s", s);
	free(s);
	/* No stack: nothing at all. */
	struct tp_record plain = { 0 };
	size_t len = t->j.len;
	tp_stacks_write_fields(t, &plain);
	ck_assert_uint_eq(t->j.len, len);
	/* ... and only the args' closing brace from tp_stacks_close_args(). */
	tp_stacks_close_args(t, &plain);
	ck_assert_uint_eq(t->j.len, len + 1);
	ck_assert_int_eq(t->j.buf[len], '}');
	tp_stacks_write_toplevel(&t->j);
	free_trace(t);
	tp_stacks_reset();
}
END_TEST

static Suite *stacks_suite(void)
{
	Suite *s = suite_create("stacks");
	TCase *tc = tcase_create("stacks");
	tcase_add_test(tc, ips_with_and_without_string);
	tcase_add_test(tc, symbols_cached_and_named);
	tcase_add_test(tc, self_frames_skipped);
	tcase_add_test(tc, tree_shared_and_frames_per_file);
	tcase_add_test(tc, fields_for_events_without_args);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(stacks_suite());
}
