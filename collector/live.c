/* The live file (collector/live.h, docs/live.md).  Everything here runs on
 * the flush thread (or on the exiting thread once it stopped), but
 * tp_live_set_exit_status(), which only stores; the steps' times are kept by
 * collector/live_steps.c. */
#include "collector/live.h"
#include "collector/live_file.h"
#include "collector/live_steps.h"
#include "collector/live_top.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/activity.h"
#include "collector/control.h"
#include "collector/cuda_record.h"
#include "collector/flush_int.h"
#include "collector/nvtx_payload_decode.h"
#include "collector/pystack_decode.h"
#include "collector/thread.h"
#include "common/clock.h"
#include "common/log.h"
#include "format/aggregate.h"
#include "format/json.h"
#include "format/writer.h"

/* The file's update period: the windows' disk flush's (TP_FL_DISK_NS) would
 * do, but readers judge staleness in seconds; one second is the issue's. */
#define LV_INTERVAL_NS 1000000000ULL

/* An open range's payload is copied as a record's is: the decoder reads
 * what the push copied. */
_Static_assert(TP_LIVE_PAYLOAD_WORDS * 8 == TP_NVTX_PAYLOAD_MAX, "the payload bytes published");

/* collector/live_pub.h: set by preload/pystack_profile.c's audit hook. */
_Atomic int tp_live_py_gone;
/* collector/live_pub.h: written by preload/nvtx.c's range starts and ends. */
struct tp_live_range tp_live_ranges[TP_LIVE_RANGES];

/* The exit status given to exit(), + 1 (0: none known). */
static _Atomic int lv_exit;

static struct {
	int on;
	int failed_said;
	/* A forked child: the pid it was forked from (0 in the program
	 * itself), and whether a step has ended in it since. */
	int64_t parent;
	uint64_t last_ns;	/* monotonic time of the last write */
	int64_t started_ns;	/* realtime at the library's start */
	uint64_t events_gone, dropped_gone; /* counts of threads freed */
	struct tp_json j;
	int have_j;
	/* The current window's top, kept when it is gone: the last window's
	 * until the next one has events. */
	struct tp_live_top top[TP_LIVE_TOP];
	int ntop;
} L;

static int64_t lv_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Ticks of tp_clock_now() as realtime ns. */
static int64_t lv_wall(uint64_t ticks)
{
	return (int64_t)tp_clock_to_ns(ticks) + tp_clock_wall_offset_ns();
}

void tp_live_init(const struct tp_config *cfg, const struct tp_template_vars *vars)
{
	L.on = 0;
	L.started_ns = lv_realtime_ns();
	if (!cfg->live)
		return;
	L.on = tp_live_file_init(cfg, vars);
}

/* exit()'s status: on_exit() handlers get it.  Registered once the
 * program runs (from the flush thread's start), so that it runs before the
 * library's destructor, which saves: handlers run in reverse order of
 * registration, and the libraries' destructors from the handler the C
 * library registered before main().  A constructor's registration would
 * come before that one, and so run after the save.  Registered by the
 * thread that starts the flush thread, before it does (tp_flush_need(),
 * once, a slow path that also calls pthread_create()).  Relaxed: stored by the
 * exiting thread before it asks for the final save, whose release
 * (finish_req) orders it before the save reads it. */
static void lv_on_exit(int status, void *arg)
{
	(void)arg;
	atomic_store_explicit(&lv_exit, (status & 0xff) + 1, memory_order_relaxed);
}

void tp_live_thread_started(void)
{
	static _Atomic int registered;
	if (L.on && !atomic_exchange_explicit(&registered, 1, memory_order_relaxed))
		on_exit(lv_on_exit, NULL);
}

void tp_live_forget_thread(const struct tp_thread *t)
{
	L.events_gone += atomic_load_explicit(&t->ring.head, memory_order_relaxed);
	L.dropped_gone += atomic_load_explicit(&t->ring.dropped, memory_order_relaxed);
}

void tp_live_after_fork_child(void)
{
	L.started_ns = lv_realtime_ns();
	L.events_gone = L.dropped_gone = 0;
	L.last_ns = 0;
	L.ntop = 0; /* the parent's windows are not the child's */
	tp_live_steps_reset();
	L.parent = (int64_t)getppid();
	if (L.on)
		tp_live_file_child();
}

/* ---- the JSON ------------------------------------------------------------ */

static void lv_key(struct tp_json *j, const char *k)
{
	tp_json_char(j, '"');
	tp_json_raw(j, k, strlen(k));
	tp_json_raw(j, "\":", 2);
}

static void lv_int_or_null(struct tp_json *j, int64_t v, int known)
{
	if (known)
		tp_json_i64(j, v);
	else
		tp_json_lit(j, "null");
}

/* "step", "step_started_ns", "steps", "last_step". */
static void lv_write_steps(struct tp_json *j)
{
	uint64_t step = tp_control_current_step();
	lv_key(j, "step");
	tp_json_i64(j, (int64_t)tp_control_display_step(step));
	uint64_t durs[TP_LIVE_STEPS];
	uint64_t last;
	int n = tp_live_steps_read(durs, &last);
	tp_json_lit(j, ",\"step_started_ns\":");
	/* A forked child that has not stepped (a DataLoader worker) only
	 * inherited its parent's step: its start is not a step it waits in, and
	 * `top` would call the worker stalled. */
	uint64_t st = L.parent && !last ? 0 : tp_control_step_start();
	lv_int_or_null(j, st ? lv_wall(st) : 0, st != 0);
	tp_json_lit(j, ",\"steps\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			tp_json_char(j, ',');
		tp_json_u64(j, durs[i]);
	}
	tp_json_lit(j, "],\"last_step\":");
	lv_int_or_null(j, last ? (int64_t)tp_control_display_step(last - 1) : 0, last != 0);
}

/* "window": the newest window still taking steps, or null. */
static void lv_write_window(struct tp_json *j)
{
	const struct tp_win *w = NULL;
	for (int i = tp_fl.wsm.nwin - 1; i >= 0 && !w; i--)
		if (!tp_fl.wsm.win[i].closed)
			w = &tp_fl.wsm.win[i];
	lv_key(j, "window");
	if (!w) {
		tp_json_lit(j, "null");
		return;
	}
	struct tp_template_vars v = tp_fl.vars;
	v.step = (int64_t)tp_control_display_step(w->first_step);
	char name[NAME_MAX + 1], err[600];
	if (tp_template_expand(tp_fl.cfg.filename, &v, name, sizeof(name), err, sizeof(err)) < 0)
		name[0] = '\0';
	tp_json_lit(j, "{\"first_step\":");
	tp_json_i64(j, v.step);
	tp_json_lit(j, ",\"name\":");
	tp_json_str(j, name);
	tp_json_char(j, '}');
}

/* One open thing of a thread, gathered before it is written. */
struct lv_item {
	const char *kind;
	char name[TP_LIVE_NAME_BYTES];
	uint64_t since; /* ticks */
	struct tp_live_payload pl; /* nvtx: its payload (size 0: none) */
};

/* The items in the order they opened (outermost first), kinds in the
 * order gathered on ties: insertion sort, at most 4 + TP_LIVE_NVTX +
 * TP_LIVE_RANGES. */
static void lv_sort(struct lv_item *it, int n)
{
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && it[b].since < it[b - 1].since; b--) {
			struct lv_item x = it[b];
			it[b] = it[b - 1];
			it[b - 1] = x;
		}
}

/* An NVTX range's payload as the trace's args show it (NCCL's comm, bytes,
 * op by its enum's name, peer), decoded by the schema the program
 * registered: {} when it has none, or its schema is unknown. */
static void lv_write_payload(struct tp_json *j, const struct tp_live_payload *pl)
{
	struct tp_arg args[TP_NVTX_PAYLOAD_ARGS];
	unsigned n = 0;
	if (pl->size) {
		struct tp_nvtx_payload_hdr h = { .schema = pl->schema, .copied = pl->copied,
						 .size = pl->size };
		n = tp_nvtx_payload_args_live(pl->domain, &h, (const unsigned char *)pl->p, args);
	}
	tp_json_char(j, '{');
	int first = 1;
	for (unsigned i = 0; i < n; i++) {
		const struct tp_arg *a = &args[i];
		if (a->type != TP_VAL_U64 && a->type != TP_VAL_I64 && a->type != TP_VAL_HEX &&
		    a->type != TP_VAL_BOOL && a->type != TP_VAL_STR && a->type != TP_VAL_F64)
			continue;
		if (!first)
			tp_json_char(j, ',');
		first = 0;
		tp_json_strn(j, a->key, a->klen);
		tp_json_char(j, ':');
		switch (a->type) {
		case TP_VAL_U64:
			tp_json_u64(j, a->u);
			break;
		case TP_VAL_I64:
			tp_json_i64(j, a->i);
			break;
		case TP_VAL_HEX:
			tp_json_hex(j, a->u);
			break;
		case TP_VAL_BOOL:
			tp_json_lit(j, a->u ? "true" : "false");
			break;
		case TP_VAL_F64:
			tp_json_double(j, a->f);
			break;
		default:
			tp_json_strn(j, a->s, a->n);
		}
	}
	tp_json_char(j, '}');
}

/* "python": the thread's Python stack as its shadow publishes it
 * (collector/live_pub.h), names only, innermost first, at most LV_PY
 * frames: {"depth": D, "inner_unknown": U, "frames": [{"func", "file"}]},
 * where U inner frames are past the shadow's TP_LIVE_PY (not kept). */
#define LV_PY 64
static void lv_write_python(struct tp_json *j, const uint32_t *idx, int n, uint32_t depth)
{
	tp_json_lit(j, "{\"depth\":");
	tp_json_u64(j, depth);
	tp_json_lit(j, ",\"inner_unknown\":");
	tp_json_u64(j, depth - (uint32_t)n);
	tp_json_lit(j, ",\"frames\":[");
	for (int k = 0; k < n && k < LV_PY; k++) {
		const char *file, *func;
		(void)tp_pystack_name_of(idx[n - 1 - k], &file, &func);
		tp_json_lit(j, k ? ",{\"func\":" : "{\"func\":");
		tp_json_str(j, func);
		tp_json_lit(j, ",\"file\":");
		tp_json_str(j, file);
		tp_json_char(j, '}');
	}
	tp_json_lit(j, "]}");
}

/* One thread's open things, outermost first: NVTX ranges, the module, the
 * op and record_function() range, the CUDA call; and its Python stack.
 * Returns 0 when it has none of them (nothing written). */
static int lv_write_thread(struct tp_json *j, struct tp_thread *t, int first)
{
	struct tp_live_pub *p = &t->live;
	struct lv_item it[4 + TP_LIVE_NVTX + TP_LIVE_RANGES];
	int n = 0;
	/* Acquire: pairs with the release store in preload/nvtx.c's
	 * live_push(); each slot then checks itself through its seqlock. */
	uint32_t depth = atomic_load_explicit(&p->nvtx_depth, memory_order_acquire);
	for (uint32_t i = 0; i < depth && i < TP_LIVE_NVTX; i++)
		if (tp_live_nvtx_get(&p->nvtx[i], it[n].name, &it[n].since, &it[n].pl) == 0 &&
		    it[n].name[0])
			it[n++].kind = "nvtx";
	/* The start/end ranges this thread started, still open. */
	for (int i = 0; i < TP_LIVE_RANGES; i++) {
		uint64_t id;
		if (tp_live_range_get(i, t->tid, it[n].name, &it[n].since, &it[n].pl, &id) == 0 &&
		    it[n].name[0])
			it[n++].kind = "nvtx";
	}
	for (int i = n; i < 4 + TP_LIVE_NVTX + TP_LIVE_RANGES; i++)
		it[i].pl.size = 0;
	/* Acquire: pairs with the release stores of mod_on, op_on and
	 * range_on after their slots are written (preload/torch_*.c). */
	if (atomic_load_explicit(&p->mod_on, memory_order_acquire) &&
	    tp_live_name_get(&p->mod, it[n].name, &it[n].since) == 0)
		it[n++].kind = "module";
	if (atomic_load_explicit(&p->op_on, memory_order_acquire) &&
	    tp_live_name_get(&p->op, it[n].name, &it[n].since) == 0)
		it[n++].kind = "torch_op";
	if (atomic_load_explicit(&p->range_on, memory_order_acquire) &&
	    tp_live_name_get(&p->range, it[n].name, &it[n].since) == 0)
		it[n++].kind = "torch_op";
	/* Acquire: pairs with the release store in tp_live_call_enter(): the
	 * start read below is that call's (or a later one's). */
	uint32_t call = atomic_load_explicit(&p->call, memory_order_acquire);
	uint32_t id = call & ~TP_LIVE_CALL_IDLE;
	if (id && id - 1 < TP_CUDA_NFUNCS) {
		if (call & TP_LIVE_CALL_IDLE) {
			/* Entered while no window recorded: no time was read.
			 * Relaxed: the owner increments call_enters before it
			 * stores call (plain moves in order on x86-64, the
			 * only machine with that path), and the acquire load
			 * above sees that store. */
			uint32_t e = atomic_load_explicit(&p->call_enters, memory_order_relaxed);
			if (p->seen_call != call || p->seen_enters != e) {
				p->seen_call = call;
				p->seen_enters = e;
				p->seen_at = tp_clock_now();
			}
			it[n].since = p->seen_at;
		} else {
			it[n].since = atomic_load_explicit(&p->call_start, memory_order_relaxed);
		}
		snprintf(it[n].name, sizeof(it[n].name), "%s", tp_cuda_fns[id - 1].name);
		it[n++].kind = "cuda";
	}
	static uint32_t py[TP_LIVE_PY]; /* flush thread only */
	uint32_t pydepth = 0;
	int npy = tp_live_py_get(&p->py, py, &pydepth);
	if (!n && npy <= 0)
		return 0;
	lv_sort(it, n);
	if (!first)
		tp_json_char(j, ',');
	tp_json_lit(j, "{\"tid\":");
	tp_json_i64(j, t->tid);
	tp_json_lit(j, ",\"name\":");
	tp_json_str(j, t->name);
	tp_json_lit(j, ",\"open\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			tp_json_char(j, ',');
		tp_json_lit(j, "{\"kind\":");
		tp_json_str(j, it[i].kind);
		tp_json_lit(j, ",\"name\":");
		tp_json_str(j, it[i].name);
		tp_json_lit(j, ",\"since_ns\":");
		tp_json_i64(j, lv_wall(it[i].since));
		tp_json_lit(j, ",\"payload\":");
		lv_write_payload(j, &it[i].pl);
		tp_json_char(j, '}');
	}
	tp_json_lit(j, "],\"python\":");
	if (npy > 0)
		lv_write_python(j, py, npy, pydepth);
	else
		tp_json_lit(j, "null");
	tp_json_char(j, '}');
	return 1;
}

/* Refreshes L.top from the newest window's parts when it has events
 * (collector/live_top.c); else the last top stays. */
static void lv_top_refresh(void)
{
	int n = tp_live_top_sum(L.top);
	if (n > 0)
		L.ntop = n;
}

void tp_live_top_note(int always)
{
	if (L.on && tp_fl.wsm.nwin && (always || tp_fl.wsm.win[tp_fl.wsm.nwin - 1].closed))
		lv_top_refresh();
}

/* "top": [[name, total_ns, calls], ...], largest total first. */
static void lv_write_top(struct tp_json *j)
{
	lv_top_refresh();
	tp_json_lit(j, ",\"top\":[");
	for (int i = 0; i < L.ntop; i++) {
		tp_json_lit(j, i ? ",[" : "[");
		tp_json_str(j, L.top[i].name);
		tp_json_char(j, ',');
		tp_json_u64(j, L.top[i].total);
		tp_json_char(j, ',');
		tp_json_u64(j, L.top[i].calls);
		tp_json_char(j, ']');
	}
	tp_json_char(j, ']');
}

static void lv_build(struct tp_json *j, int finished)
{
	const struct tp_template_vars *v = &tp_fl.vars;
	int launched = v->launcher && strcmp(v->launcher, "none") != 0;
	j->len = 0;
	tp_json_lit(j, "{\"traceprofLive\":1,\"host\":");
	tp_json_str(j, v->hostname);
	tp_json_lit(j, ",\"pid\":");
	tp_json_i64(j, tp_fl.pid);
	tp_json_lit(j, ",\"parent_pid\":");
	lv_int_or_null(j, L.parent, L.parent != 0);
	tp_json_lit(j, ",\"program\":");
	tp_json_str(j, tp_fl.program);
	tp_json_lit(j, ",\"rank\":");
	lv_int_or_null(j, v->rank, launched);
	tp_json_lit(j, ",\"local_rank\":");
	lv_int_or_null(j, v->local_rank, launched);
	tp_json_lit(j, ",\"world_size\":");
	lv_int_or_null(j, v->world_size, launched);
	tp_json_lit(j, ",\"run\":");
	tp_json_str(j, v->run_name);
	tp_json_lit(j, ",\"interval_ms\":");
	tp_json_u64(j, LV_INTERVAL_NS / 1000000);
	tp_json_lit(j, ",\"updated_ns\":");
	tp_json_i64(j, lv_realtime_ns());
	tp_json_lit(j, ",\"started_ns\":");
	tp_json_i64(j, L.started_ns);
	tp_json_lit(j, finished ? ",\"state\":\"finished\"" : ",\"state\":\"running\"");
	tp_json_lit(j, ",\"exit_status\":");
	int ex = atomic_load_explicit(&lv_exit, memory_order_relaxed);
	lv_int_or_null(j, ex - 1, finished && ex);
	tp_json_char(j, ',');
	lv_write_steps(j);
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	tp_json_lit(j, (s & TP_STATE_RECORDING) && !finished ? ",\"recording\":true," :
							       ",\"recording\":false,");
	lv_write_window(j);
	uint64_t events = L.events_gone, dropped = L.dropped_gone;
	dropped += atomic_load_explicit(&tp_threads_lost, memory_order_relaxed) +
		   atomic_load_explicit(&tp_threads_lost_as, memory_order_relaxed);
	for (struct tp_thread *t = tp_threads_first(); t; t = t->next) {
		/* Relaxed: counters alone. */
		events += atomic_load_explicit(&t->ring.head, memory_order_relaxed);
		dropped += atomic_load_explicit(&t->ring.dropped, memory_order_relaxed);
	}
	tp_json_lit(j, ",\"events\":");
	tp_json_u64(j, events);
	tp_json_lit(j, ",\"dropped\":");
	tp_json_u64(j, dropped);
	lv_write_top(j);
	tp_json_lit(j, ",\"threads\":[");
	int first = 1;
	if (!finished)
		for (struct tp_thread *t = tp_threads_first(); t; t = t->next)
			/* Acquire: pairs with the key destructor's release store. */
			if (!atomic_load_explicit(&t->dead, memory_order_acquire) &&
			    lv_write_thread(j, t, first))
				first = 0;
	tp_json_lit(j, "]}\n");
}

static void lv_write(int finished)
{
	if (!L.on)
		return;
	if (!L.have_j) {
		if (tp_json_init(&L.j, NULL) < 0)
			return;
		L.have_j = 1;
	}
	int saved = errno;
	lv_build(&L.j, finished);
	int rc = tp_json_error(&L.j);
	if (rc == 0)
		rc = tp_live_file_store(L.j.buf, L.j.len);
	if (rc < 0 && !L.failed_said) {
		L.failed_said = 1;
		tp_warn("cannot write the live file %s: %s; `traceprof top` will not see this "
			"process until it can (set TRACEPROF_LIVE_DIR to a writable folder, or "
			"TRACEPROF_LIVE=0)",
			tp_live_file_path(), strerror(-rc));
	}
	errno = saved;
}

void tp_live_pass(uint64_t now)
{
	if (!L.on || (L.last_ns && now - L.last_ns < LV_INTERVAL_NS))
		return;
	L.last_ns = now;
	lv_write(0);
}

void tp_live_final(void)
{
	/* A process that never stepped nor recorded (a shell, a launcher's
	 * shim) leaves no file, as it leaves no trace (collector/activity.h). */
	if (L.last_ns || tp_activity_seen())
		lv_write(1);
}
