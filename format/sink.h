/* Where a trace file's bytes go: a temporary file in the target folder,
 * optionally compressed (zstd or gzip, streamed), renamed into place only when
 * complete so that a reader never sees a partial trace.
 *
 * Files are created with openat(O_CREAT|O_EXCL|O_NOFOLLOW, 0644) relative to
 * the opened folder, so that a symlink planted at the temporary or the final
 * name is never followed.  Without overwrite, an existing final file is never
 * destroyed: the new one gets a unique suffix (".1", ".2", ... before the
 * ".json" extension) and a warning is logged. */
#ifndef TP_FORMAT_SINK_H
#define TP_FORMAT_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "common/fd.h"

enum tp_sink_compress { TP_SINK_PLAIN = 0, TP_SINK_ZSTD = 1, TP_SINK_GZIP = 2 };

struct tp_sink;

/* Resolves every folder, from now on, from the current root directory
 * (kept open, high, and checked: common/fd.h), relative ones against the
 * current working directory's absolute path, so that the program's chdir()
 * and chroot() change nothing.  Without it, folders follow the working and
 * root directories.  Returns 0 or -errno. */
int tp_sink_anchor(void);

/* path (a file under a folder given to tp_sink_open()) as the program's
 * other processes can use it whatever their working directory: a relative
 * path joined to the anchor's absolute path (into buf), else path itself
 * (absolute already, no anchor, or too long for buf). */
const char *tp_sink_abs_path(const char *path, char *buf, size_t size);

/* An *at() call: dfd and rel as for openat().  Returns 0 or -errno. */
typedef int (*tp_sink_at_fn)(int dfd, const char *rel, void *arg);

/* The one way to a path for an *at() call: runs fn on path as (directory
 * descriptor, relative path) from the anchored root (tp_sink_anchor()),
 * relative paths joined to the start directory first; without an anchor,
 * (AT_FDCWD, path).  When fn fails with -EBADF because the program closed
 * the root's number between its check and the call, the root is opened
 * again and fn runs once more (bounded: a second EBADF is the answer).
 * Returns fn's result, or -ENOENT when the root is lost (another directory
 * is "/" now: a chroot after the anchor's descriptor was taken). */
int tp_sink_at(const char *path, tp_sink_at_fn fn, void *arg);

/* Creates folder (and its parents, mode 0755 under the umask) if missing.
 * Returns 0 or -errno (ENOTDIR when a component is a file). */
int tp_sink_mkdirs(const char *folder);

/* Opens a temporary file for the final name `name` (no '/') in `folder`.
 * compress appends ".zst" or ".gz" to the final name.  Returns 0 or -errno. */
int tp_sink_open(struct tp_sink **out, const char *folder, const char *name, int compress,
		 int zstd_level, int overwrite);

/* With zstd: compress in n threads of libzstd's own (0: on the calling
 * thread).  Call before the first write.  Returns 0, or -ENOTSUP when this
 * libzstd was built without threads (the sink then stays single-threaded). */
int tp_sink_zstd_threads(struct tp_sink *s, int n);

/* Appends bytes (compressing them when asked).  Returns 0 or -errno. */
int tp_sink_write(struct tp_sink *s, const void *p, size_t n);

/* Puts everything written so far into the temporary file, decodable by a
 * reader that stops there (the compressor's block ends: a cut file is then a
 * trace up to this point, collector/parts.c).  Returns 0 or -errno. */
int tp_sink_flush(struct tp_sink *s);
/* Finishes the stream, closes the file and renames it to its final name.  On
 * success copies the final path into path (size bytes) and returns 0; on any
 * error removes the temporary file and returns -errno.  Frees s either way. */
int tp_sink_close(struct tp_sink *s, char *path, size_t size);

/* The same; on success also hands over, when dir is not NULL, the folder's
 * descriptor (the caller then owns it, for *at() calls such as rotation's)
 * and copies the final name (NAME_MAX + 1 bytes) into name. */
int tp_sink_close_at(struct tp_sink *s, char *path, size_t size, struct tp_fd *dir,
		     char *name);

/* Removes the temporary file and frees s. */
void tp_sink_abort(struct tp_sink *s);

struct tp_digest;
/* The samples' digest of the bytes written so far, before compression
 * (format/digest.h): what a footer's table covers. */
const struct tp_digest *tp_sink_digest(const struct tp_sink *s);

/* Lists the temporary file dir/name (dir absolute) as open (also
 * collector/live.c's file in a forked child: it goes at _exit() too).  Returns its
 * slot, or -1 when not listed (no slot, too long).  When the process is
 * already in tp_sink_live_drop(), removes the file. */
int tp_sink_live_add(const char *dir, const char *name);

/* Takes slot i (-1: none) off the list. */
void tp_sink_live_del(int i);

/* 1 when this process is in tp_sink_live_drop() (from any thread): a file
 * listed with tp_sink_live_add() and written again after it (a rename onto
 * its name) is removed by its writer, which checks this after the rename
 * (sequentially consistent with the dropper's store, as the add is). */
int tp_sink_live_dying(void);

/* At _exit() (preload/exit.c), from any thread: in a forked child (after
 * tp_sink_live_forget()), removes the temporary files of its open sinks,
 * whose windows cannot be saved any more, and any created from now on; in
 * the program itself does nothing (its cut window is for recover).  No
 * lock, no allocation. */
void tp_sink_live_drop(void);

/* In a forked child (one thread): forgets the parent's temporary files,
 * which the child neither closes nor removes, and marks the process as a
 * forked child for tp_sink_live_drop(). */
void tp_sink_live_forget(void);

/* Bytes written to the file so far (after compression). */
uint64_t tp_sink_bytes_out(const struct tp_sink *s);

/* Changes the final name (no '/') that tp_sink_close() renames to; the
 * compression extension is appended as for tp_sink_open().  The temporary
 * file keeps its name.  Used when the name depends on the window's last step,
 * known only at the end.  Returns 0 or -errno (-EINVAL for a bad name). */
int tp_sink_set_name(struct tp_sink *s, const char *name);

/* Where a number or part goes in a file name so that every reader still
 * finds the file: before the longest reader's tail the name ends with
 * (".pt.trace.json", TensorBoard's pattern, with ".gz"/".zst"; ".json";
 * ".pftrace"), so "rank0.4.pt.trace.json" becomes "rank0.4.1.pt.trace.json"
 * and not "rank0.4.pt.trace.1.json", which TensorBoard ignores.  Returns
 * the index of that tail, or strlen(name) when it ends with none. */
size_t tp_sink_name_cut(const char *name);

#endif
