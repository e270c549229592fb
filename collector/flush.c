#include "collector/flush.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collector/control.h"
#include "collector/convert.h"
#include "collector/emit.h"
#include "collector/rotate.h"
#include "collector/store.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "format/sink.h"
#include "format/trace.h" /* tp_trace_base_time() */

struct tp_part {
	struct tp_writer *w; /* NULL once closed or discarded */
	struct tp_sink *sink;
};

/* One window: the consecutive recording steps [first_step, last_step]
 * between a start_trace and a stop_trace of torch's action table. */
struct tp_window {
	uint64_t id; /* 1, 2, ...; indexes the per-thread stats (id % TP_MAX_OPEN_WINDOWS) */
	uint64_t first_step, last_step;
	int closed;	      /* last_step is known: no more steps join */
	int save;	      /* written when finalized (else discarded) */
	uint64_t closed_pass; /* flush pass at which it closed */
	/* The files of the window: one, or several parts when the JSON would
	 * exceed TRACEPROF_MAX_FILE_MB.  Every part stays open until the window
	 * ends, because each one's footer says "part i of n". */
	struct tp_part *parts;
	int nparts;
	struct tp_writer *cur; /* the part being written: parts[nparts-1].w */
	char folder[PATH_MAX];
	int failed; /* an I/O error: the window is discarded with a message */
	uint64_t first_ns, last_ns;
	uint64_t written;
};

#define MAX_PLUGINS 8

static struct {
	struct tp_config cfg;
	struct tp_template_vars vars;
	char program[256];
	char cmdline[1024];
	const struct tp_flush_plugin *plugins[MAX_PLUGINS];
	int nplugins;
	const struct tp_writer_ops *ops; /* TRACEPROF_FORMAT's writer */
	struct tp_doc footer;		 /* rebuilt for each part */

	pthread_t thread;
	int running;
	/* A futex word, not a descriptor: the program may close any descriptor
	 * (common/fd.h), and waking needs no file.  Incremented (release) to
	 * wake the thread early; the thread's acquire load pairs with it. */
	_Atomic uint32_t wake;
	/* Set by tp_flush_finish*(); read by the flush loop (acquire pairs with
	 * the release store before the wake). */
	_Atomic int stop;
	_Atomic int finish_req; /* exit or a signal asks for the final save */
	_Atomic int finished;	/* the final save has started */
	_Atomic int stopped;	/* fl_stop_recording() ran */
	/* A futex word: 1 when the final save is done and its files are in
	 * place.  Release store in final_save(), acquire loads in
	 * fl_wait_saved(). */
	_Atomic uint32_t saved;

	uint64_t seen_step; /* window bookkeeping has processed steps <= this */
	struct tp_window *win[TP_MAX_OPEN_WINDOWS];
	int nwin;
	uint64_t next_window_id;
	uint64_t pass;
	/* Whole passes the thread has run: release store at the end of each,
	 * acquire load in tp_flush_sync(). */
	_Atomic uint64_t passes_done;
	uint64_t last_recal_ns;
	uint64_t late_total, filtered_total;
	/* Past this monotonic time (0: none) the rings are emptied without
	 * converting their records: set when the final save is asked for, at
	 * half the time the asking thread waits (TRACEPROF_EXIT_TIMEOUT_S, or a
	 * signal's 10 s), so that the save always ends, with what it has, in
	 * time.  Relaxed: a time hint; the flag it comes with is ordered. */
	_Atomic uint64_t cut_ns;
	uint64_t cut_total; /* records emptied that way; written in the footer */
	int64_t pid;
	int64_t mono_base;
	int64_t base_wall;
	uint64_t max_part_bytes; /* TRACEPROF_MAX_FILE_MB less room for the footer */
	int zstd_threads_warned; /* TRACEPROF_ZSTD_THREADS could not be had: said once */
} F;

int tp_flush_register(const struct tp_flush_plugin *p)
{
	if (F.nplugins >= MAX_PLUGINS)
		return -ENOSPC;
	F.plugins[F.nplugins++] = p;
	return 0;
}

static int template_vars_step(const char *tmpl, uint64_t step, char *out, size_t outlen)
{
	struct tp_template_vars v = F.vars;
	char err[600]; /* the template (up to 511 bytes) and the reason */
	v.step = (int64_t)step;
	if (tp_template_expand(tmpl, &v, out, outlen, err, sizeof(err)) < 0) {
		tp_error("%s", err);
		return -1;
	}
	return 0;
}

static long fl_futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

/* Wakes the flush thread early.  Async-signal-safe: an atomic add and one
 * futex(FUTEX_WAKE) call. */
static void fl_wake(void)
{
	/* Release: the flags stored before the wake are seen by the thread's
	 * acquire load of the word in flush_main(). */
	atomic_fetch_add_explicit(&F.wake, 1, memory_order_release);
	fl_futex(&F.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The rings' high-water hook (tp_ring_set_wake()): a producer whose ring is
 * half full wakes the thread, which then moves the records into the store.
 * Runs on any recording thread, signal handlers included: fl_wake(), which
 * is async-signal-safe, with errno kept. */
static void fl_wake_hint(void)
{
	int saved = errno;
	fl_wake();
	errno = saved;
}

/* Waits until the final save is done, at most timeout_ms.  Returns 0 when
 * saved, -1 on timeout.  Async-signal-safe.  On the caller's thread it makes
 * futex(FUTEX_WAIT) calls only (the clock is read through the vDSO). */
static int fl_wait_saved(uint64_t timeout_ms)
{
	uint64_t end = tp_clock_monotonic_ns() + timeout_ms * 1000000ULL;
	/* Acquire pairs with the release store at the end of final_save(): the
	 * files it wrote are complete once this reads 1. */
	while (!atomic_load_explicit(&F.saved, memory_order_acquire)) {
		uint64_t now = tp_clock_monotonic_ns();
		if (now >= end)
			return -1;
		uint64_t left = end - now;
		struct timespec ts = { (time_t)(left / 1000000000ULL),
				       (long)(left % 1000000000ULL) };
		fl_futex(&F.saved, FUTEX_WAIT_PRIVATE, 0, &ts);
	}
	return 0;
}

static void read_proc_text(const char *path, char *buf, size_t size, int nul_to_space)
{
	ssize_t n = tp_fd_read_small(path, buf, size);
	if (n <= 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		buf[--n] = '\0';
	if (nul_to_space)
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
}

static void refresh_thread_name(struct tp_thread *t)
{
	if (t->named_by_user || atomic_load_explicit(&t->dead, memory_order_acquire))
		return;
	char path[64];
	tp_format(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
	char name[sizeof(t->name)];
	read_proc_text(path, name, sizeof(name), 0);
	if (name[0])
		memcpy(t->name, name, sizeof(name));
	else if (!t->name[0])
		tp_format(t->name, sizeof(t->name), "thread %d", (int)t->tid);
}

/* ---- windows ---------------------------------------------------------- */

static void window_finalize(struct tp_window *w);

/* The first plugin's device properties (an array of objects), or NULL. */
static const struct tp_doc *device_properties(void)
{
	const struct tp_doc *p = NULL;
	for (int i = 0; i < F.nplugins && !p; i++)
		if (F.plugins[i]->device_properties)
			p = F.plugins[i]->device_properties();
	return p;
}

/* A file name of the template's: its first ".json" replaced by the writer's
 * extension (".pftrace"); unchanged for JSON or without ".json". */
static void fl_set_ext(char *name, size_t size)
{
	char *json = strstr(name, ".json");
	if (!json || !strcmp(F.ops->ext, ".json"))
		return;
	char tail[NAME_MAX + 1];
	tp_format(tail, sizeof(tail), "%s", json + 5);
	*json = '\0';
	size_t n = strlen(name);
	tp_format(name + n, (int)(size - n), "%s%s", F.ops->ext, tail);
}

/* Opens the next part file of w and its writer (which writes the header).
 * Returns 0 or -1 (logged). */
static int part_open(struct tp_window *w)
{
	char name[NAME_MAX + 1];
	int rc;
	struct tp_part *parts = realloc(w->parts, (size_t)(w->nparts + 1) * sizeof(*parts));
	if (!parts)
		return -1;
	w->parts = parts;
	struct tp_part *pt = &parts[w->nparts];
	memset(pt, 0, sizeof(*pt));
	/* The final name depends on the last step and the number of parts, both
	 * known only at the end: this one is provisional. */
	if (template_vars_step(F.cfg.filename, w->first_step, name, sizeof(name)))
		return -1;
	fl_set_ext(name, sizeof(name));
	if ((rc = tp_sink_mkdirs(w->folder)) < 0 ||
	    (rc = tp_sink_open(&pt->sink, w->folder, name, F.cfg.compress, F.cfg.zstd_level,
			       F.cfg.overwrite)) < 0) {
		tp_error("cannot create a trace file in '%s': %s; window from step %llu not saved",
			 w->folder, strerror(-rc), (unsigned long long)w->first_step);
		return -1;
	}
	if (tp_sink_zstd_threads(pt->sink, F.cfg.zstd_threads) < 0 && !F.zstd_threads_warned) {
		F.zstd_threads_warned = 1;
		tp_warn("TRACEPROF_ZSTD_THREADS=%d: this libzstd was built without threads; "
			"compressing on the flush thread (set 0 to silence this)",
			F.cfg.zstd_threads);
	}
	struct tp_writer_header h = {
		.base_wall_ns = F.base_wall,
		.wall_offset_ns = tp_clock_wall_offset_ns(),
		.pid = F.pid,
		.rank = F.vars.rank,
		.local_rank = F.vars.local_rank,
		.world_size = F.vars.world_size,
		.local_world_size = F.vars.local_world_size,
		.node_rank = F.vars.node_rank,
		.launcher = F.vars.launcher,
		.devices = device_properties(),
	};
	pt->w = tp_writer_open(F.ops, pt->sink, &h);
	if (!pt->w) {
		tp_sink_abort(pt->sink);
		return -1;
	}
	w->nparts++;
	w->cur = pt->w;
	return 0;
}

static void window_open(uint64_t first_step)
{
	if (F.nwin == TP_MAX_OPEN_WINDOWS) {
		/* Short steps: more windows wait for stragglers than there are
		 * slots.  The oldest has waited longest; finalize it now (a record of
		 * it still in flight is then counted as late, never lost silently). */
		window_finalize(F.win[0]);
		memmove(&F.win[0], &F.win[1], (size_t)(F.nwin - 1) * sizeof(F.win[0]));
		F.nwin--;
	}
	struct tp_window *w = calloc(1, sizeof(*w));
	if (!w) {
		tp_error("out of memory opening a trace window; step %llu not recorded",
			 (unsigned long long)first_step);
		return;
	}
	w->id = ++F.next_window_id;
	w->first_step = first_step;
	w->first_ns = UINT64_MAX;
	/* The file is created with the window's first event (on_record) or at
	 * its save: a forked child that execs right away leaves no file. */
	if (template_vars_step(F.cfg.folder, first_step, w->folder, sizeof(w->folder)))
		w->failed = 1;
	F.win[F.nwin++] = w;
}

static struct tp_window *window_current_open(void)
{
	for (int i = F.nwin - 1; i >= 0; i--)
		if (!F.win[i]->closed)
			return F.win[i];
	return NULL;
}

static void window_close(uint64_t last_step, int save)
{
	struct tp_window *w = window_current_open();
	if (!w)
		return;
	w->closed = 1;
	w->last_step = last_step;
	w->save = save;
	w->closed_pass = F.pass;
}

/* Moves the bookkeeping forward to `step`, applying torch's transitions. */
static void advance_to(uint64_t step)
{
	while (F.seen_step < step) {
		enum tp_action prev = tp_control_action(F.seen_step);
		enum tp_action cur = tp_control_action(F.seen_step + 1);
		unsigned tr = tp_schedule_transition(prev, cur);
		if (tr & TP_TR_STOP)
			window_close(F.seen_step, !!(tr & TP_TR_SAVE));
		if (tr & TP_TR_START)
			window_open(F.seen_step + 1);
		F.seen_step++;
	}
}

static struct tp_window *window_for_step(uint64_t step)
{
	for (int i = 0; i < F.nwin; i++) {
		struct tp_window *w = F.win[i];
		if (step >= w->first_step && (!w->closed || step <= w->last_step))
			return w;
	}
	return NULL;
}

static struct tp_thread_wstat *wstat(struct tp_thread *t, const struct tp_window *w)
{
	struct tp_thread_wstat *s = &t->ws[w->id % TP_MAX_OPEN_WINDOWS];
	if (s->window_id != w->id) {
		s->window_id = w->id;
		s->written = 0;
	}
	return s;
}

struct drain_ctx {
	struct tp_thread *t;
	uint64_t seen; /* records handed over, for the exit's time checks */
	int cut;       /* out of time at exit: the rest is only counted */
};

/* Set by tp_flush_note_activity() (a program thread) and by on_record();
 * read by window_finalize().  Relaxed: it is a flag with nothing published
 * through it, and the final save reads it after draining every ring. */
static _Atomic int activity;

void tp_flush_note_activity(void)
{
	atomic_store_explicit(&activity, 1, memory_order_relaxed);
}

static void on_record_cut(const struct tp_record *r, void *arg);

static void on_record(const struct tp_record *r, void *arg)
{
	struct drain_ctx *c = arg;
	struct tp_thread *t = c->t;
	/* At exit, a ring can hold millions of records: look at the time now
	 * and then (a vDSO call per 4096 records), not only between rings. */
	if (__builtin_expect(atomic_load_explicit(&F.cut_ns, memory_order_relaxed) != 0, 0) &&
	    (++c->seen & 4095) == 0 &&
	    tp_clock_monotonic_ns() > atomic_load_explicit(&F.cut_ns, memory_order_relaxed))
		c->cut = 1;
	if (__builtin_expect(c->cut, 0)) {
		on_record_cut(r, arg);
		return;
	}
	if (r->step > F.seen_step)
		advance_to(r->step);
	struct tp_window *w = window_for_step(r->step);
	if (!w) {
		if (tp_action_records(tp_control_action(r->step))) {
			t->late++;
			F.late_total++;
		} else {
			t->filtered++;
			F.filtered_total++;
		}
		return;
	}
	wstat(t, w)->written++;
	w->written++;
	if (r->kind != TP_REC_STEP && r->kind != TP_REC_THREAD_NAME)
		atomic_store_explicit(&activity, 1, memory_order_relaxed);
	if (w->failed)
		return;
	uint64_t b = tp_clock_to_ns(r->start);
	uint64_t e = r->end > r->start ? tp_clock_to_ns(r->end) : b;
	if (b < w->first_ns)
		w->first_ns = b;
	if (e > w->last_ns)
		w->last_ns = e;
	if (!w->nparts && part_open(w) < 0) {
		w->failed = 1;
		return;
	}
	/* Split before the JSON of this part passes the cap; the margin leaves
	 * room for the metadata and footer written at the end.  Not after a
	 * write error (disk full): more parts would only fail again, each with
	 * its own message. */
	if (__builtin_expect(tp_writer_bytes(w->cur) > F.max_part_bytes, 0) &&
	    !tp_writer_error(w->cur) && part_open(w) < 0) {
		w->failed = 1;
		return;
	}
	tp_convert_record(w->cur, t, r, F.pid);
}

static void on_record_cut(const struct tp_record *r, void *arg)
{
	(void)r;
	(void)arg;
	if (F.cut_total++ == 0)
		tp_warn("the final save ran out of time (half of the exit bound); the events "
			"still buffered are not written, and counted as events_cut_at_exit");
}

/* Groups converted from one thread's store between looks at the clock. */
#define DRAIN_SLICE 256
/* While converting, the rings are emptied into the store at least this
 * often: a ring of 65,536 records takes 1.6 ms to fill at 25 ns a call, and
 * the producer wakes the thread at half of it. */
#define DRAIN_MOVE_NS 250000ULL
/* A pass that still has a backlog ends after this long, so that the
 * plugins' passes (CUPTI buffers, the sampler) and an exit request are not
 * held up by a long conversion. */
#define DRAIN_PASS_NS 50000000ULL

static int cut_due(void)
{
	uint64_t cut = atomic_load_explicit(&F.cut_ns, memory_order_relaxed);
	return cut != 0 && tp_clock_monotonic_ns() > cut;
}

/* Every ring into its thread's store, as far as the budget allows.  Returns
 * the records moved. */
static uint64_t move_all(void)
{
	uint64_t n = 0;
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next)
		n += tp_store_take(&t->stored, &t->ring);
	return n;
}

/* The final save's drain: each thread's stored records, then what its ring
 * still holds (newer), converted in order; past the cut, only counted. */
static void drain_final(void)
{
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		/* Out of time at exit: empty the store and the ring, counted.  A
		 * busy machine (the program's threads keep the CPUs) cannot make
		 * the exit wait for every record's conversion. */
		struct drain_ctx c = { t, 0, cut_due() };
		tp_store_convert(&t->stored, on_record, &c, UINT64_MAX);
		c.cut = c.cut || cut_due();
		tp_ring_consume(&t->ring, on_record, &c);
	}
}

/* A pass's drain: the rings are moved into the store at memory speed, and
 * converted from there in slices, with moves in between, so that a slow
 * writer (zstd, a busy disk) does not let the rings fill.  Returns 1 when
 * records are left in the store at the end (a backlog), else 0. */
static int drain_all(void)
{
	if (!tp_store_enabled()) {
		/* TRACEPROF_MAX_BUFFER_MB=0: straight from the rings. */
		for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
			struct drain_ctx c = { t, 0, 0 };
			tp_ring_consume(&t->ring, on_record, &c);
		}
		return 0;
	}
	uint64_t start = tp_clock_monotonic_ns(), last_move = start;
	for (;;) {
		uint64_t moved = move_all();
		uint64_t left = 0;
		for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
			if (!t->stored.records)
				continue;
			struct drain_ctx c = { t, 0, 0 };
			tp_store_convert(&t->stored, on_record, &c, DRAIN_SLICE);
			left += t->stored.records;
			uint64_t now = tp_clock_monotonic_ns();
			if (now - last_move >= DRAIN_MOVE_NS) {
				moved += move_all();
				last_move = now;
			}
		}
		if (!left && !moved)
			return 0;
		if (tp_clock_monotonic_ns() - start > DRAIN_PASS_NS) {
			move_all();
			return 1;
		}
	}
}

static int thread_in_use(struct tp_thread *t, void *ctx)
{
	(void)ctx;
	for (int i = 0; i < F.nwin; i++)
		if (t->ws[F.win[i]->id % TP_MAX_OPEN_WINDOWS].window_id == F.win[i]->id)
			return 1;
	return 0;
}

static void write_metadata(struct tp_window *w, struct tp_writer *out, int last)
{
	char pname[400];
	tp_format(pname, sizeof(pname), "rank %lld: %s (pid %lld)", (long long)F.vars.rank,
		  F.program, (long long)F.pid);
	char labels[400];
	tp_format(labels, sizeof(labels), "rank %lld/%lld, host %s", (long long)F.vars.rank,
		  (long long)F.vars.world_size, F.vars.hostname);
	tp_writer_process(out, F.pid, pname, labels, F.vars.rank);
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		if (t->ws[w->id % TP_MAX_OPEN_WINDOWS].window_id != w->id)
			continue;
		refresh_thread_name(t);
		if (last)
			tp_convert_close_markers(out, t, F.pid, w->last_ns);
		/* The thread that made the first CUDA call or step sorts first. */
		tp_writer_thread(out, F.pid, t->tid, t->name, (int64_t)t->serial);
	}
}

static void cfg_field(const char *name, const char *value, void *ctx)
{
	tp_doc_str(ctx, name, value);
}

/* The footer of part `part` (0-based) of w: the "traceprof" object. */
static void build_footer(struct tp_window *w, struct tp_doc *d, int part, uint64_t dropped)
{
	tp_doc_reset(d);
	tp_doc_str(d, "version", TRACEPROF_VERSION);
	tp_doc_u64(d, "part", (uint64_t)part + 1);
	tp_doc_u64(d, "parts", (uint64_t)w->nparts);
	tp_doc_array(d, "steps");
	tp_doc_u64(d, NULL, w->first_step);
	tp_doc_u64(d, NULL, w->last_step);
	tp_doc_end(d);
	tp_doc_u64(d, "events_written", w->written);
	tp_doc_u64(d, "events_dropped", dropped);
	tp_doc_u64(d, "events_lost_after_thread_exit",
		   atomic_load_explicit(&tp_threads_lost, memory_order_relaxed));
	tp_doc_u64(d, "events_late", F.late_total);
	tp_doc_u64(d, "events_cut_at_exit", F.cut_total);
	tp_doc_str(d, "clock", tp_clock_source_cur == TP_CLOCK_TSC ? "tsc" : "monotonic");
	tp_doc_str(d, "hostname", F.vars.hostname);
	tp_doc_str(d, "command_line", F.cmdline);
	tp_doc_array(d, "threads");
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		int in = t->ws[w->id % TP_MAX_OPEN_WINDOWS].window_id == w->id;
		/* The window's share, snapshotted by attribute_drops(1): the
		 * ring's counter keeps moving while the footer is written. */
		uint64_t dd = t->drops_window;
		if (!in && !dd)
			continue;
		tp_doc_object(d, NULL);
		tp_doc_i64(d, "tid", t->tid);
		tp_doc_str(d, "name", t->name);
		tp_doc_u64(d, "events_written", in ? t->ws[w->id % TP_MAX_OPEN_WINDOWS].written : 0);
		tp_doc_u64(d, "events_dropped", dd);
		tp_doc_end(d);
	}
	tp_doc_end(d);
	tp_doc_object(d, "configuration");
	tp_config_visit(&F.cfg, cfg_field, d);
	tp_doc_end(d);
	for (int i = 0; i < F.nplugins; i++)
		if (F.plugins[i]->footer)
			F.plugins[i]->footer(d);
}

/* Drops not yet written anywhere are attributed to the window being
 * finalized: each drop is counted in exactly one file. */
static uint64_t attribute_drops(int commit)
{
	uint64_t total = 0;
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		uint64_t d = atomic_load_explicit(&t->ring.dropped, memory_order_relaxed);
		total += d - t->drops_attributed;
		if (commit) {
			t->drops_window = d - t->drops_attributed;
			t->drops_attributed = d;
		}
	}
	return total;
}

/* "rank0.step3.trace.json" -> "rank0.step3.trace.part2.json" (before the
 * first writer's extension: ".json", ".pftrace"), or NAME.partK when there
 * is none. */
static void part_name(char *name, size_t size, int part)
{
	char tail[NAME_MAX + 1];
	char *ext = strstr(name, F.ops->ext);
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

static int part_finish(struct tp_window *w, int i, uint64_t dropped, char *path, size_t psize,
		       struct tp_fd *dir, char *fname)
{
	struct tp_part *pt = &w->parts[i];
	struct tp_writer *out = pt->w;
	int last = i == w->nparts - 1;
	if (last)
		for (int k = 0; k < F.nplugins; k++)
			if (F.plugins[k]->window_events)
				F.plugins[k]->window_events(out, w->first_ns, w->last_ns, F.pid);
	write_metadata(w, out, last);
	build_footer(w, &F.footer, i, dropped);
	for (int k = 0; k < F.nplugins; k++)
		if (F.plugins[k]->frames)
			F.plugins[k]->frames(out);
	char name[NAME_MAX + 1];
	int rc = template_vars_step(F.cfg.filename, tp_control_display_step(w->last_step), name,
				    sizeof(name)) ? -EINVAL : 0;
	pt->w = NULL; /* closed or discarded below */
	if (rc) {
		tp_writer_discard(out);
		tp_sink_abort(pt->sink);
		return rc;
	}
	fl_set_ext(name, sizeof(name));
	if (w->nparts > 1)
		part_name(name, sizeof(name), i + 1);
	struct tp_writer_trailer tr = {
		.trace_name = name,
		.footer = &F.footer,
		/* When not known as the part began (no successful cuInit yet). */
		.devices = device_properties(),
	};
	rc = tp_writer_close(out, &tr);
	if (F.footer.error && !rc)
		tp_warn("out of memory writing a trace footer: its counts are incomplete");
	if (!rc)
		rc = tp_sink_set_name(pt->sink, name);
	if (rc) {
		tp_sink_abort(pt->sink);
		return rc;
	}
	return tp_sink_close_at(pt->sink, path, psize, dir, fname);
}

static void window_finalize(struct tp_window *w)
{
	if (w->save && !atomic_load_explicit(&activity, memory_order_relaxed)) {
		w->save = 0;
		tp_info("nothing recorded (no CUDA call, marker, NVTX range or step): no trace "
			"file for steps %llu-%llu", (unsigned long long)w->first_step,
			(unsigned long long)w->last_step);
	}
	if (!w->failed && w->save && !w->nparts && part_open(w) < 0)
		w->failed = 1;
	if (!w->failed && w->save) {
		if (w->first_ns == UINT64_MAX)
			w->first_ns = w->last_ns = tp_clock_to_ns(tp_clock_now());
		/* One snapshot for the total and the per-thread counts written in
		 * the footer, so that they agree and no drop is skipped. */
		uint64_t dropped = attribute_drops(1);
		for (int i = 0; i < w->nparts; i++) {
			char path[PATH_MAX], fname[NAME_MAX + 1];
			struct tp_fd dir = TP_FD_NONE;
			int rc = part_finish(w, i, dropped, path, sizeof(path), &dir, fname);
			if (rc < 0) {
				tp_error("saving the trace of steps %llu-%llu failed: %s; file not saved",
					 (unsigned long long)w->first_step,
					 (unsigned long long)w->last_step, strerror(-rc));
				continue;
			}
			tp_info("wrote %s (steps %llu-%llu, %llu events, %llu dropped)", path,
				(unsigned long long)w->first_step, (unsigned long long)w->last_step,
				(unsigned long long)w->written, (unsigned long long)dropped);
			if (dropped && i == w->nparts - 1)
				tp_warn("%llu events were dropped (buffers full) in %s; raise "
					"TRACEPROF_BUFFER_EVENTS or lower TRACEPROF_FLUSH_MS",
					(unsigned long long)dropped, path);
			/* By window: all parts of a window stay or go together. */
			tp_rotate_saved(path, &dir, fname, w->id, F.cfg.num_traces_to_keep);
			for (int k = 0; k < F.nplugins; k++)
				if (F.plugins[k]->saved)
					F.plugins[k]->saved(path);
		}
	} else {
		/* A window stopped without a save (torch's RECORD -> NONE), or one
		 * whose file could not be created. */
		attribute_drops(!w->failed);
		for (int i = 0; i < w->nparts; i++)
			tp_sink_abort(w->parts[i].sink);
	}
	for (int i = 0; i < w->nparts; i++)
		if (w->parts[i].w)
			tp_writer_discard(w->parts[i].w);
	free(w->parts);
	free(w);
}

/* Finalizes closed windows; `all` at exit, else only those closed at least
 * two passes ago, so that records of their last step still in flight on a
 * preempted thread had a whole flush interval to arrive. */
static void finalize_windows(int all)
{
	int k = 0;
	for (int i = 0; i < F.nwin; i++) {
		struct tp_window *w = F.win[i];
		if (w->closed && (all || F.pass >= w->closed_pass + 2))
			window_finalize(w);
		else
			F.win[k++] = w;
	}
	F.nwin = k;
}

static void log_control_warnings(void)
{
	unsigned wbits = atomic_exchange_explicit(&tp_control_warnings, 0, memory_order_relaxed);
	if (wbits & 1u)
		tp_warn("Incorrect schedule: a RECORD or WARMUP step was followed by NONE or WARMUP "
			"(as torch.profiler warns); that window is not saved");
	if (wbits & 2u)
		tp_warn("trigger ignored: a capture is already running");
	if (wbits & 4u)
		tp_warn("trigger ignored: at most 64 captures per process");
}

/* One pass; returns 1 when a backlog is left in the store. */
static int run_pass(void)
{
	uint64_t now = tp_clock_monotonic_ns();
	F.pass++;
	if (now - F.last_recal_ns > 1000000000ULL) {
		tp_clock_recalibrate();
		F.last_recal_ns = now;
	}
	for (int i = 0; i < F.nplugins; i++)
		if (F.plugins[i]->pass)
			F.plugins[i]->pass(now);
	/* Drain first: records advance the bookkeeping as they come, so the
	 * windows of short steps are still open when their records arrive. */
	int backlog = drain_all();
	advance_to(tp_control_current_step());
	/* With a backlog, records of a closed window may still be in the store:
	 * windows wait for the pass that converts everything. */
	if (!backlog)
		finalize_windows(0);
	tp_threads_reap(thread_in_use, NULL);
	log_control_warnings();
	/* Pairs with the acquire load in tp_flush_sync(): a whole pass means
	 * every record moved before it is converted. */
	if (!backlog)
		atomic_fetch_add_explicit(&F.passes_done, 1, memory_order_release);
	return backlog;
}

/* torch's stop(): the current step's ProfilerStep record ends now, written
 * by the calling thread (at exit: the exiting thread, whose tid the step
 * had), and recording stops.  Once. */
static void fl_stop_recording(void)
{
	if (atomic_exchange_explicit(&F.stopped, 1, memory_order_acq_rel))
		return;
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (s & TP_STATE_RECORDING)
		tp_control_emit_step(s >> TP_STATE_STEP_SHIFT, tp_control_step_start(),
				     tp_clock_now());
	tp_control_disable();
}

/* The final save: the exit transition of torch's table. */
static void final_save(void)
{
	if (atomic_exchange_explicit(&F.finished, 1, memory_order_acq_rel))
		return;
	fl_stop_recording();
	uint64_t step = tp_control_current_step();
	for (int i = 0; i < F.nplugins; i++)
		if (F.plugins[i]->pass)
			F.plugins[i]->pass(tp_clock_monotonic_ns());
	drain_final();
	advance_to(step);
	if (tp_schedule_transition(tp_control_action(F.seen_step), TP_ACT_EXIT) & TP_TR_STOP)
		window_close(F.seen_step, 1);
	else if (window_current_open())
		window_close(F.seen_step, 0);
	F.pass += 2;
	finalize_windows(1);
	log_control_warnings();
	/* Release pairs with the acquire load in fl_wait_saved(). */
	atomic_store_explicit(&F.saved, 1, memory_order_release);
	fl_futex(&F.saved, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* True when the program's threads are all gone and only this one is left:
 * main called pthread_exit() (it stays a zombie, counted in "Threads:") and
 * every other thread ended.  glibc would then exit(0) from the last thread;
 * the flush thread must not keep such a process alive forever. */
static int only_flush_thread_left(void)
{
	char path[64], buf[2048];
	tp_format(path, sizeof(path), "/proc/self/task/%lld/stat", (long long)F.pid);
	read_proc_text(path, buf, sizeof(buf), 0);
	const char *st = strrchr(buf, ')');
	if (!st || st[1] != ' ' || (st[2] != 'Z' && st[2] != 'X'))
		return 0; /* the main thread runs: the common case, one read */
	read_proc_text("/proc/self/status", buf, sizeof(buf), 0);
	const char *th = strstr(buf, "\nThreads:");
	return th && atoi(th + 10) <= 2; /* the zombie main thread and us */
}

static void *flush_main(void *arg)
{
	(void)arg;
	tp_clock_recalibrate();
	F.last_recal_ns = tp_clock_monotonic_ns();
	uint64_t last_alone_check = F.last_recal_ns;
	/* Acquire pairs with the release add in fl_wake(). */
	uint32_t seen = atomic_load_explicit(&F.wake, memory_order_acquire);
	int backlog = 0;
	/* Pairs with the release stores in tp_flush_finish*(). */
	while (!atomic_load_explicit(&F.stop, memory_order_acquire)) {
		uint64_t now = tp_clock_monotonic_ns();
		if (now - last_alone_check > 100000000ULL) {
			last_alone_check = now;
			/* exit() runs the destructor on this thread, which saves
			 * the trace. */
			if (only_flush_thread_left())
				exit(0);
		}
		/* Returns at once when a wake came since `seen` was read.  With
		 * a backlog in the store, the next pass goes on without a wait. */
		struct timespec ts = { (time_t)(F.cfg.flush_ms / 1000),
				       (long)(F.cfg.flush_ms % 1000) * 1000000L };
		if (!backlog)
			fl_futex(&F.wake, FUTEX_WAIT_PRIVATE, seen, &ts);
		seen = atomic_load_explicit(&F.wake, memory_order_acquire);
		if (atomic_load_explicit(&F.finish_req, memory_order_acquire)) {
			/* The final save, for exit() or a signal, runs here and
			 * never on the program's thread: that thread may be under
			 * a seccomp filter of the program's (installed after this
			 * thread was created, so not on it) that forbids the
			 * file calls of a save, and it keeps its own signal mask
			 * (SIGXFSZ past RLIMIT_FSIZE is blocked here: a write
			 * fails with EFBIG instead).  Nobody joins this thread. */
			final_save();
			pthread_detach(pthread_self());
			break;
		}
		backlog = run_pass();
	}
	return NULL;
}

static void read_identity(void)
{
	read_proc_text("/proc/self/cmdline", F.cmdline, sizeof(F.cmdline), 1);
	char exe[256];
	read_proc_text("/proc/self/comm", exe, sizeof(exe), 0);
	tp_format(F.program, sizeof(F.program), "%s", exe[0] ? exe : "program");
}

static int start_thread(void)
{
	/* Block every signal while creating the thread, so that it inherits a
	 * full mask and never runs the program's handlers. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	int rc = pthread_create(&F.thread, &attr, flush_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	pthread_setname_np(F.thread, "traceprof-flush");
	F.running = 1;
	return 0;
}

static void init_windows(void)
{
	F.seen_step = tp_control_current_step();
	F.nwin = 0;
	F.pass = 0;
	if (tp_action_records(tp_control_action(F.seen_step)))
		window_open(F.seen_step);
}

int tp_flush_start(const struct tp_config *cfg, const struct tp_template_vars *vars)
{
	F.cfg = *cfg;
	F.vars = *vars;
	F.pid = (int64_t)getpid();
	/* The cap is on the writer's bytes (before compression); metadata and
	 * footer of a part take a few kilobytes per thread, kept back from it. */
	F.max_part_bytes = cfg->max_file_mb * 1024 * 1024;
	F.max_part_bytes -= F.max_part_bytes / 16 < 262144 ? F.max_part_bytes / 16 : 262144;
	F.base_wall = tp_trace_base_time(tp_clock_wall_offset_ns() +
					 (int64_t)tp_clock_monotonic_ns());
	read_identity();
	const char *fmt = cfg->format == TP_FORMAT_PERFETTO ? "perfetto" : "json";
	F.ops = tp_writer_find(fmt);
	if (!F.ops) {
		/* The Perfetto writer is not in this build yet. */
		tp_warn("TRACEPROF_FORMAT=%s: this build has no %s writer; writing JSON", fmt, fmt);
		F.ops = &tp_json_writer;
	}
	if (!F.footer.nodes)
		tp_doc_init(&F.footer);
	int k = 0;
	for (int i = 0; i < F.nplugins; i++)
		if (!F.plugins[i]->init || F.plugins[i]->init(cfg) == 0)
			F.plugins[k++] = F.plugins[i];
	F.nplugins = k;
	init_windows();
	tp_store_configure(cfg->max_buffer_mb * 1024 * 1024);
	tp_ring_set_wake(fl_wake_hint);
	/* Relative folders stay relative to this working directory, whatever
	 * chdir() the program makes (format/sink.h).  Without it (no getcwd),
	 * they follow the working directory, as before. */
	int arc = tp_sink_anchor();
	if (arc < 0)
		tp_warn("cannot hold the working directory (%s); a relative TRACEPROF_FOLDER "
			"will follow the program's chdir()",
			strerror(-arc));
	return start_thread();
}

void tp_flush_sync(int timeout_ms)
{
	if (!F.running || pthread_equal(pthread_self(), F.thread) ||
	    atomic_load_explicit(&F.finished, memory_order_acquire))
		return;
	/* The pass under way may have drained before the caller's last
	 * records: wait for the end of the one after it. */
	uint64_t want = atomic_load_explicit(&F.passes_done, memory_order_acquire) + 2;
	fl_wake();
	int rewoken = 0;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < timeout_ms; i++) {
		uint64_t done = atomic_load_explicit(&F.passes_done, memory_order_acquire);
		if (done >= want)
			return;
		/* Wake it for the second pass too, rather than wait for its poll
		 * timeout. */
		if (!rewoken && done + 1 >= want) {
			fl_wake();
			rewoken = 1;
		}
		nanosleep(&ms, NULL);
	}
}

void tp_flush_finish(void)
{
	if (atomic_load_explicit(&F.finished, memory_order_acquire))
		return;
	if (!F.running || pthread_equal(pthread_self(), F.thread)) {
		/* exit() from the flush thread itself (only_flush_thread_left()),
		 * whose signals are all blocked: save here. */
		atomic_store_explicit(&F.stop, 1, memory_order_release);
		final_save();
		return;
	}
	/* The flush thread saves; this (the program's exiting) thread ends the
	 * step (a record in its own ring), wakes the flush thread and waits:
	 * futex calls, and nothing else. */
	fl_stop_recording();
	atomic_store_explicit(&F.cut_ns,
			      tp_clock_monotonic_ns() + F.cfg.exit_timeout_s * 500000000ULL,
			      memory_order_relaxed);
	/* Release: the step record above is in the ring before the flush
	 * thread's acquire load of finish_req in flush_main(). */
	atomic_store_explicit(&F.finish_req, 1, memory_order_release);
	fl_wake();
	if (fl_wait_saved(F.cfg.exit_timeout_s * 1000ULL) == 0)
		return;
	tp_error("the final save did not finish within %llu s (TRACEPROF_EXIT_TIMEOUT_S); "
		 "the process exits without it: the last window's trace is lost and a hidden "
		 "temporary file may remain; raise TRACEPROF_EXIT_TIMEOUT_S to wait longer",
		 (unsigned long long)F.cfg.exit_timeout_s);
}

int tp_flush_finish_from_signal(int timeout_ms)
{
	if (!F.running)
		return atomic_load_explicit(&F.finished, memory_order_acquire) ? 0 : -1;
	atomic_store_explicit(&F.cut_ns, tp_clock_monotonic_ns() + (uint64_t)timeout_ms * 500000ULL,
			      memory_order_relaxed);
	/* Release pairs with the acquire load in flush_main(). */
	atomic_store_explicit(&F.finish_req, 1, memory_order_release);
	fl_wake();
	return fl_wait_saved((uint64_t)timeout_ms);
}

void tp_flush_after_fork_child(int follow)
{
	/* The parent's flush thread does not exist here and its files belong to
	 * the parent.  That thread may have been anywhere when the program
	 * forked, e.g. between freeing a finalized window and removing it from
	 * F.win: nothing it owns can be trusted here, so reset to empty and free
	 * nothing (the windows, sinks, buffers and descriptors leak in the
	 * child: their pages are the parent's, shared copy-on-write). */
	memset(F.win, 0, sizeof(F.win));
	F.nwin = 0;
	F.running = 0;
	tp_threads_after_fork_child();
	tp_store_after_fork_child();
	tp_rotate_forget();
	atomic_store_explicit(&F.finish_req, 0, memory_order_relaxed);
	atomic_store_explicit(&F.saved, 0, memory_order_relaxed);
	atomic_store_explicit(&F.stopped, 0, memory_order_relaxed);
	atomic_store_explicit(&F.cut_ns, 0, memory_order_relaxed);
	F.cut_total = 0;
	if (!follow || atomic_load_explicit(&F.finished, memory_order_relaxed)) {
		tp_control_disable();
		return;
	}
	atomic_store_explicit(&F.stop, 0, memory_order_relaxed);
	F.pid = (int64_t)getpid();
	F.vars.pid = F.pid;
	/* A child writes its own files: without {pid} in the name, parent and
	 * child would collide, so the child's name gets its pid in front. */
	if (!strstr(F.cfg.filename, "{pid}")) {
		char name[TP_CONFIG_STR];
		tp_format(name, sizeof(name), "pid{pid}.%s", F.cfg.filename);
		memcpy(F.cfg.filename, name, sizeof(name));
	}
	init_windows();
	if (start_thread() < 0) {
		tp_error("cannot start the flush thread in the forked child %lld; not recording it",
			 (long long)F.pid);
		tp_control_disable();
	}
}


