/* TRACEPROF_PYTHON_STACK: the Python frames of the calling thread, captured
 * by the CUDA hooks while that thread holds the GIL (collector/pystack_decode.h has
 * the record layout).
 *
 * Why only while the thread holds the GIL.  CPython's frame API
 * (PyEval_GetFrame, PyFrame_GetBack, PyFrame_GetCode) returns new references
 * and, from 3.11, creates frame objects on demand: it writes reference counts
 * of objects other threads share and allocates.  Without the GIL both race
 * with the thread that holds it.  Reading CPython's private frame structures
 * instead would need their layout for each version.  So a thread that
 * released the GIL before calling into C (ctypes.CDLL, extension modules
 * around long calls) gets no Python stack: ctypes.PyDLL keeps the GIL.
 *
 * What the capture does with the GIL held: it never runs Python code.  The
 * garbage collector, which a frame object's allocation could start in 3.11
 * (and which runs finalizers), is paused around the walk with PyGC_Disable
 * (3.10 and later).  Every new reference is dropped at once; none can be the
 * last one, because the frame chain of the running thread holds them all.
 * A code object seen for the first time is kept (one reference, never
 * dropped) so that its address names it for the whole process; its names are
 * copied into collector/pystack_decode.c's table.  A pending exception is saved and
 * restored around the one call that could set one (reading co_filename).
 *
 * The symbols are resolved once at start, in the program's global scope, and
 * libpython is never linked: a program that is not Python has none, and
 * tp_pystack_on stays 0.
 *
 * A loop of two files with pystack_profile.c, on purpose: that file's
 * profile function keeps the shadow stack with the CPython calls resolved
 * here (tp_py), and the capture here reads that shadow first
 * (tp_pystack_shadow).  One capture, two ways of walking. */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "collector/pystack_decode.h"
#include "common/dl.h"
#include "common/log.h"
#include "collector/hot.h"
#include "preload/pystack_api.h"

struct tp_py_api tp_py;
int tp_pystack_on;

int tp_py_sym(void *dst, const char *name)
{
	/* glibc's dlsym, not preload/'s hook: a lookup of our own. */
	void *p = tp_dl_sym(RTLD_DEFAULT, name);
	memcpy(dst, &p, sizeof(p));
	return p ? 0 : -1;
}

int tp_pystack_init(void)
{
	int bad = 0;
	bad |= tp_py_sym(&tp_py.is_initialized, "Py_IsInitialized");
	bad |= tp_py_sym(&tp_py.gil_check, "PyGILState_Check");
	bad |= tp_py_sym(&tp_py.get_frame, "PyEval_GetFrame");
	/* PyFrame_GetBack and PyFrame_GetCode: 3.9 and later. */
	bad |= tp_py_sym(&tp_py.frame_back, "PyFrame_GetBack");
	bad |= tp_py_sym(&tp_py.frame_code, "PyFrame_GetCode");
	bad |= tp_py_sym(&tp_py.frame_line, "PyFrame_GetLineNumber");
	bad |= tp_py_sym(&tp_py.decref, "Py_DecRef");
	bad |= tp_py_sym(&tp_py.getattr, "PyObject_GetAttrString");
	bad |= tp_py_sym(&tp_py.utf8, "PyUnicode_AsUTF8");
	bad |= tp_py_sym(&tp_py.err_fetch, "PyErr_Fetch");
	bad |= tp_py_sym(&tp_py.err_restore, "PyErr_Restore");
	if (!tp_py_sym(&tp_py.gc_disable, "PyGC_Disable") && tp_py_sym(&tp_py.gc_enable, "PyGC_Enable"))
		tp_py.gc_disable = NULL;
	if (tp_py_sym(&tp_py.set_profile, "PyEval_SetProfile") |
	    tp_py_sym(&tp_py.thread_state, "PyThreadState_Get") |
	    tp_py_sym(&tp_py.this_thread_state, "PyGILState_GetThisThreadState"))
		tp_py.set_profile = NULL;
	/* Optional (NULL when missing): pystack_profile.c does without. */
	(void)tp_py_sym(&tp_py.call, "PyObject_CallObject");
	(void)tp_py_sym(&tp_py.add_audit_hook, "PySys_AddAuditHook");
	if (bad) {
		/* Not a Python program (or one older than 3.9): nothing to add. */
		tp_debug("TRACEPROF_PYTHON_STACK: no CPython 3.9+ in this process; no Python stacks");
		return -1;
	}
	tp_pystack_on = 1;
	return 0;
}

uint32_t tp_pystack_name(py_obj *code, int *keep)
{
	*keep = 0;
	uint32_t idx = tp_pystack_find(code);
	if (idx != TP_PYSTACK_NONAME)
		return idx;
	py_obj *et, *ev, *etb;
	tp_py.err_fetch(&et, &ev, &etb);
	py_obj *file = tp_py.getattr(code, "co_filename");
	py_obj *func = tp_py.getattr(code, "co_name");
	const char *fs = file ? tp_py.utf8(file) : NULL;
	const char *ns = func ? tp_py.utf8(func) : NULL;
	idx = tp_pystack_add(code, fs ? fs : "?", ns ? ns : "?");
	*keep = idx != TP_PYSTACK_NONAME;
	if (file)
		tp_py.decref(file);
	if (func)
		tp_py.decref(func);
	/* Drops any error the reads set, and puts back the program's own. */
	tp_py.err_restore(et, ev, etb);
	return idx;
}

size_t tp_pystack_capture(uint64_t *out, size_t max)
{
	/* A thread that keeps a shadow stack reads it, GIL or not. */
	int have;
	size_t got = tp_pystack_shadow(out, max, &have);
	if (have)
		return got;
	/* PyGILState_Check answers 1 before the interpreter exists: ask first. */
	if (!tp_py.is_initialized() || !tp_py.gil_check())
		return 0;
	/* The first sight of a code object allocates, which may set errno: the
	 * hook leaves the program's errno as it was. */
	int saved = errno;
	int gc_was = tp_py.gc_disable ? tp_py.gc_disable() : 0;
	size_t n = 0;
	py_obj *f = tp_py.get_frame();
	int owned = 0; /* the first frame is borrowed, the others new references */
	while (f && n < max) {
		py_obj *code = tp_py.frame_code(f);
		uint32_t idx = TP_PYSTACK_NONAME;
		int keep = 0;
		if (code)
			idx = tp_pystack_name(code, &keep);
		int line = tp_py.frame_line(f);
		out[n++] = (uint64_t)idx << 32 | (uint32_t)(line > 0 ? line : 0);
		py_obj *back = tp_py.frame_back(f);
		if (owned)
			tp_py.decref(f);
		if (code && !keep)
			tp_py.decref(code);
		f = back;
		owned = 1;
	}
	if (owned && f)
		tp_py.decref(f);
	if (gc_was && tp_py.gc_enable)
		tp_py.gc_enable();
	errno = saved;
	return n;
}
