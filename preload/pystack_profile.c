/* TRACEPROF_PYTHON_STACK for calls made without the GIL (ctypes.CDLL,
 * extension modules that release it around a call): a per-thread shadow of
 * the Python call stack, kept by a C-level profile function.
 *
 * python/traceprof/pyboot/sitecustomize.py calls traceprof_pystack_install() through
 * ctypes.PyDLL (so with the GIL held) in the main thread at start, and in
 * every thread that the threading module starts (threading.setprofile).  It
 * installs ps_profile with PyEval_SetProfile, and seeds the shadow with the
 * frames already running.  From then on, with the GIL held:
 *   - a Python function starting (PyTrace_CALL) pushes its frame object and
 *     its code's name (collector/pystack_decode.c's table: names are resolved here,
 *     never on the CUDA hook);
 *   - one returning (PyTrace_RETURN, also on an exception) pops it.
 * A CUDA hook on this thread then reads the shadow, with or without the
 * GIL: only this thread's own data (thread-local) and, per frame,
 * PyFrame_GetLineNumber(), which only reads: the frame object, its code's
 * line table and the position of its last instruction.  Those frames are
 * running on this thread, which is inside the CUDA hook, so none of them can
 * return, move or be freed while it reads.  No reference count is touched
 * and nothing is allocated there.
 *
 * The shadow is only right while ps_profile stays this thread's profile
 * function.  Another profiler (cProfile, a debugger, torch.profiler with
 * Python stacks) replaces it, and frames then return without a pop: their
 * objects may be freed.  So the hook first checks that the thread state's
 * profile function is still ps_profile (its offset in PyThreadState is found
 * once at install, by setting two functions and seeing which word changes),
 * and otherwise drops the shadow for good on this thread and falls back to
 * the GIL-holding capture of preload/pystack.c.
 *
 * Not safe, and so not done: reading the frames of a thread that has no
 * shadow without the GIL (the public API creates frame objects and counts
 * references there), and any of this in a second interpreter. */
#include <errno.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "collector/pystack_decode.h"
#include "common/log.h"
#include "preload/export.h"
#include "collector/hot.h"
#include "preload/pystack_api.h"
#include "preload/tls.h"

#define PS_SHADOW 128 /* frames kept per thread; deeper stacks record none */
#define PS_SCAN 24    /* words of PyThreadState searched for c_profilefunc */

enum { PS_CALL = 0, PS_RETURN = 3 }; /* PyTrace_CALL, PyTrace_RETURN */

struct ps_entry {
	py_obj *frame;
	uint32_t idx;
};

struct ps_shadow {
	uint32_t depth; /* may exceed PS_SHADOW: those frames are not kept */
	int on;
	struct ps_entry e[PS_SHADOW];
};

/* One pointer of initial-exec TLS, the shadow itself allocated by the
 * thread's install: the library's static TLS must stay small, since it may
 * be dlopen'ed later as NVTX's injection library, where only the static TLS
 * surplus is left (collector/thread.h).  Freed when the thread ends
 * (preload/tls.h). */
static __thread struct ps_shadow *ps_tls __attribute__((tls_model("initial-exec")));

/* At the thread's end, before its shadow is freed. */
static void ps_forget(void)
{
	ps_tls = NULL;
}

/* Offset of c_profilefunc in PyThreadState, found by the first install
 * (with the GIL held, which serializes installs); -1 until then. */
static long ps_func_off = -1;

static int ps_profile(py_obj *obj, py_obj *frame, int what, py_obj *arg);

/* A second profile function for finding the offset: never left installed,
 * and a no-op if an audit hook runs Python code while it is. */
static int ps_probe(py_obj *obj, py_obj *frame, int what, py_obj *arg)
{
	(void)obj;
	(void)frame;
	(void)arg;
	return what == -1; /* never true: not folded with ps_profile */
}

static void ps_push(struct ps_shadow *s, py_obj *frame)
{
	if (s->depth < PS_SHADOW) {
		py_obj *code = tp_py.frame_code(frame);
		uint32_t idx = TP_PYSTACK_NONAME;
		int keep = 0;
		if (code) {
			idx = tp_pystack_name(code, &keep);
			if (!keep)
				tp_py.decref(code);
		}
		s->e[s->depth].frame = frame;
		s->e[s->depth].idx = idx;
		/* The entry is complete before the depth counts it, for a hook
		 * run by a signal handler on this thread (partner: the depth
		 * read in tp_pystack_shadow()). */
		atomic_signal_fence(memory_order_release);
	}
	s->depth++;
}

static void ps_pop(struct ps_shadow *s, py_obj *frame)
{
	if (s->depth == 0)
		return;
	if (s->depth > PS_SHADOW || s->e[s->depth - 1].frame == frame) {
		s->depth--;
		return;
	}
	/* Not the top: frames that started before the profile function and
	 * were not seeded, or a frame left without its event.  Unwind to it
	 * if it is there, else leave the shadow as it is. */
	for (uint32_t i = s->depth - 1; i-- > 0;)
		if (s->e[i].frame == frame) {
			s->depth = i;
			return;
		}
}

static int ps_profile(py_obj *obj, py_obj *frame, int what, py_obj *arg)
{
	(void)obj;
	(void)arg;
	struct ps_shadow *s = ps_tls;
	if (!s)
		return 0;
	if (what == PS_CALL) {
		/* A code object's first push allocates its name. */
		int saved = errno;
		ps_push(s, frame);
		errno = saved;
	} else if (what == PS_RETURN) {
		ps_pop(s, frame);
	}
	return 0;
}

/* Set while traceprof_pystack_install() sets profile functions of its own,
 * which CPython reports to the audit hook too.  Read and written with the
 * GIL held only (the install runs under it, and CPython calls audit hooks
 * from the thread that holds it): no atomic needed. */
static int ps_installing;

/* Whether the one line about a profile function of the program's was said.
 * Relaxed: a flag for one message; two threads racing print it twice at
 * worst (and cannot, under the GIL). */
static atomic_int ps_told;

/* An audit hook (PySys_AddAuditHook), added by the first install: CPython
 * raises "sys.setprofile" whenever a profile function is set or removed in
 * a thread (sys.setprofile, threading.setprofile's threads, cProfile on
 * 3.9-3.11, a debugger), before it replaces ours, and
 * "sys._setprofileallthreads" for threading.setprofile_all_threads (3.12).
 * The program's function wins, as without traceprof; this says once what is
 * lost.  Not a CUDA hook: a Python thread with the GIL, free to log. */
static int ps_audit(const char *event, py_obj *args, void *data)
{
	(void)args;
	(void)data;
	if (event[0] != 's' || ps_installing)
		return 0;
	int all = !strcmp(event, "sys._setprofileallthreads");
	if (!all && strcmp(event, "sys.setprofile"))
		return 0;
	struct ps_shadow *s = ps_tls;
	if ((all || (s && s->on)) &&
	    !atomic_exchange_explicit(&ps_told, 1, memory_order_relaxed)) {
		int saved = errno;
		tp_warn("TRACEPROF_PYTHON_STACK: the program set a profile function of its own "
			"(sys.setprofile, cProfile, a debugger); it keeps it, and the threads it "
			"replaced traceprof's in lose their Python stacks on CUDA calls made without "
			"the GIL (calls made with the GIL keep theirs)");
		errno = saved;
	}
	return 0;
}

static long ps_find_offset(void)
{
	char *ts = tp_py.thread_state();
	if (!ts)
		return -1;
	void *a = (void *)ps_probe, *b = (void *)ps_profile;
	int was_a[PS_SCAN];
	tp_py.set_profile(ps_probe, NULL);
	for (int i = 0; i < PS_SCAN; i++) {
		void *w;
		memcpy(&w, ts + (size_t)i * sizeof(void *), sizeof(w));
		was_a[i] = w == a;
	}
	tp_py.set_profile(ps_profile, NULL);
	long off = -1;
	for (int i = 0; i < PS_SCAN; i++) {
		void *w;
		memcpy(&w, ts + (size_t)i * sizeof(void *), sizeof(w));
		if (was_a[i] && w == b) {
			if (off >= 0)
				return -1; /* two candidates: do not guess */
			off = (long)i * (long)sizeof(void *);
		}
	}
	return off;
}

/* Called from Python (python/traceprof/pyboot) through ctypes.PyDLL, so with the
 * GIL held, on the thread to follow; skip: the innermost frames to leave
 * out (the caller's own).  Returns 0, or -1 when this process has no Python
 * stacks (option off, no CPython 3.9+) or the profile function could not be
 * checked, in which case it is not installed. */
static int ps_install(int skip);

TP_EXPORT int traceprof_pystack_install(int skip);
TP_EXPORT int traceprof_pystack_install(int skip)
{
	if (!tp_pystack_on || !tp_py.set_profile || !tp_py.thread_state)
		return -1;
	if (!tp_py.is_initialized() || !tp_py.gil_check())
		return -1;
	ps_installing = 1;
	int rc = ps_install(skip);
	ps_installing = 0;
	return rc;
}

/* A thread's first call (python/traceprof/pyboot, through ctypes.PyDLL,
 * so with the GIL held): installs the shadow on this new thread, then runs
 * fn() (threading's Thread._bootstrap).  Being C, it adds no Python frame
 * under the thread's own, and the threading module's profile hook
 * (threading.getprofile()) stays the program's.  Returns 0, or -1 with fn's
 * exception set (ctypes.PyDLL raises it). */
TP_EXPORT int traceprof_pystack_thread(py_obj *fn);
TP_EXPORT int traceprof_pystack_thread(py_obj *fn)
{
	if (!tp_py.call)
		return -1; /* never reached: pyboot checks traceprof_pystack_install */
	(void)traceprof_pystack_install(0);
	py_obj *r = tp_py.call(fn, NULL);
	if (!r)
		return -1;
	tp_py.decref(r);
	return 0;
}

static int ps_install(int skip)
{
	int saved = errno;
	if (ps_func_off < 0)
		ps_func_off = ps_find_offset();
	if (ps_func_off < 0) {
		tp_py.set_profile(NULL, NULL);
		tp_warn("TRACEPROF_PYTHON_STACK: this Python's thread state is not as "
			"expected; stacks only on calls made with the GIL held");
		errno = saved;
		return -1;
	}
	/* Seed: the frames already running, outermost first. */
	py_obj *frames[PS_SHADOW];
	size_t n = 0;
	int deep = 0;
	/* Creating frame objects allocates: no collection (and so no
	 * finalizer) may run here (as in tp_pystack_capture()). */
	int gc_was = tp_py.gc_disable ? tp_py.gc_disable() : 0;
	py_obj *f = tp_py.get_frame();
	int owned = 0;
	while (f) {
		if (skip > 0)
			skip--;
		else if (n < PS_SHADOW)
			frames[n++] = f;
		else
			deep = 1;
		py_obj *back = tp_py.frame_back(f);
		if (owned)
			tp_py.decref(f); /* never the last: the frame is running */
		f = back;
		owned = 1;
	}
	if (gc_was && tp_py.gc_enable)
		tp_py.gc_enable();
	if (deep) {
		/* The outer frames would be unknown: no shadow on this thread
		 * (and no profile function, which the offset search may have
		 * left installed). */
		tp_py.set_profile(NULL, NULL);
		errno = saved;
		return -1;
	}
	struct ps_shadow *s = ps_tls;
	if (!s) {
		s = tp_tls_new(sizeof(*s), ps_forget);
		if (!s) {
			tp_py.set_profile(NULL, NULL);
			errno = saved;
			return -1;
		}
		ps_tls = s;
	}
	s->depth = 0;
	for (size_t i = n; i-- > 0;)
		ps_push(s, frames[i]);
	tp_py.set_profile(ps_profile, NULL);
	s->on = 1;
	/* Once, with the GIL held (which serializes installs).  Raises
	 * "sys.addaudithook" to the program's own hooks, which may refuse it:
	 * then the loss goes untold, nothing else changes. */
	static int audit_added;
	if (!audit_added && tp_py.add_audit_hook) {
		audit_added = 1;
		py_obj *et, *ev, *etb;
		tp_py.err_fetch(&et, &ev, &etb);
		(void)tp_py.add_audit_hook(ps_audit, NULL);
		tp_py.err_restore(et, ev, etb);
	}
	errno = saved;
	return 0;
}

size_t tp_pystack_shadow(uint64_t *out, size_t max, int *have)
{
	struct ps_shadow *s = ps_tls;
	*have = 0;
	if (!s || !s->on)
		return 0;
	/* Still ours?  The thread's own state, read without the GIL: only this
	 * thread or a GIL holder writes that word, and a stale read only ends
	 * the shadow early. */
	char *ts = tp_py.this_thread_state ? tp_py.this_thread_state() : NULL;
	void *w = NULL;
	if (ts)
		memcpy(&w, ts + ps_func_off, sizeof(w));
	if (!ts || w != (void *)ps_profile) {
		s->on = 0;
		return 0;
	}
	*have = 1;
	uint32_t depth = s->depth;
	/* Partner of the fence in ps_push(). */
	atomic_signal_fence(memory_order_acquire);
	if (depth > PS_SHADOW)
		return 0;
	size_t n = 0;
	for (uint32_t i = depth; i-- > 0 && n < max;) {
		int line = tp_py.frame_line(s->e[i].frame);
		out[n++] = (uint64_t)s->e[i].idx << 32 | (uint32_t)(line > 0 ? line : 0);
	}
	return n;
}
