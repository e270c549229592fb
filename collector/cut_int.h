/* What the next run's finishing of cut windows shares between its files
 * (issue 44): collector/cut.c finds, claims and names them and finishes
 * plain JSON; collector/cut_codec.c finishes compressed JSON (.gz, .zst)
 * and reads every codec; collector/cut_pf.c finishes Perfetto files;
 * collector/cut_text.c reads and writes the JSON text. */
#ifndef TP_COLLECTOR_CUT_INT_H
#define TP_COLLECTOR_CUT_INT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define TP_CUT_HEAD 65536 /* the header is read from this much text */

/* A cut file's header: its window (DOC_WINDOW) and rank. */
struct tp_cut_head {
	char pattern[NAME_MAX + 1]; /* the final name, the step as "{step}" */
	char host[256];
	long long part, first_step, rank;
	size_t events_at; /* the first byte after "traceEvents": [\n */
	int have_devices;
	uint64_t pf_seq, pf_track; /* a .pftrace's header instant's sequence, track */
};

/* What finishing keeps of a cut file. */
struct tp_cut_scan {
	size_t keep; /* bytes of the file kept (compressed: whole frames) */
	unsigned long long events;
	long long last_step; /* -1: none */
};

/* Reads the header from h[0, n) (NUL at h[n]); 0, or -1 when it has no
 * whole header with a window (older files, other writers, too little read
 * yet) or is not pid's of this host.  cut_text.c. */
int tp_cut_head_parse(const char *h, size_t n, struct tp_cut_head *hd, long pid);

/* Whether the line [b, e) is a whole JSON object.  cut_text.c. */
int tp_cut_whole(const char *b, const char *e);

/* The last step (the number in a step event's name, layout.STEP_PREFIX)
 * in [b, e), or -1.  cut_text.c. */
long long tp_cut_step(const char *b, const char *e);

/* The text a cut window ends with, as recover.py writes it (the process's
 * name, the events' end, the footer with its `cut` member, the trace's name
 * `name`) into buf; its length, or -ENAMETOOLONG.  cut_text.c. */
int tp_cut_closing(char *buf, size_t size, const struct tp_cut_head *hd,
		   const struct tp_cut_scan *s, long pid, time_t mtime, const char *name);

/* Truncates the file at fd to off and writes buf[0, n) there.  0 or
 * -errno.  cut_text.c. */
int tp_cut_put(int fd, size_t off, const void *buf, size_t n);

/* Where a file's decompressed bytes go, as tp_cut_codec_read() reads them:
 * feed() has them in order; frame_end() is told where in the file each
 * whole frame (gzip member) ends (0, or -1 to stop reading). */
struct tp_cut_stream {
	void (*feed)(void *ctx, const char *p, size_t n);
	int (*frame_end)(void *ctx, size_t off);
	void *ctx;
};

/* Reads the file at fd (size bytes) of codec (TP_SINK_*; plain: as it is,
 * no frame_end()) into t, up to its end or where its stream is cut or
 * broken.  0, or -errno.  cut_codec.c. */
int tp_cut_codec_read(int fd, int codec, size_t size, const struct tp_cut_stream *t);

/* The codecs of cut_codec.c (TP_SINK_GZIP, TP_SINK_ZSTD from format/sink.h). */

/* Reads the compressed cut file open at fd (size bytes): its header into hd,
 * and into s the whole frames' events, last step and length (s->keep: where
 * the last whole frame ends).  0, or -errno (-ENODATA: no whole frame with
 * the header; -EINVAL: not a window's file or not pid's).  Bounded by size
 * and the text's lines. */
int tp_cut_codec_scan(int fd, int codec, size_t size, long pid, struct tp_cut_head *hd,
		      struct tp_cut_scan *s);

/* Truncates the file at off and appends text[0, n) as one whole frame
 * (member) of codec.  0 or -errno. */
int tp_cut_codec_end(int fd, int codec, size_t off, const char *text, size_t n);

/* A Perfetto cut file (.pftrace, plain or of codec) as tp_cut_codec_scan()
 * reads a JSON one: s->keep after its last whole packet (compressed: its
 * last whole frame), the events and the last step ended there, the header
 * instant's window into hd.  cut_pf.c. */
int tp_cut_pf_scan(int fd, int codec, size_t size, long pid, struct tp_cut_head *hd,
		   struct tp_cut_scan *s);

/* The packets a Perfetto cut window ends with (its trace's name `name`,
 * then the footer with its `cut` member), as recover_pf.py writes them,
 * into buf; their length, or -ENAMETOOLONG.  cut_pf.c. */
int tp_cut_pf_closing(unsigned char *buf, size_t size, const struct tp_cut_head *hd,
		      const struct tp_cut_scan *s, long pid, time_t mtime, const char *name);

#endif
