/* What the sink's files share with one another, and nothing else includes.
 * The public side is format/sink.h.  Who does what:
 *
 *   format/sink_anchor.c   where folders are: the anchored root and start
 *                          directory, every *at() call on a path under them
 *                          (tp_sink_at()), creating folders
 *   format/sink_fd.c       the sink's descriptors kept from the program:
 *                          names in its folder reached by descriptor or by
 *                          path, the temporary file checked and reopened
 *   format/sink_live.c     the temporary files open, for _exit() to remove
 *   format/sink_codec.c    the streamed compression: zstd, gzip, or none
 *   format/sink.c          one trace file's life: open, write, name, abort
 *   format/sink_publish.c  the atomic publish: finishing the stream and
 *                          renaming the temporary file to its final name
 *                          (a unique suffix when that exists)
 *
 * Each file calls only the files listed above it: no loop between them.
 * Flush thread only (or the exiting thread once it has stopped): no locks. */
#ifndef TP_FORMAT_SINK_INT_H
#define TP_FORMAT_SINK_INT_H

#include <limits.h>
#include <stdint.h>

#include <zlib.h>
#include <zstd.h>

#include "common/fd.h"
#include "format/sink.h"
#include "format/digest.h"

struct tp_sink {
	/* Both high and checked before each use (common/fd.h): the program
	 * may close every descriptor it did not open.  The folder's is held
	 * only while the sink opens, or for good when its absolute path is
	 * unknown (no /proc); its identity (dev, ino) stays after it is
	 * closed (tp_sink_in_dir()). */
	struct tp_fd dir;
	struct tp_fd file;
	char *dir_abs; /* the folder's absolute path, to reach it again */
	int compress;
	int overwrite;
	int error; /* first -errno; sticky */
	uint64_t bytes_out;
	ZSTD_CStream *zc;
	/* libzstd starts its worker threads on the first compression call:
	 * that call runs with every signal blocked (sink_codec.c). */
	int zstd_workers_pending;
	z_stream gz;
	int gz_ready;
	/* Bytes given to the codec since its last frame (gzip member) ended:
	 * a flush with none ends no empty frame. */
	int frame_open;
	unsigned char *obuf; /* compressed bytes on their way to the file */
	size_t obuf_cap;
	char *folder; /* as given, for the final path and messages */
	char final[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
	/* Samples of the bytes written, before compression: what the
	 * footer's table says it covers (format/digest.h). */
	struct tp_digest digest;
	int live; /* its slot in sink_live.c's list, or -1 */
};

/* ---- sink_anchor.c ---- */

/* tp_sink_at(): format/sink.h. */

/* ---- sink_fd.c ---- */

/* An *at() call on one or two names (b may be NULL) in the sink's folder,
 * both relative to dfd. Returns 0 or -errno. */
typedef int (*tp_sink_dir_fn)(int dfd, const char *a, const char *b, void *arg);

/* Runs fn on names a and b of the sink's folder: through the folder's
 * descriptor while it is held and ours, else by the folder's absolute path
 * from the anchored root (tp_sink_at(), so with its EBADF retry), and then
 * only while that path still names the folder the sink opened (st_dev,
 * st_ino).  Returns fn's result, or -EBADF when the folder cannot be
 * reached (renamed, replaced, or its descriptor lost without a path). */
int tp_sink_in_dir(struct tp_sink *s, const char *a, const char *b, tp_sink_dir_fn fn,
		   void *arg);

/* A tp_sink_at_fn: opens the folder rel (from dfd) into the struct tp_fd
 * at arg, O_PATH (O_RDONLY where the kernel lacks it).  Returns 0 or
 * -errno. */
int tp_sink_open_dir_at(int dfd, const char *rel, void *arg);

/* Writes n bytes to the file (its descriptor checked, reopened by name
 * when the program took its number).  Returns 0 or -errno. */
int tp_sink_out(struct tp_sink *s, const void *p, size_t n);

/* ---- sink_live.c ---- */

/* tp_sink_live_add(), tp_sink_live_del(): format/sink.h. */

/* ---- sink_codec.c ---- */

/* Sets up s->compress's stream (level: zstd's).  Returns 0 or -errno. */
int tp_sink_codec_init(struct tp_sink *s, int zstd_level);

/* Compresses n bytes into the file (plain: writes them).  Returns 0 or
 * -errno. */
int tp_sink_codec_write(struct tp_sink *s, const void *p, size_t n);

/* Puts what the codec holds into the file as a whole zstd frame (gzip
 * member), so that a file cut later is whole frames up to here (the next
 * run finishes it by walking them: collector/cut_codec.c); the next write
 * begins a new frame, which readers concatenate.  Returns 0 or -errno. */
int tp_sink_codec_flush(struct tp_sink *s);

/* Ends the stream: what the codec still holds, and its trailer.  Returns 0
 * or -errno. */
int tp_sink_codec_end(struct tp_sink *s);

/* Frees the codec's state and buffer. */
void tp_sink_codec_free(struct tp_sink *s);

#endif
