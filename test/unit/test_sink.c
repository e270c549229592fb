/* Unit tests for format/sink*.c: compression round trips, the temporary
 * file, never replacing or following what is at the final name, folders,
 * and the anchored root's descriptor closed under an *at() call. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "format/sink.h"

#include "test/unit/check_main.h"

static char *make_dir(void)
{
	char *d = strdup("/tmp/tp-sink-test.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)sz + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)sz, f), (size_t)sz);
	b[sz] = '\0';
	fclose(f);
	*n = (size_t)sz;
	return b;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Names in dir, sorted and joined with ' ' (hidden ones included). */
static char *list_dir(const char *dir)
{
	static char out[4096];
	char names[64][256];
	int n = 0;
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d)) && n < 64) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(names[n++], 256, "%s", e->d_name);
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int k = i + 1; k < n; k++)
			if (strcmp(names[k], names[i]) < 0) {
				char t[256];
				memcpy(t, names[i], 256);
				memcpy(names[i], names[k], 256);
				memcpy(names[k], t, 256);
			}
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, names[i]);
	}
	return out;
}

/* ~3 MB of trace-like, compressible but not trivial data. */
static char *make_data(size_t n)
{
	char *b = malloc(n);
	ck_assert_ptr_nonnull(b);
	uint64_t x = 12345;
	size_t o = 0;
	while (o < n) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		char ev[160];
		int k = snprintf(ev, sizeof(ev),
				 "{\"ph\":\"X\",\"name\":\"k%u\",\"ts\":%u.%03u,\"dur\":%u},\n",
				 (unsigned)(x >> 60), (unsigned)(x >> 20) & 0xfffff,
				 (unsigned)(x >> 8) % 1000, (unsigned)(x >> 40) & 0xff);
		size_t c = (size_t)k < n - o ? (size_t)k : n - o;
		memcpy(b + o, ev, c);
		o += c;
	}
	return b;
}

/* Writes data in pieces of varying sizes (1 byte to 200 KiB). */
static void write_pieces(struct tp_sink *s, const char *data, size_t n)
{
	size_t o = 0, step = 1;
	while (o < n) {
		size_t c = step < n - o ? step : n - o;
		ck_assert_int_eq(tp_sink_write(s, data + o, c), 0);
		o += c;
		step = step * 3 + 7;
		if (step > 200000)
			step = 1;
	}
}

static char *gunzip(const char *in, size_t n, size_t *outn)
{
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* 15 + 32: detect the gzip (or zlib) header automatically. */
	ck_assert_int_eq(inflateInit2(&z, 15 + 32), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	int rc;
	do {
		if (cap - len < 65536) {
			cap *= 2;
			out = realloc(out, cap);
		}
		z.next_out = (Bytef *)out + len;
		z.avail_out = (uInt)(cap - len);
		rc = inflate(&z, Z_NO_FLUSH);
		ck_assert_msg(rc == Z_OK || rc == Z_STREAM_END, "inflate: %d", rc);
		len = cap - z.avail_out;
	} while (rc != Z_STREAM_END);
	ck_assert_uint_eq(z.avail_in, 0);
	inflateEnd(&z);
	*outn = len;
	return out;
}

/* threads: TRACEPROF_ZSTD_THREADS (a no-op for the other modes). */
static void round_trip(int compress, const char *want_name, int threads)
{
	char *dir = make_dir();
	size_t n = 3000000;
	char *data = make_data(n);
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, "rank0.trace.json", compress, 3, 0), 0);
	ck_assert_int_eq(tp_sink_zstd_threads(s, threads), 0);
	write_pieces(s, data, n);
	uint64_t out_bytes = tp_sink_bytes_out(s);
	char path[4096], want[4096];
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/%s", dir, want_name);
	ck_assert_str_eq(path, want);
	ck_assert_str_eq(list_dir(dir), want_name); /* no temporary file left */

	size_t fn;
	char *file = read_file(path, &fn);
	char *plain = file;
	size_t pn = fn;
	if (compress == TP_SINK_ZSTD) {
		unsigned long long sz = ZSTD_getFrameContentSize(file, fn);
		/* Streamed: the size is not in the header. */
		ck_assert(sz == ZSTD_CONTENTSIZE_UNKNOWN || sz == n);
		plain = malloc(n + 1);
		pn = ZSTD_decompress(plain, n + 1, file, fn);
		ck_assert_msg(!ZSTD_isError(pn), "zstd: %s", ZSTD_getErrorName(pn));
		ck_assert_uint_lt(fn, n / 3);
	} else if (compress == TP_SINK_GZIP) {
		plain = gunzip(file, fn, &pn);
		ck_assert_uint_lt(fn, n / 3);
	}
	ck_assert_uint_le(out_bytes, fn);
	ck_assert_uint_eq(pn, n);
	ck_assert_int_eq(memcmp(plain, data, n), 0);
	if (plain != file)
		free(plain);
	free(file);
	free(data);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
	free(dir);
}

START_TEST(test_plain_round_trip)
{
	round_trip(TP_SINK_PLAIN, "rank0.trace.json", 2);
}
END_TEST

START_TEST(test_zstd_round_trip)
{
	round_trip(TP_SINK_ZSTD, "rank0.trace.json.zst", 0);
}
END_TEST

START_TEST(test_zstd_threads_round_trip)
{
	/* Two of libzstd's threads, 3 MB: more than one of its jobs. */
	round_trip(TP_SINK_ZSTD, "rank0.trace.json.zst", 2);
}
END_TEST

START_TEST(test_gzip_round_trip)
{
	round_trip(TP_SINK_GZIP, "rank0.trace.json.gz", 2);
}
END_TEST

START_TEST(test_temp_file_visible_then_gone)
{
	char *dir = make_dir();
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, "a.json", TP_SINK_PLAIN, 0, 0), 0);
	ck_assert_int_eq(tp_sink_write(s, "{}", 2), 0);
	/* While open, only the hidden temporary file exists. */
	char want[256];
	snprintf(want, sizeof(want), ".a.json.tmp.%ld.", (long)getpid());
	const char *l = list_dir(dir);
	ck_assert_msg(!strncmp(l, want, strlen(want)) && !strchr(l, ' '), "listing: %s", l);
	tp_sink_abort(s);
	ck_assert_str_eq(list_dir(dir), "");

	/* Aborting a compressed sink cleans up too. */
	ck_assert_int_eq(tp_sink_open(&s, dir, "a.json", TP_SINK_ZSTD, 1, 0), 0);
	ck_assert_int_eq(tp_sink_write(s, "{}", 2), 0);
	tp_sink_abort(s);
	ck_assert_str_eq(list_dir(dir), "");
	ck_assert_int_eq(rmdir(dir), 0);
	free(dir);
}
END_TEST

START_TEST(test_mode_follows_umask)
{
	char *dir = make_dir();
	mode_t masks[] = { 022, 077, 0 };
	for (int i = 0; i < 3; i++) {
		umask(masks[i]);
		struct tp_sink *s;
		char path[4096];
		ck_assert_int_eq(tp_sink_open(&s, dir, "m.json", TP_SINK_PLAIN, 0, 1), 0);
		ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), 0);
		struct stat st;
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0644 & ~masks[i]);
		unlink(path);
	}
	rmdir(dir);
	free(dir);
}
END_TEST

static void make_trace(const char *dir, const char *name, int compress, int overwrite,
		       const char *text, char *path)
{
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, name, compress, 1, overwrite), 0);
	ck_assert_int_eq(tp_sink_write(s, text, strlen(text)), 0);
	ck_assert_int_eq(tp_sink_close(s, path, 4096), 0);
}

START_TEST(test_no_overwrite_unique_suffix)
{
	char *dir = make_dir();
	char path[4096], want[4096];
	size_t n;
	make_trace(dir, "rank0.step3.trace.json", TP_SINK_PLAIN, 0, "first", path);
	make_trace(dir, "rank0.step3.trace.json", TP_SINK_PLAIN, 0, "second", path);
	snprintf(want, sizeof(want), "%s/rank0.step3.trace.1.json", dir);
	ck_assert_str_eq(path, want);
	make_trace(dir, "rank0.step3.trace.json", TP_SINK_PLAIN, 0, "third", path);
	snprintf(want, sizeof(want), "%s/rank0.step3.trace.2.json", dir);
	ck_assert_str_eq(path, want);
	snprintf(want, sizeof(want), "%s/rank0.step3.trace.json", dir);
	char *b = read_file(want, &n);
	ck_assert_str_eq(b, "first"); /* the original is untouched */
	free(b);

	/* The number goes before ".json.gz" / ".json.zst", or at the end. */
	make_trace(dir, "r.json", TP_SINK_GZIP, 0, "x", path);
	make_trace(dir, "r.json", TP_SINK_GZIP, 0, "x", path);
	snprintf(want, sizeof(want), "%s/r.1.json.gz", dir);
	ck_assert_str_eq(path, want);
	make_trace(dir, "r.json", TP_SINK_ZSTD, 0, "x", path);
	make_trace(dir, "r.json", TP_SINK_ZSTD, 0, "x", path);
	snprintf(want, sizeof(want), "%s/r.1.json.zst", dir);
	ck_assert_str_eq(path, want);
	make_trace(dir, "plain.txt", TP_SINK_PLAIN, 0, "x", path);
	make_trace(dir, "plain.txt", TP_SINK_PLAIN, 0, "x", path);
	snprintf(want, sizeof(want), "%s/plain.txt.1", dir);
	ck_assert_str_eq(path, want);
	make_trace(dir, "noext", TP_SINK_ZSTD, 0, "x", path);
	make_trace(dir, "noext", TP_SINK_ZSTD, 0, "x", path);
	snprintf(want, sizeof(want), "%s/noext.1.zst", dir);
	ck_assert_str_eq(path, want);
	ck_assert_str_eq(list_dir(dir), "noext.1.zst noext.zst plain.txt plain.txt.1 r.1.json.gz "
					"r.1.json.zst r.json.gz r.json.zst rank0.step3.trace.1.json "
					"rank0.step3.trace.2.json rank0.step3.trace.json");
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}
END_TEST

START_TEST(test_overwrite_replaces)
{
	char *dir = make_dir();
	char path[4096], want[4096];
	size_t n;
	make_trace(dir, "t.json", TP_SINK_PLAIN, 1, "first", path);
	make_trace(dir, "t.json", TP_SINK_PLAIN, 1, "second", path);
	snprintf(want, sizeof(want), "%s/t.json", dir);
	ck_assert_str_eq(path, want);
	char *b = read_file(path, &n);
	ck_assert_str_eq(b, "second");
	free(b);
	ck_assert_str_eq(list_dir(dir), "t.json");
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

START_TEST(test_symlink_not_followed)
{
	char *dir = make_dir();
	char victim[4096], link[4096], path[4096], want[4096];
	size_t n;
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	write_file(victim, "precious");
	snprintf(link, sizeof(link), "%s/t.json", dir);
	ck_assert_int_eq(symlink(victim, link), 0);

	/* Without overwrite the link counts as an existing file. */
	make_trace(dir, "t.json", TP_SINK_PLAIN, 0, "trace", path);
	snprintf(want, sizeof(want), "%s/t.1.json", dir);
	ck_assert_str_eq(path, want);
	char *b = read_file(victim, &n);
	ck_assert_str_eq(b, "precious");
	free(b);
	struct stat st;
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));

	/* With overwrite the link itself is replaced, its target untouched. */
	make_trace(dir, "t.json", TP_SINK_PLAIN, 1, "trace2", path);
	ck_assert_str_eq(path, link);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	b = read_file(victim, &n);
	ck_assert_str_eq(b, "precious");
	free(b);
	b = read_file(link, &n);
	ck_assert_str_eq(b, "trace2");
	free(b);

	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}
END_TEST

START_TEST(test_folder_errors)
{
	char *dir = make_dir();
	char file[4096], sub[4096];
	struct tp_sink *s = (struct tp_sink *)1;
	snprintf(file, sizeof(file), "%s/file", dir);
	write_file(file, "x");
	ck_assert_int_eq(tp_sink_open(&s, file, "t.json", TP_SINK_PLAIN, 0, 0), -ENOTDIR);
	ck_assert_ptr_null(s);
	snprintf(sub, sizeof(sub), "%s/missing", dir);
	ck_assert_int_eq(tp_sink_open(&s, sub, "t.json", TP_SINK_PLAIN, 0, 0), -ENOENT);
	ck_assert_int_eq(tp_sink_open(&s, dir, "a/b.json", TP_SINK_PLAIN, 0, 0), -EINVAL);
	ck_assert_int_eq(tp_sink_open(&s, dir, "", TP_SINK_PLAIN, 0, 0), -EINVAL);
	ck_assert_int_eq(tp_sink_open(&s, dir, "..", TP_SINK_PLAIN, 0, 0), -EINVAL);
	ck_assert_int_eq(tp_sink_open(&s, dir, "t.json", 7, 0, 0), -EINVAL);

	/* Root ignores permission bits, so this check means nothing there. */
	if (geteuid() != 0) {
		char ro[4096];
		snprintf(ro, sizeof(ro), "%s/ro", dir);
		ck_assert_int_eq(mkdir(ro, 0555), 0);
		ck_assert_int_eq(tp_sink_open(&s, ro, "t.json", TP_SINK_PLAIN, 0, 0), -EACCES);
		rmdir(ro);
	}
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}
END_TEST

START_TEST(test_mkdirs)
{
	char *dir = make_dir();
	char p[4096], file[4096];
	snprintf(p, sizeof(p), "%s/a/b//c/", dir);
	ck_assert_int_eq(tp_sink_mkdirs(p), 0);
	ck_assert_int_eq(tp_sink_mkdirs(p), 0); /* already there */
	struct stat st;
	snprintf(p, sizeof(p), "%s/a/b/c", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));

	snprintf(file, sizeof(file), "%s/a/f", dir);
	write_file(file, "x");
	ck_assert_int_eq(tp_sink_mkdirs(file), -ENOTDIR); /* the last component */
	snprintf(p, sizeof(p), "%s/a/f/g/h", dir);
	ck_assert_int_eq(tp_sink_mkdirs(p), -ENOTDIR); /* a middle one */
	ck_assert_int_eq(tp_sink_mkdirs(""), -ENOENT);

	/* Then a sink can open there and report folder/name. */
	snprintf(p, sizeof(p), "%s/a/b/c/", dir);
	struct tp_sink *s;
	char path[4096], want[4096];
	ck_assert_int_eq(tp_sink_open(&s, p, "t.json", TP_SINK_PLAIN, 0, 0), 0);
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/a/b/c/t.json", dir);
	ck_assert_str_eq(path, want);

	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}
END_TEST

START_TEST(test_path_too_small)
{
	/* A path buffer too small fails before the rename: no file appears. */
	char *dir = make_dir();
	struct tp_sink *s;
	char path[8];
	ck_assert_int_eq(tp_sink_open(&s, dir, "t.json", TP_SINK_PLAIN, 0, 0), 0);
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), -ENAMETOOLONG);
	ck_assert_str_eq(list_dir(dir), "");
	rmdir(dir);
	free(dir);
}
END_TEST

/* The program closing the anchored root's number between traceprof's check
 * and its *at() call: these stand in for glibc's mkdirat and renameat (the
 * test binary's definitions come first) and, when armed, close the
 * descriptor they are given before making the call, which then fails with
 * EBADF as it would in that race. */
static int close_root_at_next_call;

static void maybe_close(int dfd)
{
	if (close_root_at_next_call && dfd >= 0) {
		close_root_at_next_call = 0;
		close(dfd);
	}
}

int mkdirat(int dfd, const char *path, mode_t mode)
{
	maybe_close(dfd);
	return (int)syscall(SYS_mkdirat, dfd, path, mode);
}

int renameat(int odfd, const char *old, int ndfd, const char *new)
{
	maybe_close(odfd);
	return (int)syscall(SYS_renameat2, odfd, old, ndfd, new, 0);
}

START_TEST(test_root_closed_under_mkdirat)
{
	char *dir = make_dir();
	char p[4096];
	snprintf(p, sizeof(p), "%s/x/y", dir);
	ck_assert_int_eq(tp_sink_anchor(), 0);
	close_root_at_next_call = 1;
	ck_assert_int_eq(tp_sink_mkdirs(p), 0);
	ck_assert_int_eq(close_root_at_next_call, 0); /* it did close it */
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(dir);
}
END_TEST

START_TEST(test_root_closed_under_renameat)
{
	/* With overwrite, the publish is a renameat() on names in the folder,
	 * reached from the root: its EBADF is retried as the folder's own. */
	char *dir = make_dir();
	struct tp_sink *s;
	char path[4096], want[4096];
	ck_assert_int_eq(tp_sink_anchor(), 0);
	ck_assert_int_eq(tp_sink_open(&s, dir, "t.json", TP_SINK_PLAIN, 0, 1), 0);
	ck_assert_int_eq(tp_sink_write(s, "{}", 2), 0);
	close_root_at_next_call = 1;
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), 0);
	ck_assert_int_eq(close_root_at_next_call, 0);
	snprintf(want, sizeof(want), "%s/t.json", dir);
	ck_assert_str_eq(path, want);
	ck_assert_str_eq(list_dir(dir), "t.json");
	unlink(want);
	rmdir(dir);
	free(dir);
}
END_TEST

static Suite *sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_plain_round_trip);
	tcase_add_test(tc, test_zstd_round_trip);
	tcase_add_test(tc, test_zstd_threads_round_trip);
	tcase_add_test(tc, test_gzip_round_trip);
	tcase_add_test(tc, test_temp_file_visible_then_gone);
	tcase_add_test(tc, test_mode_follows_umask);
	tcase_add_test(tc, test_no_overwrite_unique_suffix);
	tcase_add_test(tc, test_overwrite_replaces);
	tcase_add_test(tc, test_symlink_not_followed);
	tcase_add_test(tc, test_folder_errors);
	tcase_add_test(tc, test_mkdirs);
	tcase_add_test(tc, test_path_too_small);
	tcase_add_test(tc, test_root_closed_under_mkdirat);
	tcase_add_test(tc, test_root_closed_under_renameat);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(sink_suite());
}
