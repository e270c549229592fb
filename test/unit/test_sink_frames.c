/* Unit tests for format/sink_codec.c's flush (issue 44): a flush ends a
 * whole zstd frame (gzip member) in the file, so that the next run can keep
 * a cut file's whole frames as they are (collector/cut_codec.c); a flush
 * with nothing new ends none, nor does the end after it; the frames read
 * back one by one as the data. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "format/sink.h"

#include "test/unit/check_main.h"

static char *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	struct stat st;
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	char *b = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*n = (size_t)st.st_size;
	return b;
}

/* One frame at file[0, fn) decoded into out (cap bytes): its compressed
 * length into *len, its text's length returned. */
static size_t one_frame(int compress, const char *file, size_t fn, char *out, size_t cap,
			size_t *len)
{
	if (compress == TP_SINK_ZSTD) {
		*len = ZSTD_findFrameCompressedSize(file, fn);
		ck_assert_msg(!ZSTD_isError(*len), "zstd: %s", ZSTD_getErrorName(*len));
		size_t got = ZSTD_decompress(out, cap, file, *len);
		ck_assert_msg(!ZSTD_isError(got), "zstd: %s", ZSTD_getErrorName(got));
		return got;
	}
	z_stream z;
	memset(&z, 0, sizeof(z));
	ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)file;
	z.avail_in = (uInt)fn;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	/* Z_STREAM_END at the member's end: the rest is another member. */
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	*len = fn - z.avail_in;
	size_t got = cap - z.avail_out;
	inflateEnd(&z);
	return got;
}

static void flush_frames(int compress)
{
	char dir[] = "/tmp/tp-sink-frames.XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	size_t n = 300000, third = n / 3;
	char *data = malloc(n);
	for (size_t i = 0; i < n; i++)
		data[i] = "{\"ph\":\"i\",\"name\":\"launch\"},\n"[i % 28] + (char)(i / 7919 % 3);
	struct tp_sink *s;
	ck_assert_int_eq(tp_sink_open(&s, dir, "rank0.trace.json", compress, 3, 0), 0);
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(tp_sink_write(s, data + k * third, third), 0);
		ck_assert_int_eq(tp_sink_flush(s), 0);
	}
	uint64_t flushed = tp_sink_bytes_out(s);
	ck_assert_int_eq(tp_sink_flush(s), 0);
	ck_assert_uint_eq(tp_sink_bytes_out(s), flushed); /* nothing new: no frame */
	char path[4096];
	ck_assert_int_eq(tp_sink_close(s, path, sizeof(path)), 0);
	size_t fn;
	char *file = read_all(path, &fn);
	ck_assert_uint_eq(fn, flushed); /* the end added no empty frame */
	char *text = malloc(n);
	size_t frames = 0, tn = 0;
	for (size_t at = 0, len; at < fn; at += len, frames++) {
		size_t got = one_frame(compress, file + at, fn - at, text + tn, n - tn, &len);
		ck_assert_uint_eq(got, third); /* each frame: one flush's bytes */
		tn += got;
	}
	ck_assert_uint_eq(frames, 3);
	ck_assert_uint_eq(tn, 3 * third);
	ck_assert_int_eq(memcmp(text, data, tn), 0);
	free(text);
	free(file);
	free(data);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}

START_TEST(test_zstd_flush_ends_frames)
{
	flush_frames(TP_SINK_ZSTD);
}
END_TEST

START_TEST(test_gzip_flush_ends_members)
{
	flush_frames(TP_SINK_GZIP);
}
END_TEST

static Suite *frames_suite(void)
{
	Suite *s = suite_create("sink_frames");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_zstd_flush_ends_frames);
	tcase_add_test(tc, test_gzip_flush_ends_members);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tp_check_run(frames_suite());
}
