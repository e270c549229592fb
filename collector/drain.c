/* Records out of the rings, through each thread's store, into their window:
 * a pass moves the rings into the store at memory speed and converts from
 * there in slices; the final save converts everything until its time runs
 * out (the cut), then only counts. */
#include "collector/activity.h"
#include "collector/convert.h"
#include "collector/flush_int.h"
#include "collector/fthread.h"
#include "collector/store.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/log.h"

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

struct dr_ctx {
	struct tp_thread *t;
	struct tp_fthread *f; /* t's flush-side state */
	uint64_t seen; /* records handed over, for the exit's time checks */
	int cut;       /* out of time at exit: the rest is only counted */
};

static void dr_record_cut(void)
{
	if (tp_fl.cut_total++ == 0)
		tp_warn("the final save ran out of time (half of the exit bound); the events "
			"still buffered are not written, and counted as events_cut_at_exit");
}

/* The thread's counter of window w, reset when the slot held an older
 * window. */
static struct tp_fthread_wstat *dr_wstat(struct tp_fthread *f, const struct tp_win *w)
{
	struct tp_fthread_wstat *s = &f->ws[w->id % TP_MAX_OPEN_WINDOWS];
	if (s->window_id != w->id) {
		s->window_id = w->id;
		s->written = 0;
	}
	return s;
}

static void dr_record(const struct tp_record *r, void *arg)
{
	struct dr_ctx *c = arg;
	struct tp_thread *t = c->t;
	struct tp_fthread *f = c->f;
	/* At exit, a ring can hold millions of records: look at the time now
	 * and then (a vDSO call per 4096 records), not only between rings. */
	if (__builtin_expect(atomic_load_explicit(&tp_fl.cut_ns, memory_order_relaxed) != 0, 0) &&
	    (++c->seen & 4095) == 0 &&
	    tp_clock_monotonic_ns() > atomic_load_explicit(&tp_fl.cut_ns, memory_order_relaxed))
		c->cut = 1;
	if (__builtin_expect(c->cut, 0)) {
		dr_record_cut();
		return;
	}
	enum tp_wsm_fate fate;
	struct tp_win *w = tp_wsm_record(&tp_fl.wsm, r->step, &fate);
	if (!w) {
		if (fate == TP_WSM_LATE) {
			f->late++;
			tp_fl.late_total++;
		} else {
			f->filtered++;
			tp_fl.filtered_total++;
		}
		return;
	}
	dr_wstat(f, w)->written++;
	if (r->kind != TP_REC_STEP)
		tp_activity_set();
	uint64_t b = tp_clock_to_ns(r->start);
	uint64_t e = r->end > r->start ? tp_clock_to_ns(r->end) : b;
	struct tp_writer *out = tp_fl_window_writer(w, b, e);
	if (out)
		tp_convert_record(out, t, r, tp_fl.pid);
}

static int dr_cut_due(void)
{
	uint64_t cut = atomic_load_explicit(&tp_fl.cut_ns, memory_order_relaxed);
	return cut != 0 && tp_clock_monotonic_ns() > cut;
}

/* Every ring into its thread's store, as far as the budget allows.  Returns
 * the records moved. */
static uint64_t dr_move_all(void)
{
	uint64_t n = 0;
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		struct tp_fthread *f = tp_fthread_get(t);
		if (f)
			n += tp_store_take(&f->stored, &t->ring);
	}
	return n;
}

/* The records left in the ring of a thread the flush side could keep no
 * state for (out of memory): counted as lost for want of memory. */
static void dr_count_lost(const struct tp_record *r, void *arg)
{
	(void)r;
	(void)arg;
	atomic_fetch_add_explicit(&tp_threads_lost_as, 1, memory_order_relaxed);
}

void tp_fl_drain_final(void)
{
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		struct tp_fthread *f = tp_fthread_get(t);
		if (!f) {
			tp_ring_consume(&t->ring, dr_count_lost, NULL);
			continue;
		}
		/* Each thread's stored records, then what its ring still holds
		 * (newer), in order.  Out of time at exit: empty the store and
		 * the ring, counted.  A busy machine (the program's threads keep
		 * the CPUs) cannot make the exit wait for every record's
		 * conversion. */
		struct dr_ctx c = { t, f, 0, dr_cut_due() };
		tp_store_convert(&f->stored, dr_record, &c, UINT64_MAX);
		c.cut = c.cut || dr_cut_due();
		tp_ring_consume(&t->ring, dr_record, &c);
	}
}

/* Converting in slices, with moves in between, keeps a slow writer (zstd, a
 * busy disk) from letting the rings fill. */
int tp_fl_drain_pass(void)
{
	if (!tp_store_enabled()) {
		/* TRACEPROF_MAX_BUFFER_MB=0: straight from the rings. */
		for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
			/* No state (out of memory): the records wait in the ring
			 * for a later pass. */
			struct dr_ctx c = { t, tp_fthread_get(t), 0, 0 };
			if (c.f)
				tp_ring_consume(&t->ring, dr_record, &c);
		}
		return 0;
	}
	uint64_t start = tp_clock_monotonic_ns(), last_move = start;
	for (;;) {
		uint64_t moved = dr_move_all();
		uint64_t left = 0;
		for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
			struct tp_fthread *f = t->fl;
			if (!f || !f->stored.records)
				continue;
			struct dr_ctx c = { t, f, 0, 0 };
			tp_store_convert(&f->stored, dr_record, &c, DRAIN_SLICE);
			left += f->stored.records;
			uint64_t now = tp_clock_monotonic_ns();
			if (now - last_move >= DRAIN_MOVE_NS) {
				moved += dr_move_all();
				last_move = now;
			}
		}
		if (!left && !moved)
			return 0;
		if (tp_clock_monotonic_ns() - start > DRAIN_PASS_NS) {
			dr_move_all();
			return 1;
		}
	}
}
