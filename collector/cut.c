/* The next run finishes the cut windows of earlier ones (issue 44): "So
 * does the next run of the same job, into the same folder."
 *
 * A process that died in a window leaves its hidden temporary file
 * (".<final>.tmp.<pid>.<n>", format/sink.c), streamed to every 0.5 s
 * (collector/parts.c).  `traceprof run` and `traceprof recover` finish such
 * files (python/traceprof/cli/recover.py, the one full decoder: every codec
 * and format, rotation).  A job run with plain LD_PRELOAD has no launcher
 * that survives it, so the library does the cheapest sound part itself, on
 * its flush thread, the first time it opens a trace folder: never on the
 * program's threads, never Python.
 *
 * What it finishes: JSON and Perfetto files, plain or compressed (.gz,
 * .zst: collector/cut_codec.c; .pftrace: collector/cut_pf.c), whose header
 * names this host and whose
 * process is gone (no such pid, a zombie, or a pid that now belongs to a
 * process started after the file's last write: /proc/PID/stat's start
 * time), and whose writer's lock is free (format/sink.c holds a shared
 * flock while the file is open: a live writer in another pid namespace).  The file is claimed by renaming it to a temporary name of this
 * process (atomic: of two runs starting together, one wins; the other's
 * rename fails), then finished in place, which costs no copy: events are
 * one per line, so the whole ones end at the last line whose braces close
 * (the writer may have died inside a write); the file is truncated there,
 * and the process's name, the closing of the events, a footer whose `cut`
 * member says why, when and what may be missing, and the trace's name are
 * appended, as recover.py writes them.  It is then linked under the name
 * the window would have had after the last step it holds (a free name:
 * ".1", ".2" before ".json" when taken).  A compressed or Perfetto file is
 * read before its claim and finished the same way, frame by frame
 * (cut_codec.c) or packet by packet (cut_pf.c); the JSON text both read
 * and write is cut_text.c's.
 *
 * What it leaves, naming it in one line with the command: files over
 * CUT_FILE_MAX (CUT_CODEC_FILE_MAX compressed), compressed or Perfetto ones
 * it cannot read to a whole frame or packet after their header, and files
 * past CUT_FILES_MAX or CUT_BYTES_MAX.  Rotation
 * (TRACEPROF_NUM_TRACES_TO_KEEP) of the dead process's windows is also
 * recover's: the library finishes, it does not delete. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h> /* renameat() */
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/cut.h"
#include "collector/cut_int.h"
#include "collector/flush_int.h"
#include "common/layout.h"
#include "common/log.h"
#include "common/procfs.h"
#include "format/sink.h"

#define CUT_FOLDERS 8 /* folders scanned per process; more are left to recover */
#define CUT_FILES_MAX 16 /* files finished per folder: bounded work */
#define CUT_FILE_MAX (256ull << 20) /* larger ones: recover's (a scan of it) */
#define CUT_BYTES_MAX (512ull << 20) /* scanned per folder: about 0.5 s at most */
#define CUT_CODEC_FILE_MAX (32ull << 20) /* compressed: some 15 times as much text */
#define CUT_CODEC_RATIO 8 /* a compressed byte counts as this many scanned */
#define CUT_START_SLACK 2 /* s: /proc's start time is in clock ticks */
#define CUT_LEFT_AGE 2 /* s: an unread file this old is named as left */

static char cut_done[CUT_FOLDERS][PATH_MAX];
static int cut_ndone;
/* Set on the flush thread (tp_cut_flush_thread()): a folder first opened by
 * the exiting thread's last save (a short program) is not scanned, so that
 * no program thread waits on the scan. */
static __thread int cut_flush_thread __attribute__((tls_model("initial-exec")));

void tp_cut_flush_thread(void)
{
	cut_flush_thread = 1;
}

/* Whether the process that wrote a file last modified at mtime is gone. */
static int cut_gone(long pid, time_t mtime)
{
	char path[64], stat[1024];
	/* /proc, not kill(pid, 0): the library's kill() is the program's hook
	 * (preload/), and without /proc nothing can be told apart. */
	tp_format(path, sizeof(path), "/proc/%ld", pid);
	if (access(path, F_OK) < 0)
		return errno == ENOENT && access("/proc/self/stat", F_OK) == 0;
	tp_format(path, sizeof(path), "/proc/%ld/stat", pid);
	if (tp_procfs_read_text(path, stat, sizeof(stat), 0) < 0)
		return 0; /* cannot tell: not ours to finish */
	if (tp_procfs_stat_state(stat) == 'Z')
		return 1;
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	if (tp_procfs_stat_u64(stat, 22, &ticks) || hz <= 0)
		return 0;
	/* Boot's wall time: REALTIME less BOOTTIME (starttime counts from boot). */
	struct timespec rt, bt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	long long started = (long long)rt.tv_sec - (long long)bt.tv_sec + (long long)(ticks / (uint64_t)hz);
	/* The writer was alive when it last wrote: a process started after that
	 * reuses the pid. */
	return started > (long long)mtime + CUT_START_SLACK;
}

/* Reads the header of the plain file open at fd; 0 or -1 (as
 * tp_cut_head_parse()). */
static int cut_head(int fd, struct tp_cut_head *hd, long pid)
{
	char *h = malloc(TP_CUT_HEAD + 1);
	if (!h)
		return -1;
	ssize_t n = pread(fd, h, TP_CUT_HEAD, 0);
	int rc = -1;
	if (n > 0) {
		h[n] = '\0';
		rc = tp_cut_head_parse(h, (size_t)n, hd, pid);
	}
	free(h);
	return rc;
}

/* The whole events of the file's body [at, size) of map.  The writer puts
 * ",\n" before each event, so a line followed by a newline is whole (the
 * separator came after it), and the last one is whole when its braces
 * close.  A line that is no event (the writer's end: the process died in
 * its save) ends the events, as in recover.py. */
static void cut_scan(const char *map, size_t at, size_t size, struct tp_cut_scan *s)
{
	const char *b = map + at, *e = map + size;
	s->keep = at;
	s->events = 0;
	s->last_step = -1;
	for (const char *p = b; p < e && *p == '{';) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl) {
			if (tp_cut_whole(p, e)) {
				s->events++;
				s->keep = size;
			}
			break;
		}
		const char *q = nl > p && nl[-1] == ',' ? nl - 1 : nl;
		s->events++;
		s->keep = (size_t)(q - map);
		p = nl + 1;
	}
	s->last_step = tp_cut_step(b, map + s->keep);
}

/* The window's name after its last step: pattern's "{step}" replaced, then
 * ".partK" before ".json" for a part after the first, and the codec's ext
 * last.  0 or -1. */
static int cut_name(const struct tp_cut_head *hd, long long step, int dup, const char *ext,
		    char *out, size_t size)
{
	const char *f = strstr(hd->pattern, TP_WINDOW_STEP_FIELD);
	char name[NAME_MAX * 2];
	if (f)
		tp_format(name, sizeof(name), "%.*s%lld%s", (int)(f - hd->pattern), hd->pattern,
			  step, f + strlen(TP_WINDOW_STEP_FIELD));
	else
		tp_format(name, sizeof(name), "%s", hd->pattern);
	char *json = strstr(name, ".json");
	if (!json)
		json = strstr(name, ".pftrace");
	char mid[48] = "";
	if (hd->part > 1)
		tp_format(mid, sizeof(mid), ".part%lld", hd->part);
	if (dup)
		tp_format(mid + strlen(mid), (int)(sizeof(mid) - strlen(mid)), ".%d", dup);
	if (!json)
		return -1;
	int n = tp_format(out, (int)size, "%.*s%s%s%s", (int)(json - name), name, mid, json, ext);
	return n < 0 || (size_t)n >= size || (size_t)n > NAME_MAX ? -1 : 0;
}

/* Finishes one claimed file (open at fd, named claim in dir, of codec: s
 * already read for a compressed one); fills out with its final name.  0,
 * or -errno (the file is then left under claim, which recover finishes). */
static int cut_finish(int dir, int fd, const char *claim, int codec, int pf,
		      const struct tp_cut_head *hd, long pid, const struct stat *st, char *out,
		      size_t osize, struct tp_cut_scan *s)
{
	const char *ext = codec == TP_SINK_ZSTD ? ".zst" : codec == TP_SINK_GZIP ? ".gz" : "";
	if (codec == TP_SINK_PLAIN && !pf) {
		void *map = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			return -errno;
		cut_scan(map, hd->events_at, (size_t)st->st_size, s);
		munmap(map, (size_t)st->st_size);
	}
	long long last = s->last_step >= 0 ? s->last_step : hd->first_step;
	int dup = 0;
	if (cut_name(hd, last, 0, ext, out, osize))
		return -ENAMETOOLONG;
	while (faccessat(dir, out, F_OK, AT_SYMLINK_NOFOLLOW) == 0 && dup < 100)
		if (cut_name(hd, last, ++dup, ext, out, osize))
			return -ENAMETOOLONG;
	/* The trace's name, as the writer gives it: without the codec's ext. */
	char shown[NAME_MAX + 1], buf[8192];
	tp_format(shown, sizeof(shown), "%.*s", (int)(strlen(out) - strlen(ext)), out);
	int n = pf ? tp_cut_pf_closing((unsigned char *)buf, sizeof(buf), hd, s, pid, st->st_mtime,
				       shown)
		   : tp_cut_closing(buf, sizeof(buf), hd, s, pid, st->st_mtime, shown);
	if (n < 0)
		return n;
	int rc = codec == TP_SINK_PLAIN ? tp_cut_put(fd, s->keep, buf, (size_t)n)
					: tp_cut_codec_end(fd, codec, s->keep, buf, (size_t)n);
	if (rc)
		return rc;
	/* No replace: a file of that name that appeared meanwhile stays. */
	while (linkat(dir, claim, dir, out, 0) < 0) {
		if (errno != EEXIST || dup >= 100)
			return -errno;
		if (cut_name(hd, last, ++dup, ext, out, osize))
			return -ENAMETOOLONG;
	}
	unlinkat(dir, claim, 0);
	return 0;
}

/* The codec of a window's final name (name[0, len)): TP_SINK_*, *pf set
 * for a Perfetto one; -1 when it is no window's. */
static int cut_codec(const char *name, size_t len, int *pf)
{
	static const struct { const char *ext; int codec, pf; } ends[] = {
		{ ".json", TP_SINK_PLAIN, 0 },	   { ".json.gz", TP_SINK_GZIP, 0 },
		{ ".json.zst", TP_SINK_ZSTD, 0 },  { ".pftrace", TP_SINK_PLAIN, 1 },
		{ ".pftrace.gz", TP_SINK_GZIP, 1 }, { ".pftrace.zst", TP_SINK_ZSTD, 1 } };
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t n = strlen(ends[i].ext);
		if (len > n && !memcmp(name + len - n, ends[i].ext, n)) {
			*pf = ends[i].pf;
			return ends[i].codec;
		}
	}
	return -1;
}

/* ".<final>.tmp.<pid>.<n>": the pid, or -1. */
static long cut_temp_pid(const char *name, size_t *final_len)
{
	const char *t = name[0] == '.' ? strstr(name, ".tmp.") : NULL;
	if (!t)
		return -1;
	for (const char *n; (n = strstr(t + 1, ".tmp."));)
		t = n;
	char *e;
	long pid = strtol(t + 5, &e, 10);
	if (e == t + 5 || *e != '.' || pid <= 0)
		return -1;
	const char *c = e + 1;
	if (!*c)
		return -1;
	for (; *c; c++)
		if (*c < '0' || *c > '9')
			return -1;
	*final_len = (size_t)(t - name) - 1;
	return pid;
}

void tp_cut_folder(const char *folder)
{
	if (!cut_flush_thread)
		return;
	for (int i = 0; i < cut_ndone; i++)
		if (!strcmp(cut_done[i], folder))
			return;
	if (cut_ndone == CUT_FOLDERS || strlen(folder) >= PATH_MAX)
		return;
	tp_format(cut_done[cut_ndone++], PATH_MAX, "%s", folder);
	int dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	DIR *d = fdopendir(dup(dir));
	if (!d) {
		close(dir);
		return;
	}
	int finished = 0, left = 0;
	uint64_t bytes = 0;
	char first_left[NAME_MAX + 1] = "";
	static unsigned claims;
	for (struct dirent *de; (de = readdir(d));) {
		size_t flen;
		long pid = cut_temp_pid(de->d_name, &flen);
		struct stat st;
		if (pid < 0 || pid == (long)tp_fl.pid ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || !cut_gone(pid, st.st_mtime))
			continue;
		int pf = 0, codec = cut_codec(de->d_name + 1, flen, &pf);
		/* A compressed file is read whole (decompressed), a plain one
		 * only in its events' lines. */
		uint64_t cost = (uint64_t)st.st_size * (codec == TP_SINK_PLAIN ? 1 : CUT_CODEC_RATIO);
		if (codec < 0 ||
		    (uint64_t)st.st_size > (codec == TP_SINK_PLAIN ? CUT_FILE_MAX : CUT_CODEC_FILE_MAX) ||
		    finished == CUT_FILES_MAX || bytes + cost > CUT_BYTES_MAX) {
			/* Its header is not read here: a file another host's live
			 * process writes (a shared folder) is told apart by its age
			 * only, as a window streams every 0.5 s while it records
			 * (a mistaken line costs nothing: recover checks the host). */
			if (time(NULL) - st.st_mtime < CUT_LEFT_AGE)
				continue;
			if (!left++)
				tp_format(first_left, sizeof(first_left), "%s", de->d_name);
			continue;
		}
		int fd = openat(dir, de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		struct tp_cut_head hd;
		struct tp_cut_scan s = { 0, 0, -1 };
		if (fd < 0)
			continue;
		/* Its writer's lock (format/sink.c): held, it lives, wherever. */
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
			close(fd);
			continue;
		}
		bytes += cost;
		/* A compressed one is read before its claim, under the lock: a
		 * file it cannot finish is named as left, unclaimed. */
		int rc = pf ? tp_cut_pf_scan(fd, codec, (size_t)st.st_size, pid, &hd, &s)
			 : codec == TP_SINK_PLAIN
				 ? cut_head(fd, &hd, pid)
				 : tp_cut_codec_scan(fd, codec, (size_t)st.st_size, pid, &hd, &s);
		if (rc < 0) {
			close(fd);
			if (rc != -1 && rc != -EINVAL && !left++)
				tp_format(first_left, sizeof(first_left), "%s", de->d_name);
			continue; /* another host's, or not ours to read: recover's */
		}
		char claim[NAME_MAX + 1], final[NAME_MAX + 1];
		tp_format(claim, sizeof(claim), ".%.*s.tmp.%ld.%u", (int)flen, de->d_name + 1,
			  (long)tp_fl.pid, 3000000000u + claims++);
		/* The claim: of two processes finishing this folder, one renames. */
		if (renameat(dir, de->d_name, dir, claim) < 0) {
			close(fd);
			continue;
		}
		rc = fstat(fd, &st) < 0 ? -errno
		     : cut_finish(dir, fd, claim, codec, pf, &hd, pid, &st, final, sizeof(final), &s);
		close(fd);
		if (rc < 0) {
			tp_warn("cannot finish %s/%s, the cut window of a process that died (pid %ld): %s; "
				"run `traceprof recover %s`", folder, claim, pid, strerror(-rc), folder);
			continue;
		}
		finished++;
		/* Shown at the default level: a file the user did not expect. */
		tp_warn("finished %s/%s: the cut window of a process that died (pid %ld), steps %lld-%lld, "
			"%llu events", folder, final, pid, hd.first_step,
			s.last_step >= 0 ? s.last_step : hd.first_step, s.events);
	}
	closedir(d);
	close(dir);
	if (left)
		tp_warn("%d cut window%s of processes that died left in %s (%s%s): finish %s with "
			"`traceprof recover %s`", left, left > 1 ? "s" : "", folder, first_left,
			left > 1 ? ", ..." : "", left > 1 ? "them" : "it", folder);
}
