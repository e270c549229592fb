/* TRACEPROF_PYTORCH=modules in C: the two global nn.Module forward hooks as
 * builtin functions, so that a module call costs PyTorch's hook dispatch and
 * two marker records, and no Python code of ours.
 *
 * python/traceprof/pyboot/traceprof_torch.py asks for them through
 * ctypes.PyDLL (so with the GIL held) and registers them with
 * register_module_forward_pre_hook() and register_module_forward_hook(...,
 * always_call=True).  always_call makes PyTorch call the post hook when the
 * forward raised too, so every begin gets its end without a Python-side
 * stack.  Where PyTorch has no always_call, or the interpreter runs without
 * a GIL (this file's table relies on it), the Python hooks stay.
 *
 * always_call runs for an Exception only: a forward that raised a
 * BaseException (KeyboardInterrupt, SystemExit, GeneratorExit) gets no post
 * hook, nor do the modules it propagated through.  Each begin therefore
 * keeps the Python frame that called the pre hook (the module's call), and
 * the next hook on the thread ends every module whose frame is no longer
 * among the running ones (tm_unwind); at exit, traceprof_torch_module_unwind()
 * ends what is left.
 *
 * A module's event name is computed once, in Python (the namer: its
 * qualified name in the outermost module running on this thread), and kept
 * here by the module's address.  The namer also hangs a weak reference with
 * a callback on the module, and that callback calls
 * traceprof_torch_module_forget() before the module's memory can be reused,
 * so an address never names a module it did not belong to.
 *
 * Everything here runs with the GIL held: it orders every access to the
 * table and to the namer.  The hooks never raise: an error in the namer
 * stops the module events with one "traceprof:" line, and the program runs
 * on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/hot.h"
#include "common/hashmap.h"
#include "common/log.h"
#include "preload/export.h"
#include "preload/pystack_api.h"
#include "preload/tls.h"
#include "preload/traceprof.h"

/* CPython's PyMethodDef, unchanged since Python 2 (stable ABI). */
struct tm_method_def {
	const char *name;
	void *meth;
	int flags;
	const char *doc;
};
#define TM_METH_FASTCALL 0x0080

/* Modules nested deeper on one thread than this still get their events;
 * only the search for a post hook's own entry is limited to these. */
#define TM_DEPTH 64

struct tm_thread {
	uint32_t depth;
	py_obj *stack[TM_DEPTH];
	/* The frame that called each begin's pre hook (a strong reference, so
	 * that no other frame can take its address while it is kept). */
	py_obj *frame[TM_DEPTH];
	uint64_t start[TM_DEPTH]; /* tp_clock_now() at each begin, for the live file */
};

static struct {
	py_obj *(*new_function)(struct tm_method_def *, py_obj *, py_obj *);
	void (*incref)(py_obj *);
	void (*decref)(py_obj *);
	py_obj *(*call)(py_obj *, ...);
	int (*bytes)(py_obj *, char **, intptr_t *);
	void (*err_clear)(void);
	py_obj *(*get_frame)(void);	 /* borrowed */
	py_obj *(*frame_back)(py_obj *); /* new reference */
	py_obj *none;
} tm_py;

static struct tp_map tm_names; /* module address -> malloc'ed name */
static py_obj *tm_namer;
static py_obj *tm_hooks[2];
static int tm_failed;
TP_TLS_STATE(struct tm_thread, tm_tls, tm_thread)

static void tm_fail(const char *why)
{
	if (tm_failed)
		return;
	tm_failed = 1;
	tp_warn("TRACEPROF_PYTORCH=modules: module events stopped: %s", why);
}

/* The event name of module, asking the namer the first time.  root: the
 * outermost module running on this thread (module itself when none). */
static const char *tm_name(py_obj *module, py_obj *root)
{
	struct tp_map_slot *s = tp_map_get(&tm_names, (uintptr_t)module);
	if (s)
		return (const char *)(uintptr_t)s->val;
	py_obj *r = tm_py.call(tm_namer, module, root, NULL);
	char *p;
	intptr_t n;
	if (!r || tm_py.bytes(r, &p, &n) < 0) {
		tm_py.err_clear();
		if (r)
			tm_py.decref(r);
		tm_fail("the namer failed");
		return NULL;
	}
	char *copy = malloc((size_t)n + 1);
	if (copy) {
		memcpy(copy, p, (size_t)n);
		copy[n] = '\0';
	}
	tm_py.decref(r);
	if (!copy || tp_map_put(&tm_names, (uintptr_t)module, (uintptr_t)copy, 0) < 0) {
		free(copy);
		tm_fail("out of memory");
		return NULL;
	}
	return copy;
}

static py_obj *tm_none(void)
{
	tm_py.incref(tm_py.none);
	return tm_py.none;
}

/* Whether frame a is f or one of the frames that called it. */
static int tm_running(py_obj *a, py_obj *f)
{
	if (!a || a == f)
		return 1;
	py_obj *g = tm_py.frame_back(f);
	while (g && g != a) {
		py_obj *up = tm_py.frame_back(g);
		tm_py.decref(g);
		g = up;
	}
	if (!g) {
		tm_py.err_clear(); /* a frame object that could not be made */
		return 0;
	}
	tm_py.decref(g);
	return 1;
}

/* Ends entry d - 1 of t's stack (its post hook will not come). */
static void tm_end(struct tm_thread *t, uint32_t d)
{
	struct tp_map_slot *s = tp_map_get(&tm_names, (uintptr_t)t->stack[d - 1]);
	if (s)
		traceprof_marker_finish((const char *)(uintptr_t)s->val);
	if (t->frame[d - 1])
		tm_py.decref(t->frame[d - 1]);
	t->frame[d - 1] = NULL;
}

/* Ends the modules on top of t's stack whose call is over: their frame is
 * no longer running below f (a BaseException went through them).  The
 * entries below one still running are running too. */
static void tm_unwind(struct tm_thread *t, py_obj *f)
{
	while (t->depth && t->depth <= TM_DEPTH && !tm_running(t->frame[t->depth - 1], f)) {
		tm_end(t, t->depth);
		t->depth--;
	}
}

/* The live file's innermost open module of this thread
 * (collector/live_pub.h), recording or not, once the thread has its state:
 * a copy of its name (the table's may be freed with the module) and its
 * start; none when the stack is empty. */
static void tm_live(struct tm_thread *t)
{
	struct tp_thread *th = tp_self;
	if ((uintptr_t)th <= (uintptr_t)TP_THREAD_GONE)
		return;
	uint32_t d = t->depth < TM_DEPTH ? t->depth : TM_DEPTH;
	struct tp_map_slot *s = d ? tp_map_get(&tm_names, (uintptr_t)t->stack[d - 1]) : NULL;
	if (!s) {
		/* Relaxed: seen one update late at worst. */
		atomic_store_explicit(&th->live.mod_on, 0, memory_order_relaxed);
		return;
	}
	const char *name = (const char *)(uintptr_t)s->val;
	tp_live_name_set(&th->live.mod, name, strnlen(name, TP_LIVE_NAME_BYTES), t->start[d - 1]);
	/* Release: the slot is written before mod_on shows it (pairs with the
	 * acquire load in collector/live.c). */
	atomic_store_explicit(&th->live.mod_on, 1, memory_order_release);
}

/* hook(module, args): the module's begin. */
static py_obj *tm_pre(py_obj *self, py_obj *const *args, intptr_t nargs)
{
	(void)self;
	struct tm_thread *t;
	if (tm_failed || nargs < 1 || !(t = tm_thread()))
		return tm_none();
	py_obj *m = args[0];
	/* The caller's frame; NULL (no Python frame, or no memory for its
	 * object: that error is not the program's) leaves the stack as it is. */
	py_obj *f = tm_py.get_frame();
	if (f)
		tm_unwind(t, f);
	else
		tm_py.err_clear();
	const char *name = tm_name(m, t->depth ? t->stack[0] : m);
	if (!name)
		return tm_none();
	if (t->depth < TM_DEPTH) {
		t->stack[t->depth] = m;
		if (f)
			tm_py.incref(f);
		t->frame[t->depth] = f;
		t->start[t->depth] = tp_clock_now();
	}
	t->depth++;
	traceprof_marker_start(name);
	/* After the marker, which gives a thread its state on its first
	 * record. */
	tm_live(t);
	return tm_none();
}

/* hook(module, args, result): the module's end, also after a forward that
 * raised (always_call).  A module with no begin on this thread's stack (the
 * hooks came while it ran) gets no end. */
static py_obj *tm_post(py_obj *self, py_obj *const *args, intptr_t nargs)
{
	(void)self;
	struct tm_thread *t = tm_tls;
	if (tm_failed || nargs < 1 || !t || !t->depth)
		return tm_none();
	py_obj *m = args[0];
	uint32_t d = t->depth;
	if (d <= TM_DEPTH) {
		/* Pop to m: the entries above it got no post hook (a
		 * BaseException went through them, or a hook of theirs was
		 * removed while they ran): they end here, as m returns. */
		while (d && t->stack[d - 1] != m)
			d--;
		if (!d)
			return tm_none();
		while (t->depth > d)
			tm_end(t, t->depth--);
		tm_end(t, d);
		d--;
	} else {
		struct tp_map_slot *s = tp_map_get(&tm_names, (uintptr_t)m);
		if (s)
			traceprof_marker_finish((const char *)(uintptr_t)s->val);
		d--;
	}
	t->depth = d;
	tm_live(t);
	return tm_none();
}

static struct tm_method_def tm_defs[2] = {
	{ "traceprof_module_pre", (void *)tm_pre, TM_METH_FASTCALL, NULL },
	{ "traceprof_module_post", (void *)tm_post, TM_METH_FASTCALL, NULL },
};

/* GIL held (ctypes.PyDLL).  which: 0 the pre hook, 1 the post hook, each a
 * builtin function that lives as long as the process (a new reference).  namer(module, root) -> bytes,
 * kept from the first call.  NULL when this is no CPython with the calls
 * used here: the caller keeps its Python hooks. */
TP_EXPORT py_obj *traceprof_torch_module_hook(py_obj *namer, int which);
TP_EXPORT py_obj *traceprof_torch_module_hook(py_obj *namer, int which)
{
	if (which < 0 || which > 1 || !namer)
		return NULL;
	if (!tm_namer) {
		if (tp_py_sym(&tm_py.new_function, "PyCFunction_NewEx") | tp_py_sym(&tm_py.incref, "Py_IncRef") |
		    tp_py_sym(&tm_py.decref, "Py_DecRef") |
		    tp_py_sym(&tm_py.call, "PyObject_CallFunctionObjArgs") |
		    tp_py_sym(&tm_py.bytes, "PyBytes_AsStringAndSize") | tp_py_sym(&tm_py.err_clear, "PyErr_Clear") |
		    tp_py_sym(&tm_py.get_frame, "PyEval_GetFrame") |
		    tp_py_sym(&tm_py.frame_back, "PyFrame_GetBack") | /* 3.9+ */
		    tp_py_sym(&tm_py.none, "_Py_NoneStruct"))
			return NULL;
		tm_py.incref(namer);
		tm_namer = namer;
	}
	if (!tm_hooks[which])
		tm_hooks[which] = tm_py.new_function(&tm_defs[which], NULL, NULL);
	if (!tm_hooks[which]) {
		tm_py.err_clear();
		return NULL;
	}
	/* ctypes' py_object result takes over the reference it is given:
	 * one for the caller, ours stays. */
	tm_py.incref(tm_hooks[which]);
	return tm_hooks[which];
}

/* GIL held (ctypes.PyDLL, from an atexit function): ends the calling
 * thread's module events that are still open (a BaseException such as
 * SystemExit went through them and the program is ending). */
TP_EXPORT void traceprof_torch_module_unwind(void);
TP_EXPORT void traceprof_torch_module_unwind(void)
{
	struct tm_thread *t = tm_tls;
	if (!t || !tm_namer)
		return;
	while (t->depth > TM_DEPTH)
		t->depth--; /* unnamed: past the stack kept */
	while (t->depth) {
		tm_end(t, t->depth);
		t->depth--;
	}
}

/* GIL held: the module at this address is being freed (its weak reference's
 * callback); its name goes with it. */
TP_EXPORT void traceprof_torch_module_forget(uintptr_t module);
TP_EXPORT void traceprof_torch_module_forget(uintptr_t module)
{
	struct tp_map_slot old;
	if (tp_map_del(&tm_names, module, &old))
		free((void *)(uintptr_t)old.val);
}
