/* What the flush thread's files share (internal to collector/): the state of
 * one process's recording, and the calls between the jobs:
 *   flush.c    the thread: start, pass loop, exit and signal-time saves, fork
 *   plugins.c  the optional parts' callbacks (struct tp_flush_plugin)
 *   window.c   which steps form a window, when it opens, closes, is saved
 *   drain.c    records out of the rings and the store, into their window
 *   parts.c    a window's part files: open, name, close, rotate
 *   cut.c      earlier runs' cut windows, finished at a folder's first open
 *   footer.c   a part's metadata and footer, and drop attribution
 *   self.c     what it reads about its own process (/proc, through
 *              common/procfs.c)
 *   fthread.c  its own state of each program thread (collector/fthread.h)
 *   live.c     the live file, once a second and at the final save
 *              (collector/live.h)
 *   flush_state.c  the state below (struct tp_fl), defined apart from
 *              flush.c: flush.c calls the files above, none calls it back
 * The program's side reaches these files through nothing but atomics and
 * the hooks flush.c registers (collector/activity.h, tp_threads_set_first_use(),
 * tp_ring_set_wake()).
 * Everything here runs on the flush thread (or on the exiting thread once
 * the flush thread has stopped), unless a field says otherwise. */
#ifndef TP_COLLECTOR_FLUSH_INT_H
#define TP_COLLECTOR_FLUSH_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "collector/flush.h"
#include "collector/window.h"

struct tp_record;
struct tp_thread;

struct tp_fl {
	struct tp_config cfg;
	struct tp_template_vars vars;
	char program[256];
	char cmdline[1024];
	const struct tp_writer_ops *ops; /* TRACEPROF_FORMAT's writer */
	struct tp_doc footer;		 /* rebuilt for each part */
	int64_t pid;
	int64_t base_wall;
	/* The wall clock (ns since the epoch) when this process started recording:
	 * the flush's start, or the fork in a child (the footer's start_unix_ns). */
	int64_t start_wall;
	uint64_t max_part_bytes; /* tp_wsm_part_cap(TRACEPROF_MAX_FILE_MB) */
	int zstd_threads_warned; /* TRACEPROF_ZSTD_THREADS could not be had: said once */
	struct tp_wsm wsm;
	uint64_t late_total, filtered_total;
	/* Past this monotonic time (0: none) the rings are emptied without
	 * converting their records: set when the final save is asked for, at
	 * half the time the asking thread waits (TRACEPROF_EXIT_TIMEOUT_S, or a
	 * signal's 10 s), so that the save always ends, with what it has, in
	 * time.  Set on the asking thread; relaxed: a time hint, the flag it
	 * comes with is ordered. */
	_Atomic uint64_t cut_ns;
	uint64_t cut_total; /* records emptied that way; written in the footer */
	/* Windows this process saved (parts.c, on the flush thread or in the
	 * final save); read once tp_flush_finish() has waited for the save. */
	uint64_t files_saved;
};

extern struct tp_fl tp_fl;

/* plugins.c: the plugins of this run, in the order their callbacks run:
 * the list given (NULL entries skipped).  Returns 0 or -ENOSPC. */
int tp_fl_plugins_set(const struct tp_flush_plugin *const *list, int n);
void tp_fl_plugins_init(const struct tp_config *cfg);
void tp_fl_plugins_pass(uint64_t now_ns);
void tp_fl_plugins_window_events(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns);
void tp_fl_plugins_window_stream(struct tp_writer *out, uint64_t first_ns, uint64_t last_ns);
void tp_fl_plugins_footer(struct tp_doc *footer);
void tp_fl_plugins_frames(struct tp_writer *out);
void tp_fl_plugins_saved(const char *path);
/* The first plugin's device properties (an array of objects), or NULL. */
const struct tp_doc *tp_fl_plugins_devices(void);

/* drain.c.  A pass's drain: returns 1 when records are left in the store
 * (a backlog), else 0. */
int tp_fl_drain_pass(void);
/* The final save's drain: everything, converted until the cut. */
void tp_fl_drain_final(void);

/* parts.c: the window machine's callbacks (struct tp_wsm_ops).  Their ctx
 * is a struct tp_fl_parts_ctx: what parts.c is given rather than fetches. */
struct tp_fl_parts_ctx {
	/* The step number a file name shows for a step (a capture range
	 * numbers its own steps: tp_control_display_step()). */
	uint64_t (*display_step)(uint64_t step);
};
int tp_fl_window_opened(void *ctx, struct tp_win *w);
/* Puts what every open window has written so far into its files (the
 * writers' buffers, the compressors' blocks), so that a process that dies
 * keeps its windows up to here: a cut file (python/traceprof/cli/
 * recover.py finishes it).  Flush thread, every TP_FL_DISK_NS. */
#define TP_FL_DISK_NS 500000000ULL
void tp_fl_windows_flush(const struct tp_wsm *m);
void tp_fl_window_finalize(void *ctx, struct tp_win *w);
/* A record of times [b_ns, e_ns] joins w: the writer to convert it into
 * (the file opened, or a new part begun, as needed), or NULL when the
 * window's files failed (the record is counted, not written). */
struct tp_writer *tp_fl_window_writer(struct tp_win *w, uint64_t b_ns, uint64_t e_ns);
/* The writers of w's open parts, first part first, at most max; returns
 * how many (0 before its first record).  For the live file's "top"
 * (collector/live.c), which reads their tables (format/aggregate.h). */
int tp_fl_window_writers(const struct tp_win *w, struct tp_writer **out, int max);

/* footer.c */
/* The process and thread names of part `out` of w (the threads that wrote
 * into it); on the last part, the markers still open end at last_ns. */
void tp_fl_metadata(const struct tp_win *w, struct tp_writer *out, int last, uint64_t last_ns);
/* The footer ("traceprof" object) of part `part` (0-based) of nparts. */
void tp_fl_footer(const struct tp_win *w, struct tp_doc *d, int part, int nparts,
		  uint64_t written, uint64_t dropped);
/* Drops not yet written anywhere, attributed (commit) to the window being
 * finalized: each drop is counted in exactly one file.  *interrupted (when
 * not NULL): how many of them a signal handler's write lost. */
uint64_t tp_fl_attribute_drops(int commit, uint64_t *interrupted);
/* After a window's last part was saved at path: one line when names or
 * categories were not kept (the footer's thread_names_lost and
 * categories_lost) since the previous such line. */
void tp_fl_warn_lost(const char *path);

/* self.c */
/* tp_fl.program and tp_fl.cmdline, from /proc/self. */
void tp_fl_read_identity(void);
/* t->name from the OS, unless the program named the thread (NVTX). */
void tp_fl_refresh_thread_name(struct tp_thread *t);
/* True when the program's threads are all gone and only this one is left:
 * main called pthread_exit() (it stays a zombie, counted in "Threads:") and
 * every other thread ended.  glibc would then exit(0) from the last thread;
 * the flush thread must not keep such a process alive forever. */
int tp_fl_alone(void);

#endif
