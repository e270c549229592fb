/* The sink's streamed compression: zstd (the configurable one), gzip (the
 * one every viewer reads), or none; each block it produces goes to the file
 * through tp_sink_out() (format/sink_int.h). */
#include "format/sink_int.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* gzip is the compatibility choice (every viewer reads it), so it gets the
 * fastest level: the flush thread must keep up with the rings.  zstd is the
 * one with a configurable level. */
#define SK_GZIP_LEVEL 1

int tp_sink_codec_init(struct tp_sink *s, int zstd_level)
{
	if (s->compress == TP_SINK_ZSTD) {
		s->zc = ZSTD_createCStream();
		if (!s->zc)
			return -ENOMEM;
		/* nbWorkers 0: compress on the calling (flush) thread, unless
		 * TRACEPROF_ZSTD_THREADS asks for more (tp_sink_zstd_threads()). */
		if (ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_compressionLevel,
							 zstd_level)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_nbWorkers, 0)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_checksumFlag, 1)))
			return -EINVAL;
		s->obuf_cap = ZSTD_CStreamOutSize();
	} else if (s->compress == TP_SINK_GZIP) {
		memset(&s->gz, 0, sizeof(s->gz));
		/* windowBits 15 + 16: a gzip header and trailer, not raw zlib. */
		int rc = deflateInit2(&s->gz, SK_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
				      Z_DEFAULT_STRATEGY);
		if (rc != Z_OK)
			return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
		s->gz_ready = 1;
		s->obuf_cap = 128 * 1024;
	} else {
		return 0;
	}
	s->obuf = malloc(s->obuf_cap);
	return s->obuf ? 0 : -ENOMEM;
}

void tp_sink_codec_free(struct tp_sink *s)
{
	if (s->zc)
		ZSTD_freeCStream(s->zc);
	s->zc = NULL;
	if (s->gz_ready)
		deflateEnd(&s->gz);
	s->gz_ready = 0;
	free(s->obuf);
	s->obuf = NULL;
}

static int sk_zstd(struct tp_sink *s, const void *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { p, n, 0 };
	for (;;) {
		ZSTD_outBuffer o = { s->obuf, s->obuf_cap, 0 };
		size_t left;
		if (__builtin_expect(s->zstd_workers_pending, 0)) {
			/* The worker threads start in this call and inherit this
			 * thread's mask: all blocked, so that they never run the
			 * program's signal handlers (the final save may run on a
			 * program thread). */
			sigset_t all, old;
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			left = ZSTD_compressStream2(s->zc, &o, &in, mode);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			s->zstd_workers_pending = 0;
		} else {
			left = ZSTD_compressStream2(s->zc, &o, &in, mode);
		}
		if (ZSTD_isError(left))
			return -EIO;
		int rc = tp_sink_out(s, s->obuf, o.pos);
		if (rc)
			return rc;
		/* continue: done when the input is consumed (the library keeps the
		 * rest); end: done when nothing is left to flush. */
		if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
			return 0;
	}
}

static int sk_gzip(struct tp_sink *s, const void *p, size_t n, int flush)
{
	const unsigned char *c = p;
	for (;;) {
		/* avail_in is a uInt: feed huge inputs in pieces. */
		if (s->gz.avail_in == 0 && n) {
			uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
			s->gz.next_in = (Bytef *)c;
			s->gz.avail_in = k;
			c += k;
			n -= k;
		}
		s->gz.next_out = s->obuf;
		s->gz.avail_out = (uInt)s->obuf_cap;
		int zrc = deflate(&s->gz, n ? Z_NO_FLUSH : flush);
		if (zrc == Z_STREAM_ERROR)
			return -EIO;
		int rc = tp_sink_out(s, s->obuf, s->obuf_cap - s->gz.avail_out);
		if (rc)
			return rc;
		if (flush == Z_FINISH) {
			if (zrc == Z_STREAM_END)
				return 0;
		} else if (s->gz.avail_in == 0 && n == 0 && s->gz.avail_out != 0) {
			return 0;
		}
	}
}

int tp_sink_codec_write(struct tp_sink *s, const void *p, size_t n)
{
	if (n)
		s->frame_open = 1;
	if (s->compress == TP_SINK_ZSTD)
		return sk_zstd(s, p, n, ZSTD_e_continue);
	if (s->compress == TP_SINK_GZIP)
		return sk_gzip(s, p, n, Z_NO_FLUSH);
	return tp_sink_out(s, p, n);
}

/* Everything written so far, compressed and in the file as whole frames:
 * zstd ends its frame (ZSTD_e_end; the next write starts a new one with the
 * same parameters), gzip ends its member (Z_FINISH, then a reset: the next
 * write starts a new member, and concatenated members are one gzip file).
 * A frame end, not only a block end (ZSTD_e_flush, Z_SYNC_FLUSH): a file
 * whose writer died is then whole frames and a cut one, which the next run
 * finishes by keeping the whole frames and appending one more
 * (collector/cut_codec.c), where a cut frame could only be closed by
 * decompressing and compressing all of it again (its checksum, its
 * trailer's CRC).  The price, matches no longer reaching back across a
 * flush: bench/RESULTS.md, "flush/N". */
int tp_sink_codec_flush(struct tp_sink *s)
{
	if (s->compress == TP_SINK_PLAIN || !s->frame_open)
		return 0;
	s->frame_open = 0;
	if (s->compress == TP_SINK_ZSTD)
		return sk_zstd(s, NULL, 0, ZSTD_e_end);
	int rc = sk_gzip(s, NULL, 0, Z_FINISH);
	return rc ? rc : deflateReset(&s->gz) == Z_OK ? 0 : -EIO;
}

int tp_sink_codec_end(struct tp_sink *s)
{
	/* The last frame ended at a flush and nothing came since: the file is
	 * whole (an empty frame would only add bytes). */
	if (s->compress != TP_SINK_PLAIN && !s->frame_open && s->bytes_out)
		return 0;
	s->frame_open = 0;
	if (s->compress == TP_SINK_ZSTD)
		return sk_zstd(s, NULL, 0, ZSTD_e_end);
	if (s->compress == TP_SINK_GZIP)
		return sk_gzip(s, NULL, 0, Z_FINISH);
	return 0;
}

int tp_sink_zstd_threads(struct tp_sink *s, int n)
{
	if (s->compress != TP_SINK_ZSTD || n <= 0)
		return 0;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(s->zc, ZSTD_c_nbWorkers, n)))
		return -ENOTSUP;
	s->zstd_workers_pending = 1;
	return 0;
}
