/* collector/stacks.c: reading IPs from a record's extras, the per-address
 * symbol cache, the stack args, the frame tree and each file's frames. */
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

#define F1 ((void *)getenv)
#define F2 ((void *)strtol)
#define F3 ((void *)atoi)
#define F4 ((void *)strtoul)

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

/* A writer that keeps what tp_stacks_frames() gives it. */
struct fake_frame {
	uint32_t id, parent;
	char name[160], category[64];
};

struct fake {
	struct tp_writer w;
	struct fake_frame f[16];
	size_t n;
};

static void fake_frame(struct tp_writer *w, uint32_t id, uint32_t parent, const char *name,
		       const char *category)
{
	struct fake *f = (struct fake *)w;
	ck_assert_uint_lt(f->n, 16);
	struct fake_frame *x = &f->f[f->n++];
	x->id = id;
	x->parent = parent;
	snprintf(x->name, sizeof(x->name), "%s", name);
	snprintf(x->category, sizeof(x->category), "%s", category);
}

static const struct tp_writer_ops fake_ops = { .name = "fake", .frame = fake_frame };

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));
	ck_assert_ptr_nonnull(f);
	f->w.ops = &fake_ops;
	return f;
}

static const struct fake_frame *frame(const struct fake *f, uint32_t id)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->f[i].id == id)
			return &f->f[i];
	return NULL;
}

/* "name (module)" of fn+off, as a stack arg names it. */
static const char *frame_text(void *fn, unsigned off)
{
	static char buf[4][300];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, sizeof(buf[0]), "%s (%s)", nm(fn, off), lib(fn));
	return b;
}

static struct tp_stack_args sbuf;

START_TEST(symbols_cached_and_named)
{
	tp_stacks_reset();
	tp_stacks_set_self_module(NULL);
	struct group g;
	uint64_t ips[2] = { at(F1, 8), at(F2, 4) };
	make(&g, NULL, ips, 2);
	struct fake *f = new_fake();
	struct tp_arg args[4];
	unsigned n = 1;
	args[0] = TP_ARG(u64, "result", 0);
	uint32_t leaf = tp_stacks_args(&f->w, g.rec, &sbuf, args, &n);
	ck_assert_uint_ne(leaf, 0);
	ck_assert_uint_eq(tp_stacks_args(&f->w, g.rec, &sbuf, args, &n), leaf);
	ck_assert_uint_eq(n, 3);
	/* Appended after the caller's args; innermost first; the innermost IP
	 * is its own address, outer ones are return addresses (looked up at
	 * ip - 1, offset shown from ip). */
	ck_assert_str_eq(args[1].key, "stack");
	ck_assert_uint_eq(args[1].klen, 5);
	ck_assert_uint_eq(args[1].type, TP_VAL_STRS);
	ck_assert_uint_eq(args[1].n, 2);
	ck_assert_str_eq(args[1].strs[0], frame_text(F1, 8));
	ck_assert_str_eq(args[1].strs[1], frame_text(F2, 4));
	ck_assert_uint_eq(tp_stacks_symbol_count(), 2);
	tp_stacks_frames(&f->w);
	free(f);
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
	struct fake *f = new_fake();
	struct tp_arg args[2];
	unsigned n = 0;
	tp_stacks_args(&f->w, g.rec, &sbuf, args, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(args[0].n, 1);
	ck_assert_str_eq(args[0].strs[0], "0x10 (?)");
	tp_stacks_frames(&f->w);
	free(f);
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
	struct fake *f1 = new_fake(), *f2 = new_fake();
	struct tp_arg args[2];
	unsigned n = 0;
	f1->w.events = 1;
	ck_assert_uint_eq(tp_stacks_args(&f1->w, g1.rec, &sbuf, args, &n), 3);
	n = 0;
	f1->w.events = 2;
	ck_assert_uint_eq(tp_stacks_args(&f1->w, g2.rec, &sbuf, args, &n), 4);
	n = 0;
	f2->w.events = 1;
	ck_assert_uint_eq(tp_stacks_args(&f2->w, g2.rec, &sbuf, args, &n), 4);
	ck_assert_uint_eq(tp_stacks_node_count(), 4);

	/* File 1 defines all four nodes; file 2 only the three it uses. */
	tp_stacks_frames(&f1->w);
	tp_stacks_frames(&f2->w);
	ck_assert_uint_eq(f1->n, 4);
	ck_assert_str_eq(frame(f1, 3)->name, nm(F1, 8));
	ck_assert_str_eq(frame(f1, 4)->name, nm(F4, 2));
	ck_assert_str_eq(frame(f1, 1)->name, nm(F3, 2));
	ck_assert_str_eq(frame(f1, 1)->category, lib(F3));
	ck_assert_uint_eq(frame(f1, 1)->parent, 0);
	ck_assert_uint_eq(frame(f1, 2)->parent, 1);
	ck_assert_uint_eq(frame(f1, 3)->parent, 2);
	ck_assert_uint_eq(frame(f1, 4)->parent, 2);
	ck_assert_uint_eq(f2->n, 3);
	ck_assert_ptr_null(frame(f2, 3));
	ck_assert_ptr_nonnull(frame(f2, 4));
	ck_assert_ptr_nonnull(frame(f2, 2));

	/* A file is forgotten after its frames: nothing more to write. */
	tp_stacks_frames(&f1->w);
	ck_assert_uint_eq(f1->n, 4);
	free(f1);
	free(f2);
}
END_TEST

START_TEST(a_new_file_at_a_reused_address)
{
	tp_stacks_reset();
	tp_stacks_set_self_module(NULL);
	struct group g1, g2;
	uint64_t a[1] = { at(F1, 8) };
	uint64_t b[1] = { at(F4, 2) };
	make(&g1, NULL, a, 1);
	make(&g2, NULL, b, 1);
	struct fake *f = new_fake();
	struct tp_arg args[2];
	unsigned n = 0;
	f->w.events = 5;
	ck_assert_uint_eq(tp_stacks_args(&f->w, g1.rec, &sbuf, args, &n), 1);
	/* Discarded without its frames; a new writer at the same address has
	 * written fewer events: the first file's marks are not its own. */
	f->w.events = 1;
	n = 0;
	ck_assert_uint_eq(tp_stacks_args(&f->w, g2.rec, &sbuf, args, &n), 2);
	tp_stacks_frames(&f->w);
	ck_assert_uint_eq(f->n, 1);
	ck_assert_uint_eq(f->f[0].id, 2);
	free(f);
}
END_TEST

START_TEST(nothing_without_a_stack)
{
	tp_stacks_reset();
	struct fake *f = new_fake();
	struct tp_record plain = { 0 };
	struct tp_arg args[2];
	unsigned n = 0;
	ck_assert_uint_eq(tp_stacks_args(&f->w, &plain, &sbuf, args, &n), 0);
	ck_assert_uint_eq(n, 0);
	tp_stacks_frames(&f->w);
	ck_assert_uint_eq(f->n, 0);
	free(f);
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
	tcase_add_test(tc, a_new_file_at_a_reused_address);
	tcase_add_test(tc, nothing_without_a_stack);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(stacks_suite());
}
