/* The files of a trace window: one, or several parts when the trace would
 * pass TRACEPROF_MAX_FILE_MB.  Opens each part (header), names it from the
 * templates, writes its end (plugins' events, metadata, footer), puts it in
 * place, rotates old traces, or discards them all. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collector/activity.h"
#include "collector/cut.h"
#include "collector/thread.h"
#include "collector/flush_int.h"
#include "collector/rotate.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/layout.h"
#include "common/log.h"
#include "format/sink.h"

struct pt_part {
	struct tp_writer *w; /* NULL once closed or discarded */
	struct tp_sink *sink;
};

/* A window's files (struct tp_win's data).  Every part stays open until the
 * window ends, because each one's footer says "part i of n". */
struct pt_files {
	struct pt_part *parts;
	int nparts;
	struct tp_writer *cur; /* the part being written: parts[nparts-1].w */
	char folder[PATH_MAX];
	int failed; /* an I/O error: the window is discarded with a message */
	uint64_t first_ns, last_ns;
	uint64_t written;
};

static int pt_expand(const char *tmpl, uint64_t step, char *out, size_t outlen)
{
	struct tp_template_vars v = tp_fl.vars;
	char err[600]; /* the template (up to 511 bytes) and the reason */
	v.step = (int64_t)step;
	if (tp_template_expand(tmpl, &v, out, outlen, err, sizeof(err)) < 0) {
		tp_error("%s", err);
		return -1;
	}
	return 0;
}

/* The final name of a window's file with its step left open, as
 * TP_WINDOW_STEP_FIELD: the template with {step} and {batch} turned into
 * the escaped text "{{step}}" before the expansion.  Written into the
 * file's header, so that `traceprof recover` can name a file cut by the
 * process's death after the last step it holds.  Returns 0 or -1. */
static int pt_pattern(const char *tmpl, char *out, size_t outlen)
{
	char esc[1024];
	size_t n = 0;
	for (const char *p = tmpl; *p;) {
		const char *put = NULL;
		size_t skip = 1;
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			skip = 2;
		} else if (!strncmp(p, "{step}", 6) || !strncmp(p, "{batch}", 7)) {
			put = "{" TP_WINDOW_STEP_FIELD "}";
			skip = p[1] == 's' ? 6 : 7;
		}
		size_t len = put ? strlen(put) : skip;
		if (n + len >= sizeof(esc))
			return -1;
		memcpy(esc + n, put ? put : p, len);
		n += len;
		p += skip;
	}
	esc[n] = '\0';
	struct tp_template_vars v = tp_fl.vars;
	char err[600];
	if (tp_template_expand(esc, &v, out, outlen, err, sizeof(err)) < 0)
		return -1;
	return 0;
}

/* A file name of the template's: its first ".json" replaced by the writer's
 * extension (".pftrace"); unchanged for JSON or without ".json". */
static void pt_set_ext(char *name, size_t size)
{
	char *json = strstr(name, ".json");
	if (!json || !strcmp(tp_fl.ops->ext, ".json"))
		return;
	char tail[NAME_MAX + 1];
	tp_format(tail, sizeof(tail), "%s", json + 5);
	*json = '\0';
	size_t n = strlen(name);
	tp_format(name + n, (int)(size - n), "%s%s", tp_fl.ops->ext, tail);
}

/* "rank0.step3.trace.json" -> "rank0.step3.trace.part2.json": before the
 * readers' tail (tp_sink_name_cut(): "r.4.pt.trace.json" ->
 * "r.4.part2.pt.trace.json", which TensorBoard still reads), else before
 * the first writer's extension (".json", ".pftrace"), or NAME.partK when
 * there is none. */
static void pt_part_name(char *name, size_t size, int part)
{
	char tail[NAME_MAX + 1];
	size_t cut = tp_sink_name_cut(name);
	char *ext = cut < strlen(name) ? name + cut : strstr(name, tp_fl.ops->ext);
	char suffix[32];
	tp_format(suffix, sizeof(suffix), ".part%d", part);
	if (ext) {
		tp_format(tail, sizeof(tail), "%s", ext);
		*ext = '\0';
	} else {
		tail[0] = '\0';
	}
	size_t n = strlen(name);
	tp_format(name + n, (int)(size - n), "%s%s", suffix, tail);
}

/* Opens the next part file of w and its writer (which writes the header).
 * Returns 0 or -1 (logged). */
static int pt_open(const struct tp_win *win, struct pt_files *w)
{
	char name[NAME_MAX + 1];
	int rc;
	struct pt_part *parts = realloc(w->parts, (size_t)(w->nparts + 1) * sizeof(*parts));
	if (!parts)
		return -1;
	w->parts = parts;
	struct pt_part *pt = &parts[w->nparts];
	memset(pt, 0, sizeof(*pt));
	/* The final name depends on the last step and the number of parts, both
	 * known only at the end: this one is provisional. */
	if (pt_expand(tp_fl.cfg.filename, win->first_step, name, sizeof(name)))
		return -1;
	pt_set_ext(name, sizeof(name));
	char pattern[NAME_MAX + 1];
	int have_pattern = pt_pattern(tp_fl.cfg.filename, pattern, sizeof(pattern)) == 0;
	if (have_pattern)
		pt_set_ext(pattern, sizeof(pattern));
	if ((rc = tp_sink_mkdirs(w->folder)) >= 0)
		tp_cut_folder(w->folder); /* earlier runs' cut windows: once a folder */
	if (rc < 0 ||
	    (rc = tp_sink_open(&pt->sink, w->folder, name, tp_fl.cfg.compress,
			       tp_fl.cfg.zstd_level, tp_fl.cfg.overwrite)) < 0) {
		tp_error("cannot create a trace file in '%s': %s; window from step %llu not saved",
			 w->folder, strerror(-rc), (unsigned long long)win->first_step);
		return -1;
	}
	if (tp_sink_zstd_threads(pt->sink, tp_fl.cfg.zstd_threads) < 0 &&
	    !tp_fl.zstd_threads_warned) {
		tp_fl.zstd_threads_warned = 1;
		tp_warn("TRACEPROF_ZSTD_THREADS=%d: this libzstd was built without threads; "
			"compressing on the flush thread (set 0 to silence this)",
			tp_fl.cfg.zstd_threads);
	}
	struct tp_writer_header h = {
		.base_wall_ns = tp_fl.base_wall,
		.wall_offset_ns = tp_clock_wall_offset_ns(),
		.pid = tp_fl.pid,
		.rank = tp_fl.vars.rank,
		.local_rank = tp_fl.vars.local_rank,
		.world_size = tp_fl.vars.world_size,
		.local_world_size = tp_fl.vars.local_world_size,
		.node_rank = tp_fl.vars.node_rank,
		.launcher = tp_fl.vars.launcher,
		.devices = tp_fl_plugins_devices(),
		.window_name = have_pattern ? pattern : NULL,
		.window_part = w->nparts + 1,
		.window_first_step = (int64_t)win->first_step,
		.window_keep = tp_fl.cfg.num_traces_to_keep,
		.hostname = tp_fl.vars.hostname,
	};
	pt->w = tp_writer_open(tp_fl.ops, pt->sink, &h);
	if (!pt->w) {
		tp_sink_abort(pt->sink);
		return -1;
	}
	w->nparts++;
	w->cur = pt->w;
	return 0;
}

void tp_fl_windows_flush(const struct tp_wsm *m)
{
	for (int i = 0; i < m->nwin; i++) {
		struct pt_files *w = m->win[i].data;
		if (!w || w->failed)
			continue;
		/* The plugins' events known to fall in the window so far (the GPU
		 * records CUPTI handed over): only when it is the one open window,
		 * so that none can be claimed by an older window's end instead. */
		if (m->nwin == 1 && w->nparts && w->first_ns != UINT64_MAX)
			tp_fl_plugins_window_stream(w->cur, w->first_ns, w->last_ns);
		/* An error stays in the writer: the window's save reports it. */
		for (int k = 0; k < w->nparts; k++)
			if (w->parts[k].w)
				tp_writer_flush(w->parts[k].w);
	}
}

int tp_fl_window_opened(void *ctx, struct tp_win *win)
{
	(void)ctx;
	struct pt_files *w = calloc(1, sizeof(*w));
	if (!w) {
		tp_error("out of memory opening a trace window; step %llu not recorded",
			 (unsigned long long)win->first_step);
		return -1;
	}
	w->first_ns = UINT64_MAX;
	/* The file is created with the window's first event
	 * (tp_fl_window_writer()) or at its save: a forked child that execs
	 * right away leaves no file. */
	if (pt_expand(tp_fl.cfg.folder, win->first_step, w->folder, sizeof(w->folder)))
		w->failed = 1;
	win->data = w;
	return 0;
}

struct tp_writer *tp_fl_window_writer(struct tp_win *win, uint64_t b_ns, uint64_t e_ns)
{
	struct pt_files *w = win->data;
	w->written++;
	if (w->failed)
		return NULL;
	if (b_ns < w->first_ns)
		w->first_ns = b_ns;
	if (e_ns > w->last_ns)
		w->last_ns = e_ns;
	if (!w->nparts && pt_open(win, w) < 0) {
		w->failed = 1;
		return NULL;
	}
	if (__builtin_expect(tp_wsm_new_part(tp_writer_bytes(w->cur), tp_fl.max_part_bytes,
					     tp_writer_error(w->cur)),
			     0) &&
	    pt_open(win, w) < 0) {
		w->failed = 1;
		return NULL;
	}
	return w->cur;
}

int tp_fl_window_writers(const struct tp_win *win, struct tp_writer **out, int max)
{
	const struct pt_files *w = win->data;
	int n = 0;
	for (int i = 0; w && !w->failed && i < w->nparts && n < max; i++)
		if (w->parts[i].w)
			out[n++] = w->parts[i].w;
	return n;
}

/* Ends part i of the window and puts it in place at path; its name shows
 * step `shown_step`.  Returns 0 or -errno. */
static int pt_finish(const struct tp_win *win, struct pt_files *w, int i, uint64_t dropped,
		     uint64_t shown_step, char *path, size_t psize, struct tp_fd *dir,
		     char *fname)
{
	struct pt_part *pt = &w->parts[i];
	struct tp_writer *out = pt->w;
	int last = i == w->nparts - 1;
	if (last)
		tp_fl_plugins_window_events(out, w->first_ns, w->last_ns);
	tp_fl_metadata(win, out, last, w->last_ns);
	tp_fl_footer(win, &tp_fl.footer, i, w->nparts, w->written, dropped);
	tp_fl_plugins_frames(out);
	char name[NAME_MAX + 1];
	int rc = pt_expand(tp_fl.cfg.filename, shown_step, name, sizeof(name)) ? -EINVAL : 0;
	pt->w = NULL; /* closed or discarded below */
	if (rc) {
		tp_writer_discard(out);
		tp_sink_abort(pt->sink);
		return rc;
	}
	pt_set_ext(name, sizeof(name));
	if (w->nparts > 1)
		pt_part_name(name, sizeof(name), i + 1);
	struct tp_writer_trailer tr = {
		.trace_name = name,
		.footer = &tp_fl.footer,
		/* When not known as the part began (no successful cuInit yet). */
		.devices = tp_fl_plugins_devices(),
	};
	rc = tp_writer_close(out, &tr);
	if (tp_fl.footer.error && !rc)
		tp_warn("out of memory writing a trace footer: its counts are incomplete");
	if (!rc)
		rc = tp_sink_set_name(pt->sink, name);
	if (rc) {
		tp_sink_abort(pt->sink);
		return rc;
	}
	return tp_sink_close_at(pt->sink, path, psize, dir, fname);
}

/* Writes every part of a window to be saved. */
static void pt_save(const struct tp_fl_parts_ctx *pc, const struct tp_win *win,
		    struct pt_files *w)
{
	uint64_t shown_step = pc->display_step(win->last_step);
	if (w->first_ns == UINT64_MAX)
		w->first_ns = w->last_ns = tp_clock_to_ns(tp_clock_now());
	/* One snapshot for the total and the per-thread counts written in the
	 * footer, so that they agree and no drop is skipped. */
	uint64_t interrupted = 0;
	uint64_t dropped = tp_fl_attribute_drops(1, &interrupted);
	for (int i = 0; i < w->nparts; i++) {
		char path[PATH_MAX], fname[NAME_MAX + 1];
		struct tp_fd dir = TP_FD_NONE;
		int rc = pt_finish(win, w, i, dropped, shown_step, path, sizeof(path), &dir,
				   fname);
		if (rc < 0) {
			tp_error("saving the trace of steps %llu-%llu failed: %s; file not saved",
				 (unsigned long long)win->first_step,
				 (unsigned long long)win->last_step, strerror(-rc));
			continue;
		}
		tp_info("wrote %s (steps %llu-%llu, %llu events, %llu dropped)", path,
			(unsigned long long)win->first_step, (unsigned long long)win->last_step,
			(unsigned long long)w->written, (unsigned long long)dropped);
		if (dropped > interrupted && i == w->nparts - 1)
			tp_warn("%llu events were dropped (buffers full) in %s; raise "
				"TRACEPROF_BUFFER_EVENTS or lower TRACEPROF_FLUSH_MS",
				(unsigned long long)(dropped - interrupted), path);
		if (interrupted && i == w->nparts - 1)
			tp_warn("%llu events were dropped in %s: a signal handler recorded while "
				"the thread it interrupted was recording (not a buffer size issue)",
				(unsigned long long)interrupted, path);
		if (i == w->nparts - 1) {
			tp_fl_warn_lost(path);
			tp_fl.files_saved++;
		}
		/* By window: all parts of a window stay or go together. */
		tp_rotate_saved(path, &dir, fname, win->id, tp_fl.cfg.num_traces_to_keep);
		tp_fl_plugins_saved(path);
	}
}

void tp_fl_window_finalize(void *ctx, struct tp_win *win)
{
	const struct tp_fl_parts_ctx *pc = ctx;
	struct pt_files *w = win->data;
	int save = tp_wsm_saves(win, tp_activity_seen());
	uint64_t no_room = atomic_load_explicit(&tp_threads_lost_as, memory_order_relaxed);
	if (win->save && !save && no_room)
		tp_info("nothing recorded: %llu events lost for want of memory (the program's "
			"RLIMIT_AS): no trace file for steps %llu-%llu",
			(unsigned long long)no_room, (unsigned long long)win->first_step,
			(unsigned long long)win->last_step);
	else if (win->save && !save)
		tp_info("nothing recorded (no CUDA call, marker, NVTX range or step): no trace "
			"file for steps %llu-%llu", (unsigned long long)win->first_step,
			(unsigned long long)win->last_step);
	if (!w->failed && save && !w->nparts && pt_open(win, w) < 0)
		w->failed = 1;
	if (!w->failed && save) {
		pt_save(pc, win, w);
	} else {
		/* A window stopped without a save (torch's RECORD -> NONE), or one
		 * whose file could not be created. */
		tp_fl_attribute_drops(!w->failed, NULL);
		for (int i = 0; i < w->nparts; i++)
			tp_sink_abort(w->parts[i].sink);
	}
	for (int i = 0; i < w->nparts; i++)
		if (w->parts[i].w)
			tp_writer_discard(w->parts[i].w);
	free(w->parts);
	free(w);
	win->data = NULL;
}
