/* CPython's C API as preload/pystack*.c use it: resolved once at start with
 * dlsym in the program's global scope (libpython is never linked), all
 * NULL in a process that is not CPython 3.9+ (then tp_pystack_on is 0). */
#ifndef TP_PRELOAD_PYSTACK_API_H
#define TP_PRELOAD_PYSTACK_API_H

#include <stddef.h>
#include <stdint.h>

typedef void py_obj;
typedef int (*tp_py_tracefunc)(py_obj *obj, py_obj *frame, int what, py_obj *arg);

struct tp_py_api {
	int (*is_initialized)(void);
	int (*gil_check)(void);
	py_obj *(*get_frame)(void);	     /* borrowed */
	py_obj *(*frame_back)(py_obj *);     /* new reference */
	py_obj *(*frame_code)(py_obj *);     /* new reference */
	int (*frame_line)(py_obj *);
	void (*decref)(py_obj *);
	py_obj *(*getattr)(py_obj *, const char *); /* new reference */
	const char *(*utf8)(py_obj *);
	void (*err_fetch)(py_obj **, py_obj **, py_obj **);
	void (*err_restore)(py_obj *, py_obj *, py_obj *);
	int (*gc_disable)(void); /* 3.10+, may be NULL */
	int (*gc_enable)(void);
	/* For the profile function's shadow stacks (preload/pystack_profile.c);
	 * may be NULL, then only the GIL-holding capture works. */
	void (*set_profile)(tp_py_tracefunc, py_obj *);
	void *(*thread_state)(void);	  /* PyThreadState_Get: GIL held */
	void *(*this_thread_state)(void); /* PyGILState_GetThisThreadState */
	/* For a thread's first call (traceprof_pystack_thread) and for
	 * noticing a profile function of the program's (an audit hook); may
	 * be NULL, then threads are not followed / the loss is not told. */
	py_obj *(*call)(py_obj *, py_obj *);			  /* PyObject_CallObject */
	int (*add_audit_hook)(int (*)(const char *, py_obj *, void *), void *);
};

extern struct tp_py_api tp_py;

/* *dst = the address of CPython's function or object `name` in the
 * program's global scope (glibc's dlsym: libpython is never linked).
 * Returns 0, or -1 with *dst NULL when this process has none. */
int tp_py_sym(void *dst, const char *name);

/* GIL held: the name index of a code object (collector/pystack_decode.h), adding
 * it the first time; *keep is set when the caller's reference must be kept
 * (the table now names the object by its address). */
uint32_t tp_pystack_name(py_obj *code, int *keep);

/* This thread's shadow stack, innermost first, into out (at most max);
 * *have is 0 when the thread has none (then the caller falls back to the
 * GIL-holding capture).  Never takes the GIL, allocates nothing. */
size_t tp_pystack_shadow(uint64_t *out, size_t max, int *have);

/* TRACEPROF_PYTHON_STACK (preload/pystack.c): set once at start when the
 * option is on and this process runs CPython 3.9+. */
extern int tp_pystack_on;
int tp_pystack_init(void);
/* The calling thread's Python frames, innermost first: from its shadow
 * stack (preload/pystack_profile.c) when it keeps one, else through the
 * frame API when it holds the GIL.  Fills at most max entries
 * (collector/pystack_decode.h) and returns their number; 0 without Python. */
size_t tp_pystack_capture(uint64_t *out, size_t max);

#endif
