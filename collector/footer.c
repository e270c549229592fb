/* What a part file ends with: the process and thread names (metadata), the
 * footer (the "traceprof" object: steps, counts, drops, configuration,
 * plugins' members), and the attribution of ring drops to one window. */
#include <string.h>

#include "collector/annos.h"
#include "collector/convert.h"
#include "collector/cuda_kernels.h"
#include "collector/markers_decode.h"
#include "collector/flush_int.h"
#include "collector/fthread.h"
#include "collector/nvtx_decode.h"
#include "collector/nvtx_payload_decode.h"
#include "collector/thread.h"
#include "common/demangle.h"
#include "common/layout.h"
#include "common/clock.h"
#include "common/log.h"

/* Whether t wrote into window w (its per-window counter is w's). */
static int ft_in(const struct tp_thread *t, const struct tp_win *w)
{
	return tp_fthread_in_window(t->fl, w->id);
}

/* What the process's fixed tables had no room for, since it started: the
 * events are written, without what is lost.  Each is a footer member and,
 * when a saved file shows it grew, one traceprof: line (tp_fl_warn_lost). */
static const struct {
	const char *key;
	uint64_t (*count)(void);
	const char *what;
} ft_lost[] = {
	{ "thread_names_lost", tp_nvtx_thread_names_lost,
	  "thread names given with nvtxNameOsThread were not kept (the process keeps 1024 "
	  "names): those threads show their own names" },
	{ "categories_lost", tp_markers_categories_lost,
	  "events kept only the category user_annotation (the process keeps 256 distinct lists "
	  "of categories): their args.categories has the categories" },
	{ "kernel_names_lost", tp_cuda_kernels_dropped,
	  "kernels registered past the million the process keeps (or with no memory): their "
	  "launches show no kernel name" },
	{ "gpu_annotations_lost", tp_annos_missed,
	  "user annotations were not kept for the GPU side (a million at most, or no memory): "
	  "their GPU work has no gpu_user_annotation" },
};

void tp_fl_metadata(const struct tp_win *w, struct tp_writer *out, int last, uint64_t last_ns)
{
	char pname[400];
	tp_format(pname, sizeof(pname), "rank %lld: %s (pid %lld)", (long long)tp_fl.vars.rank,
		  tp_fl.program, (long long)tp_fl.pid);
	char labels[400];
	tp_format(labels, sizeof(labels), "rank %lld/%lld, host %s", (long long)tp_fl.vars.rank,
		  (long long)tp_fl.vars.world_size, tp_fl.vars.hostname);
	tp_writer_process(out, tp_fl.pid, pname, labels, tp_fl.vars.rank);
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		if (!ft_in(t, w))
			continue;
		tp_fl_refresh_thread_name(t);
		if (last)
			tp_convert_close_markers(out, t, tp_fl.pid, last_ns);
		/* The thread that made the first CUDA call or step sorts first. */
		tp_writer_thread(out, tp_fl.pid, t->tid, t->name, (int64_t)t->serial);
	}
}

static void ft_cfg_field(const char *name, const char *value, void *ctx)
{
	tp_doc_str(ctx, name, value);
}

void tp_fl_footer(const struct tp_win *w, struct tp_doc *d, int part, int nparts,
		  uint64_t written, uint64_t dropped)
{
	tp_doc_reset(d);
	tp_doc_str(d, "version", TRACEPROF_VERSION);
	tp_doc_u64(d, "part", (uint64_t)part + 1);
	tp_doc_u64(d, "parts", (uint64_t)nparts);
	tp_doc_array(d, "steps");
	tp_doc_u64(d, NULL, w->first_step);
	tp_doc_u64(d, NULL, w->last_step);
	tp_doc_end(d);
	tp_doc_u64(d, "events_written", written);
	tp_doc_u64(d, "events_dropped", dropped);
	/* Of events_dropped, the ones a signal handler's write lost. */
	uint64_t intr = 0;
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next)
		if (t->fl)
			intr += t->fl->intr_window;
	tp_doc_u64(d, "events_dropped_interrupted", intr);
	tp_doc_u64(d, "events_lost_after_thread_exit",
		   atomic_load_explicit(&tp_threads_lost, memory_order_relaxed));
	tp_doc_u64(d, "events_lost_no_memory",
		   atomic_load_explicit(&tp_threads_lost_as, memory_order_relaxed));
	tp_doc_u64(d, "events_lost_op_depth",
		   atomic_load_explicit(&tp_ops_lost_deep, memory_order_relaxed));
	tp_doc_u64(d, "events_late", tp_fl.late_total);
	tp_doc_u64(d, "events_cut_at_exit", tp_fl.cut_total);
	tp_doc_u64(d, "names_cut", tp_demangle_cut_count());
	tp_doc_u64(d, "names_left_mangled", tp_demangle_refused_count());
	for (size_t i = 0; i < sizeof(ft_lost) / sizeof(ft_lost[0]); i++)
		tp_doc_u64(d, ft_lost[i].key, ft_lost[i].count());
	tp_nvtx_payload_footer(d);
	tp_doc_str(d, "clock", tp_clock_source_cur == TP_CLOCK_TSC ? "tsc" : "monotonic");
	tp_doc_str(d, "hostname", tp_fl.vars.hostname);
	tp_doc_str(d, TP_FOOTER_RUN_ID, tp_fl.vars.run_id);
	tp_doc_str(d, TP_FOOTER_RUN_ID_FROM, tp_fl.vars.run_id_from ? tp_fl.vars.run_id_from : "");
	tp_doc_i64(d, TP_FOOTER_START, tp_fl.start_wall);
	tp_doc_str(d, "command_line", tp_fl.cmdline);
	tp_doc_array(d, "threads");
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		int in = ft_in(t, w);
		/* The window's share, snapshotted by tp_fl_attribute_drops(1):
		 * the ring's counter keeps moving while the footer is written. */
		uint64_t dd = t->fl ? t->fl->drops_window : 0;
		if (!in && !dd)
			continue;
		tp_doc_object(d, NULL);
		tp_doc_i64(d, "tid", t->tid);
		tp_doc_str(d, "name", t->name);
		tp_doc_u64(d, "events_written", in ? t->fl->ws[w->id % TP_MAX_OPEN_WINDOWS].written : 0);
		tp_doc_u64(d, "events_dropped", dd);
		tp_doc_end(d);
	}
	tp_doc_end(d);
	tp_doc_object(d, "configuration");
	tp_config_visit(&tp_fl.cfg, ft_cfg_field, d);
	tp_doc_end(d);
	tp_fl_plugins_footer(d);
}

void tp_fl_warn_lost(const char *path)
{
	/* What earlier files already said: the counts only grow. */
	static uint64_t said[sizeof(ft_lost) / sizeof(ft_lost[0])];
	for (size_t i = 0; i < sizeof(ft_lost) / sizeof(ft_lost[0]); i++) {
		uint64_t n = ft_lost[i].count();
		if (n > said[i])
			tp_warn("%llu %s, as of %s (the footer's %s)", (unsigned long long)n,
				ft_lost[i].what, path, ft_lost[i].key);
		said[i] = n;
	}
}

uint64_t tp_fl_attribute_drops(int commit, uint64_t *interrupted)
{
	uint64_t total = 0, intr = 0;
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		/* A thread not drained yet has no flush-side state: made here
		 * when committing; when it cannot be allocated, the thread's
		 * drops wait for a later window. */
		struct tp_fthread *f = commit ? tp_fthread_get(t) : t->fl;
		if (!f && commit)
			continue;
		/* Interrupted first: each is counted in `dropped` before it is in
		 * `dropped_interrupted` (tp_ring_drop_interrupted(), the same
		 * thread, in program order; relaxed loads of two locations may
		 * still see them out of order, so the share is capped below). */
		uint64_t di = atomic_load_explicit(&t->ring.dropped_interrupted, memory_order_relaxed);
		uint64_t d = atomic_load_explicit(&t->ring.dropped, memory_order_relaxed);
		uint64_t dd = d - (f ? f->drops_attributed : 0);
		uint64_t di_new = di - (f ? f->intr_attributed : 0);
		if (di_new > dd)
			di_new = dd;
		total += dd;
		intr += di_new;
		if (commit) {
			f->drops_window = dd;
			f->drops_attributed = d;
			f->intr_window = di_new;
			f->intr_attributed += di_new;
		}
	}
	if (interrupted)
		*interrupted = intr;
	return total;
}
