/* TRACEPROF_PYTORCH=ops in C: a RecordFunction observer of our own, so that
 * an operator costs PyTorch's RecordFunction and one record, not the text
 * that PyTorch's NVTX emission formats for every op.
 *
 * python/traceprof/pyboot/traceprof_torch.py calls
 * traceprof_torch_ops_start() once torch is imported, after checking the
 * layout below against the headers of the torch it runs
 * (include/ATen/record_function.h); where that check fails, where the
 * machine is not x86-64, or where shapes are asked for (they need the
 * inputs' IValues, which C cannot read), it keeps PyTorch's NVTX emission.
 *
 * Two global callbacks, with disjoint scopes:
 *   - operators and autograd nodes (every scope but USER_SCOPE): one
 *     TP_REC_OP record when the op ends, with its start from this thread's
 *     stack of open ops; the flush side writes a TP_CAT_CPU_OP slice
 *     (collector/convert.c);
 *   - record_function() ranges (USER_SCOPE): marker begin and end, as
 *     traceprof_marker_start/finish write them (a TP_CAT_USER_ANNOTATION
 *     slice, left unfinished when its window ends first, like
 *     Optimizer.step's range, which --step torch's step boundary falls
 *     inside).  A torch.profiler of the program's own makes TP_STEP_PREFIX
 *     ranges: they are left out, as readers take that name for
 *     traceprof's own steps.
 * Global callbacks run on every thread, the autograd engine's included.
 *
 * Each op also carries what torch.profiler writes beside its name and draws
 * its forward-to-backward arrows from: its sequence number, its forward
 * op's thread (autograd nodes) and its handle (External id).  Their
 * accessors are inline in record_function.h, so they are read at the
 * offsets of at::RecordFunction's data members, and only where a
 * RecordFunction built by PyTorch's own constructor shows its defaults at
 * those offsets (to_probe).  With TRACEPROF_PYTHON_STACK it also carries
 * the Python stack of its caller, as torch.profiler's with_stack gives it
 * (to_op_end).
 *
 * PyTorch runs the callbacks only while a step records (to_follow); they
 * still read tp_state first, for the ops of a step boundary.  The op path
 * does no locking, no allocation (but the stack's, once per thread) and no
 * syscall. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "collector/control.h"
#include "collector/hot.h"
#include "common/dl.h"
#include "common/layout.h"
#include "common/log.h"
#include "preload/export.h"
#include "preload/pystack_api.h"
#include "preload/tls.h"
#include "preload/traceprof.h"

/* at::RecordFunctionCallback as PyTorch 2.x lays it out
 * (ATen/record_function.h): start_, end_, sampling_prob_, then
 * std::array<bool, RecordScope::NUM_SCOPES> scopes_ and the three bools
 * needs_inputs_, needs_outputs_, needs_ids_.  The class is trivially
 * copyable, so at::addGlobalCallback takes it by value as C takes this
 * struct: in memory, 40 bytes for 5 to 13 scopes.  flags[] holds the scopes
 * and then the three bools, all 0 but the scopes wanted. */
struct to_callback {
	void *start;
	void (*end)(const void *rf, void *ctx);
	double sampling_prob;
	unsigned char flags[16];
};
_Static_assert(sizeof(struct to_callback) == 40, "RecordFunctionCallback is 40 bytes");

#define TO_SCOPES_MIN 8
#define TO_SCOPES_MAX 13

typedef uint64_t (*to_add_fn)(struct to_callback);
typedef void (*to_handle_fn)(uint64_t handle);
typedef const char *(*to_name_fn)(const void *rf);

/* Ops nested deeper than this on one thread are counted
 * (tp_ops_lost_deep), not recorded; PyTorch's nesting is a dozen at most
 * (module, linear, addmm, ...). */
#define TO_DEPTH 128

struct to_open {
	const void *rf; /* the RecordFunction: the same object at its end */
	uint64_t start;
	uint32_t step;
	uint32_t ext;	/* the low 32 bits of its handle_ */
	int64_t seq;	/* sequence_nr_ */
	uint64_t fwd;	/* fwd_thread_id_ */
};

struct to_thread {
	uint32_t depth;
	uint32_t rf_tid; /* at::RecordFunction::currentThreadId(), 0 until read */
	struct to_open open[TO_DEPTH];
};

static to_name_fn to_name;
/* Offsets in at::RecordFunction of sequence_nr_, fwd_thread_id_ and
 * handle_; to_fields is 0 when to_probe did not confirm them (the ops then
 * carry their names only).  Written before the callbacks are registered,
 * read-only after (ordered as to_name is, below). */
static int to_fields;
#define TO_OFF_SEQ 200
#define TO_OFF_FWD 304
#define TO_OFF_HANDLE 312
typedef uint64_t (*to_tid_fn)(void);
static to_tid_fn to_current_tid;
/* at::removeCallback, at::disableCallback, at::reenableCallback. */
static to_handle_fn to_remove, to_disable, to_enable;
/* The two callbacks' handles (at::CallbackHandle), 0 when not registered,
 * and whether PyTorch runs them now.  to_lock orders every change of these
 * (registration, removal, following the schedule); the callbacks
 * themselves never read them. */
static pthread_mutex_t to_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t to_handles[2];
static int to_on;
/* This thread's stack of open ops, made at its first recorded op. */
TP_TLS_STATE(struct to_thread, to_tls, to_thread)

/* ---- operators ---------------------------------------------------------- */

/* The live file's innermost open op of this thread (collector/live_pub.h):
 * a copy of its name (rf's may go with rf) and its start; none when depth
 * is 0.  On the recording path only: PyTorch runs these callbacks only
 * while a step records. */
static void to_live(struct to_thread *t)
{
	struct tp_thread *th = tp_self;
	if ((uintptr_t)th <= (uintptr_t)TP_THREAD_GONE)
		return;
	if (!t->depth) {
		/* Relaxed: a reader that still sees the op reports it one
		 * update longer. */
		atomic_store_explicit(&th->live.op_on, 0, memory_order_relaxed);
		return;
	}
	const struct to_open *o = &t->open[t->depth - 1];
	const char *name = to_name(o->rf);
	name = name ? name : "";
	tp_live_name_set(&th->live.op, name, strnlen(name, TP_LIVE_NAME_BYTES), o->start);
	/* Release: the slot is written before op_on shows it (pairs with the
	 * acquire load in collector/live.c). */
	atomic_store_explicit(&th->live.op_on, 1, memory_order_release);
}

/* The start callback returns std::unique_ptr<ObserverContext>: a class
 * with a destructor, so (x86-64 psABI, Itanium C++ ABI) the caller passes
 * the address of the result as a hidden first argument and expects it back
 * in rax.  An empty unique_ptr is one null pointer. */
static void **to_op_start(void **ret, const void *rf)
{
	*ret = NULL;
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (__builtin_expect(!(s & TP_STATE_RECORDING), 1))
		return ret;
	struct to_thread *t = to_thread();
	if (!t)
		return ret;
	if (t->depth == TO_DEPTH) {
		/* Relaxed: a counter alone, read by the footer (collector/footer.c). */
		atomic_fetch_add_explicit(&tp_ops_lost_deep, 1, memory_order_relaxed);
		return ret;
	}
	struct to_open *o = &t->open[t->depth++];
	o->rf = rf;
	o->step = (uint32_t)(s >> TP_STATE_STEP_SHIFT);
	/* Read at the start, as torch.profiler reads them: an autograd node's
	 * evaluate_function range has its sequence number only until its end
	 * runs (PyTorch resets it). */
	if (to_fields) {
		const char *b = (const char *)rf;
		uint64_t handle;
		memcpy(&o->seq, b + TO_OFF_SEQ, sizeof(o->seq));
		memcpy(&o->fwd, b + TO_OFF_FWD, sizeof(o->fwd));
		memcpy(&handle, b + TO_OFF_HANDLE, sizeof(handle));
		o->ext = (uint32_t)handle;
	}
	o->start = tp_clock_now();
	to_live(t);
	return ret;
}

static void to_op_end(const void *rf, void *ctx)
{
	(void)ctx;
	struct to_thread *t = to_tls;
	if (!t || !t->depth)
		return;
	uint64_t end = tp_clock_now();
	/* Pop to rf: an entry above it is an op whose end ran elsewhere (an
	 * async RecordFunction ends on the thread that completes it); it gets
	 * no event.  An rf not on the stack started before recording did. */
	uint32_t d = t->depth;
	while (d && t->open[d - 1].rf != rf)
		d--;
	if (!d)
		return;
	struct to_open *o = &t->open[--d];
	t->depth = d;
	to_live(t);
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (!(s & TP_STATE_RECORDING))
		return;
	struct tp_thread *th = tp_emit_self();
	if (!th)
		return;
	const char *name = to_name(rf);
	if (!name)
		name = "";
	size_t len = strnlen(name, TP_REC_MAX_EXTRA * TP_REC_EXTRA_BYTES);
	/* What torch.profiler writes beside the name (collector/record.h). */
	uint32_t ext = 0, flags = 0;
	int32_t rtid = 0;
	int64_t seq = -1;
	if (to_fields) {
		seq = o->seq;
		ext = o->ext;
		if (o->fwd) {
			flags = TP_RF_OP_BWD;
			rtid = (int32_t)o->fwd;
		} else {
			/* Once per thread: PyTorch's thread_local counter. */
			if (!t->rf_tid)
				t->rf_tid = (uint32_t)to_current_tid();
			rtid = (int32_t)t->rf_tid;
		}
	}
	if (__builtin_expect(!tp_pystack_on && len < TP_REC_INLINE_NAME_MAX, 1)) {
		/* Most names ("aten::_to_copy"): one record, written in place. */
		uint64_t h;
		struct tp_record *r;
		if (tp_emit_reserve1(th, &h, &r)) {
			r->start = o->start;
			r->end = end;
			r->step = o->step;
			r->kind = TP_REC_OP;
			r->nextra = 0;
			r->flags = (uint8_t)flags;
			r->id = ext;
			r->result = rtid;
			r->arg[0] = (uint64_t)seq;
			char *in = tp_record_inline_name(r);
			memcpy(in, name, len);
			in[len] = '\0';
			tp_emit_commit1(th, h);
		}
		return;
	}
	struct tp_record r = { 0 };
	r.kind = TP_REC_OP;
	r.start = o->start;
	r.end = end;
	r.step = o->step;
	r.flags = (uint8_t)flags;
	r.id = ext;
	r.result = rtid;
	r.arg[0] = (uint64_t)seq;
	if (__builtin_expect(tp_pystack_on, 0))
		/* TRACEPROF_PYTHON_STACK: the Python stack of the op's caller, as
		 * torch.profiler's with_stack gives its ops (preload/stack.c
		 * captures it after the name).  Taken at the op's end, which runs
		 * before the op returns to the frame that called it, so that the
		 * stack is the one its start saw. */
		tp_hook_emit_with_stack(th, &r, name, len);
	else
		tp_emit_named(th, &r, name, len);
}

/* ---- record_function() ranges ------------------------------------------- */

static int to_is_step(const char *name)
{
	return name && !strncmp(name, TP_STEP_PREFIX, sizeof(TP_STEP_PREFIX) - 1);
}

static void **to_user_start(void **ret, const void *rf)
{
	*ret = NULL;
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (!(s & TP_STATE_RECORDING))
		return ret;
	const char *name = to_name(rf);
	if (!to_is_step(name)) {
		traceprof_marker_start(name);
		/* The live file's open range (collector/live_pub.h). */
		struct tp_thread *th = tp_self;
		if ((uintptr_t)th > (uintptr_t)TP_THREAD_GONE && name) {
			tp_live_name_set(&th->live.range, name, strnlen(name, TP_LIVE_NAME_BYTES),
					 tp_clock_now());
			/* Release: pairs with the acquire load in collector/live.c. */
			atomic_store_explicit(&th->live.range_on, 1, memory_order_release);
		}
	}
	return ret;
}

static void to_user_end(const void *rf, void *ctx)
{
	(void)ctx;
	uint64_t s = atomic_load_explicit(&tp_state, memory_order_relaxed);
	if (!(s & TP_STATE_RECORDING))
		return;
	const char *name = to_name(rf);
	if (!to_is_step(name)) {
		traceprof_marker_finish(name);
		struct tp_thread *th = tp_self;
		/* Relaxed: seen one update late at worst. */
		if ((uintptr_t)th > (uintptr_t)TP_THREAD_GONE)
			atomic_store_explicit(&th->live.range_on, 0, memory_order_relaxed);
	}
}

/* ---- registration ------------------------------------------------------- */

/* Whether at::RecordFunction keeps sequence_nr_, fwd_thread_id_ and handle_
 * at TO_OFF_* (PyTorch 2.x release builds on x86-64, libstdc++): one is
 * built by PyTorch's own constructor in a buffer of known bytes, which must
 * then hold its members' defaults at the offsets of the members from
 * sequence_nr_ to is_nccl_meta_ (sequence_nr_ -1, inputs_ empty, outputs_
 * empty, fwd_thread_id_ 0, handle_ 0, is_async_ false, debug_handle_ -1,
 * the two flags false), and is destroyed again.  Called before the
 * callbacks are registered: the RecordFunction is inactive, so neither
 * runs any callback. */
static int to_probe(void *h)
{
	void (*ctor)(void *, int) = (void (*)(void *, int))tp_dl_sym(
		h, "_ZN2at14RecordFunctionC1ENS_11RecordScopeE");
	void (*dtor)(void *) = (void (*)(void *))tp_dl_sym(h, "_ZN2at14RecordFunctionD1Ev");
	to_current_tid = (to_tid_fn)tp_dl_sym(h, "_ZN2at14RecordFunction15currentThreadIdEv");
	if (!ctor || !dtor || !to_current_tid)
		return 0;
	/* Static, and far larger than the object (344 bytes in PyTorch 2.15): a layout
	 * unlike the one expected still stays inside it. */
	static _Alignas(64) unsigned char buf[4096];
	memset(buf, 0xa5, sizeof(buf));
	ctor(buf, 0); /* RecordScope::FUNCTION */
	static const struct {
		uint16_t off, len;
		int fill; /* the byte each of len bytes must hold */
	} want[] = {
		{ TO_OFF_SEQ, 8, 0xff },       { TO_OFF_SEQ + 8, 16, 0 },     /* inputs_ */
		{ TO_OFF_SEQ + 80, 24, 0 },    /* outputs_ */
		{ TO_OFF_FWD, 8, 0 },	       { TO_OFF_HANDLE, 8, 0 },
		{ TO_OFF_HANDLE + 8, 1, 0 },   /* is_async_ */
		{ TO_OFF_HANDLE + 16, 8, 0xff }, /* debug_handle_ */
		{ TO_OFF_HANDLE + 24, 2, 0 },  /* the two flags */
	};
	int ok = 1;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		for (size_t k = 0; k < want[i].len; k++)
			ok &= buf[want[i].off + k] == (unsigned char)want[i].fill;
	dtor(buf);
	return ok;
}

/* The callbacks run only while a step records (tp_control_on_recording):
 * any callback, even one that returns at once, sends every op down
 * RecordFunction's slow path, so between windows PyTorch runs as without
 * traceprof, as it does between torch.profiler's windows.  An op that
 * started with the callbacks on still gets its end (PyTorch keeps the
 * callbacks a RecordFunction started with). */
static void to_follow(void)
{
	pthread_mutex_lock(&to_lock);
	int want = (atomic_load_explicit(&tp_state, memory_order_relaxed) & TP_STATE_RECORDING) != 0;
	if (to_handles[0] && want != to_on) {
		for (int i = 0; i < 2; i++)
			(want ? to_enable : to_disable)(to_handles[i]);
		to_on = want;
	}
	pthread_mutex_unlock(&to_lock);
}

static struct to_callback to_make(void *start, void (*end)(const void *, void *), int nscopes,
				  int user_scope, int user)
{
	struct to_callback cb;
	memset(&cb, 0, sizeof(cb));
	cb.start = start;
	cb.end = end;
	cb.sampling_prob = 1.0;
	for (int i = 0; i < nscopes; i++)
		cb.flags[i] = (i == user_scope) == user;
	/* needs_ids_: PyTorch then gives each RecordFunction a handle (its
	 * External id), as it does for torch.profiler. */
	cb.flags[nscopes + 2] = !user && to_fields;
	return cb;
}

/* libtorch_cpu: the path of the libtorch_cpu.so the program loaded;
 * nscopes: RecordScope::NUM_SCOPES; user_scope: RecordScope::USER_SCOPE, as
 * the caller read them from torch's headers and bindings.  1: the observer
 * is in place; 0: it cannot be here, and the caller keeps PyTorch's NVTX
 * emission (nothing was registered); once in place, later calls do
 * nothing and return 1. */
TP_EXPORT int traceprof_torch_ops_start(const char *libtorch_cpu, int nscopes, int user_scope);
TP_EXPORT int traceprof_torch_ops_start(const char *libtorch_cpu, int nscopes, int user_scope)
{
#if defined(__x86_64__)
	if (!libtorch_cpu || nscopes < TO_SCOPES_MIN || nscopes > TO_SCOPES_MAX || user_scope < 0 ||
	    user_scope >= nscopes)
		return 0;
	/* The library the program loaded (RTLD_NOLOAD: never a second copy),
	 * through glibc's dlopen: this lookup is traceprof's own. */
	void *(*open)(const char *, int) = (void *(*)(const char *, int))tp_dl_glibc("dlopen");
	void *h = open ? open(libtorch_cpu, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (!h)
		return 0;
	to_add_fn add = (to_add_fn)tp_dl_sym(h, "_ZN2at17addGlobalCallbackENS_22RecordFunctionCallbackE");
	to_name = (to_name_fn)tp_dl_sym(h, "_ZNK2at14RecordFunction4nameEv");
	to_remove = (to_handle_fn)tp_dl_sym(h, "_ZN2at14removeCallbackEm");
	to_disable = (to_handle_fn)tp_dl_sym(h, "_ZN2at15disableCallbackEm");
	to_enable = (to_handle_fn)tp_dl_sym(h, "_ZN2at16reenableCallbackEm");
	/* h stays open: libtorch_cpu is never unloaded while our callbacks
	 * are registered in it. */
	if (!add || !to_name || !to_remove || !to_disable || !to_enable)
		return 0;
	pthread_mutex_lock(&to_lock);
	if (to_handles[0]) {
		pthread_mutex_unlock(&to_lock);
		return 1;
	}
	to_fields = to_probe(h);
	/* to_name is written above, before addGlobalCallback publishes the
	 * callbacks; PyTorch's callback manager takes a mutex to change its
	 * list and each thread takes it to read the new list, which orders
	 * that write before any callback's read of to_name. */
	to_handles[0] = add(to_make((void *)to_op_start, to_op_end, nscopes, user_scope, 0));
	to_handles[1] = add(to_make((void *)to_user_start, to_user_end, nscopes, user_scope, 1));
	to_on = 1;
	pthread_mutex_unlock(&to_lock);
	/* From now on each change of recording switches them, and this call
	 * switches them off when the current step does not record. */
	tp_control_on_recording(to_follow);
	to_follow();
	tp_debug("TRACEPROF_PYTORCH=ops: RecordFunction observer registered (%d scopes; sequence "
		 "numbers and External ids %s)",
		 nscopes, to_fields ? "read" : "not read: RecordFunction's layout is not the one known");
	return 1;
#else
	/* The start callback's hidden result pointer has no C spelling on
	 * other ABIs (aarch64 passes it in x8). */
	(void)libtorch_cpu;
	(void)nscopes;
	(void)user_scope;
	return 0;
#endif
}

/* Removes the observer (a no-op when none is registered): an op already
 * running still gets its end callback, as PyTorch keeps the callbacks a
 * RecordFunction started with.  For the bench's cases (bench/torch_ab.py)
 * and for the Python side once nothing more will be recorded. */
TP_EXPORT void traceprof_torch_ops_stop(void);
TP_EXPORT void traceprof_torch_ops_stop(void)
{
	tp_control_on_recording(NULL);
	pthread_mutex_lock(&to_lock);
	for (int i = 0; i < 2; i++)
		if (to_handles[i]) {
			to_remove(to_handles[i]);
			to_handles[i] = 0;
		}
	to_on = 0;
	pthread_mutex_unlock(&to_lock);
}
