/* The next run finishes compressed cut windows (.json.gz, .json.zst) of
 * earlier ones (issue 44), as collector/cut.c does plain ones.
 *
 * The writer ends a zstd frame (a gzip member) at each of its 0.5 s flushes,
 * at an event boundary (format/sink_codec.c), and a reader concatenates
 * them.  So the file of a process that died is whole frames, each checked
 * by its own checksum (CRC), then maybe one cut short.  Finishing keeps the
 * whole frames as they are, truncates the file after the last one, and
 * appends one frame holding the closing text (tp_cut_closing()): no copy,
 * no compression of what is kept.  The text is decompressed once, as a
 * stream, to read the header and to count the events and find the last
 * step (the footer's count, the window's name); nothing of it is kept but
 * the current line.  What a cut frame held (at most the last flush
 * interval) is lost, as the death guarantee allows (docs/guarantees.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "collector/cut_int.h"
#include "format/sink.h"

#define CC_IN (1u << 20) /* compressed bytes read at a time */
#define CC_OUT (1u << 17) /* decompressed bytes handed over at a time */
#define CC_LINE 65536 /* an event's line is read this far (its step name first) */

/* The text of a file, read as a stream of pieces. */
struct cc_text {
	struct tp_cut_head *hd;
	long pid;
	char *head; /* TP_CUT_HEAD + 1: the text until the header is read */
	size_t hn;
	int in_body; /* the header read: the events' lines follow */
	char *line; /* CC_LINE: the current line, cut at CC_LINE */
	size_t ln;
	int over; /* the current line is longer than CC_LINE */
	int ended; /* a line that is no event: the writer's end began */
	unsigned long long events;
	long long last_step;
	struct tp_cut_scan *at; /* what the last whole frame ends with */
	int have; /* at holds a whole frame's end */
};

/* One whole line of the events (without its '\n'). */
static void cc_line(struct cc_text *t, const char *b, size_t n)
{
	if (t->ended)
		return;
	if (!n || b[0] != '{') {
		t->ended = 1;
		return;
	}
	t->events++;
	long long st = tp_cut_step(b, b + n);
	if (st >= 0)
		t->last_step = st;
}

static void cc_body(struct cc_text *t, const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n;
		size_t room = CC_LINE - t->ln;
		if (k > room)
			t->over = 1;
		memcpy(t->line + t->ln, p, k < room ? k : room);
		t->ln += k < room ? k : room;
		if (!nl)
			return;
		cc_line(t, t->line, t->ln);
		t->ln = 0;
		t->over = 0;
		p += k + 1;
		n -= k + 1;
	}
}

/* Decompressed text p[0, n). */
static void cc_feed(void *ctx, const char *p, size_t n)
{
	struct cc_text *t = ctx;
	if (t->in_body) {
		cc_body(t, p, n);
		return;
	}
	size_t k = TP_CUT_HEAD - t->hn < n ? TP_CUT_HEAD - t->hn : n;
	memcpy(t->head + t->hn, p, k);
	t->hn += k;
	t->head[t->hn] = '\0';
	if (tp_cut_head_parse(t->head, t->hn, t->hd, t->pid) < 0)
		return; /* more to come, or (TP_CUT_HEAD read) none: no frame is kept */
	t->in_body = 1;
	cc_body(t, t->head + t->hd->events_at, t->hn - t->hd->events_at);
	cc_body(t, p + k, n - k);
}

/* A frame ended at byte off of the file: its text ends on an event's end
 * (the writer's flush) or the header's.  Returns 0, or -1 when it does
 * not (then the frames before it are what is kept). */
static int cc_frame_end(void *ctx, size_t off)
{
	struct cc_text *t = ctx;
	if (!t->in_body || t->ended || t->over)
		return -1;
	unsigned long long events = t->events;
	long long last = t->last_step;
	if (t->ln) {
		/* The last event, whole, its separator in the next frame. */
		if (!tp_cut_whole(t->line, t->line + t->ln))
			return -1;
		events++;
		long long st = tp_cut_step(t->line, t->line + t->ln);
		if (st >= 0)
			last = st;
	}
	t->at->keep = off;
	t->at->events = events;
	t->at->last_step = last;
	t->have = 1;
	return 0;
}

/* The file's next compressed bytes from base into in: their count, 0 at
 * its end, or -errno. */
static ssize_t cc_read(int fd, unsigned char *in, size_t base, size_t size)
{
	for (;;) {
		ssize_t got = pread(fd, in, size - base < CC_IN ? size - base : CC_IN, (off_t)base);
		if (got >= 0 || errno != EINTR)
			return got < 0 ? -errno : got;
	}
}

/* Reads the file through zstd's stream decoder: 0 at its end or where it
 * is cut or broken, -errno. */
static int cc_zstd(int fd, size_t size, const struct tp_cut_stream *t, unsigned char *in,
		   char *out)
{
	ZSTD_DStream *d = ZSTD_createDStream();
	if (!d)
		return -ENOMEM;
	/* A frame's window is at most the writer's level's (2^23 at -19):
	 * a larger one is no writer's, and not worth the memory. */
	ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 24);
	int rc = 0;
	for (size_t base = 0; base < size;) {
		ssize_t got = cc_read(fd, in, base, size);
		if (got <= 0) {
			rc = (int)got;
			break;
		}
		ZSTD_inBuffer ib = { in, (size_t)got, 0 };
		for (;;) {
			ZSTD_outBuffer ob = { out, CC_OUT, 0 };
			size_t r = ZSTD_decompressStream(d, &ob, &ib);
			if (ZSTD_isError(r))
				goto done; /* broken: the frames before are kept */
			t->feed(t->ctx, out, ob.pos);
			if (r == 0 && t->frame_end(t->ctx, base + ib.pos) < 0)
				goto done;
			if (ib.pos == ib.size && ob.pos < ob.size)
				break;
		}
		base += (size_t)got;
	}
done:
	ZSTD_freeDStream(d);
	return rc;
}

/* The same through zlib, member by member. */
static int cc_gzip(int fd, size_t size, const struct tp_cut_stream *t, unsigned char *in,
		   char *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	int rc = 0;
	for (size_t base = 0; base < size;) {
		ssize_t got = cc_read(fd, in, base, size);
		if (got <= 0) {
			rc = (int)got;
			break;
		}
		z.next_in = in;
		z.avail_in = (uInt)got;
		for (;;) {
			z.next_out = (Bytef *)out;
			z.avail_out = CC_OUT;
			int zr = inflate(&z, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
				goto done; /* broken: the members before are kept */
			t->feed(t->ctx, out, CC_OUT - z.avail_out);
			if (zr == Z_STREAM_END) {
				/* A member's end: the next one starts a new header. */
				if (t->frame_end(t->ctx, base + (size_t)got - z.avail_in) < 0 ||
				    inflateReset(&z) != Z_OK)
					goto done;
				if (!z.avail_in)
					break;
			} else if (z.avail_out && (!z.avail_in || zr == Z_BUF_ERROR)) {
				break; /* all its output given: more input needed */
			}
		}
		base += (size_t)got;
	}
done:
	inflateEnd(&z);
	return rc;
}

/* A plain file, fed as it is (its consumer finds its own boundaries). */
static int cc_plain(int fd, size_t size, const struct tp_cut_stream *t, unsigned char *in)
{
	for (size_t base = 0; base < size;) {
		ssize_t got = cc_read(fd, in, base, size);
		if (got <= 0)
			return (int)got;
		t->feed(t->ctx, (const char *)in, (size_t)got);
		base += (size_t)got;
	}
	return 0;
}

int tp_cut_codec_read(int fd, int codec, size_t size, const struct tp_cut_stream *t)
{
	unsigned char *in = malloc(CC_IN);
	char *out = malloc(CC_OUT);
	int rc = -ENOMEM;
	if (in && out)
		rc = codec == TP_SINK_ZSTD ? cc_zstd(fd, size, t, in, out)
		     : codec == TP_SINK_GZIP ? cc_gzip(fd, size, t, in, out)
					      : cc_plain(fd, size, t, in);
	free(in);
	free(out);
	return rc;
}

int tp_cut_codec_scan(int fd, int codec, size_t size, long pid, struct tp_cut_head *hd,
		      struct tp_cut_scan *s)
{
	struct cc_text t = { .hd = hd, .pid = pid, .last_step = -1, .at = s };
	struct tp_cut_stream st = { cc_feed, cc_frame_end, &t };
	t.head = malloc(TP_CUT_HEAD + 1);
	t.line = malloc(CC_LINE);
	int rc = -ENOMEM;
	if (t.head && t.line)
		rc = codec == TP_SINK_PLAIN ? -EINVAL : tp_cut_codec_read(fd, codec, size, &st);
	if (!rc && !t.have)
		rc = t.in_body || t.hn < TP_CUT_HEAD ? -ENODATA : -EINVAL;
	free(t.head);
	free(t.line);
	return rc;
}

int tp_cut_codec_end(int fd, int codec, size_t off, const char *text, size_t n)
{
	/* Small (the closing text): one call each, into a buffer its bound. */
	size_t cap = codec == TP_SINK_ZSTD ? ZSTD_compressBound(n) : n + n / 1000 + 64;
	unsigned char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	size_t len = 0;
	int rc = -EIO;
	if (codec == TP_SINK_ZSTD) {
		ZSTD_CCtx *c = ZSTD_createCCtx();
		/* A checksum, as the writer's frames have. */
		if (c && !ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1))) {
			len = ZSTD_compress2(c, buf, cap, text, n);
			rc = ZSTD_isError(len) ? -EIO : 0;
		}
		ZSTD_freeCCtx(c);
	} else if (codec == TP_SINK_GZIP) {
		z_stream z;
		memset(&z, 0, sizeof(z));
		if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
			cap = deflateBound(&z, (uLong)n) < cap ? cap : deflateBound(&z, (uLong)n);
			unsigned char *more = realloc(buf, cap);
			if (more) {
				buf = more;
				z.next_in = (Bytef *)text;
				z.avail_in = (uInt)n;
				z.next_out = buf;
				z.avail_out = (uInt)cap;
				if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
					len = cap - z.avail_out;
					rc = 0;
				}
			}
			deflateEnd(&z);
		}
	}
	if (!rc)
		rc = tp_cut_put(fd, off, buf, len);
	free(buf);
	return rc;
}
