/* Tests: the text a writer produced, through the writer interface only (a
 * plain file sink in a temporary folder, read back), so that a test does
 * not depend on a writer's internals.  wt_text() closes the current file,
 * appends its text to everything read so far, and opens the next file: the
 * text holds every file's header and trailer too. */
#ifndef TP_TEST_WRITER_TEXT_H
#define TP_TEST_WRITER_TEXT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/sink.h"
#include "format/writer.h"

struct wt {
	char dir[64];
	const struct tp_doc *devices;
	struct tp_sink *sink;
	struct tp_writer *w;
	char *text;
	size_t len;
};

static inline void wt_next(struct wt *t)
{
	struct tp_writer_header h;
	memset(&h, 0, sizeof(h)); /* time base 0: ts = monotonic ns / 1000 */
	h.devices = t->devices;
	ck_assert_int_eq(tp_sink_open(&t->sink, t->dir, "t.json", TP_SINK_PLAIN, 0, 1), 0);
	t->w = tp_writer_open(&tp_json_writer, t->sink, &h);
	ck_assert_ptr_nonnull(t->w);
}

/* Opens the first file; devices: the header's deviceProperties, or NULL. */
static inline void wt_open(struct wt *t, const struct tp_doc *devices)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/tp-wt.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	t->devices = devices;
	t->text = calloc(1, 1);
	wt_next(t);
}

static inline void wt_finish(struct wt *t)
{
	struct tp_writer_trailer tr = { 0 };
	char path[4096];
	ck_assert_int_eq(tp_writer_close(t->w, &tr), 0);
	ck_assert_int_eq(tp_sink_close(t->sink, path, sizeof(path)), 0);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		t->text = realloc(t->text, t->len + n + 1);
		ck_assert_ptr_nonnull(t->text);
		memcpy(t->text + t->len, buf, n);
		t->len += n;
		t->text[t->len] = '\0';
	}
	fclose(f);
	unlink(path);
	t->w = NULL;
}

static inline const char *wt_text(struct wt *t)
{
	wt_finish(t);
	wt_next(t);
	return t->text;
}

static inline void wt_free(struct wt *t)
{
	if (t->w) {
		tp_writer_discard(t->w);
		tp_sink_abort(t->sink);
	}
	rmdir(t->dir);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

#endif
