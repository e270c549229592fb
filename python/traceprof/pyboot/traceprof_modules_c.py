"""TRACEPROF_PYTORCH=modules through the library's own hooks
(preload/torch_modules.c): PyTorch calls them without running any Python
code of ours.  Loaded by traceprof_torch.py (its _hook_modules), which it
acts on through hook(tt, ...)."""

import functools
import sys


def hook(tt, mm, weakref):
    """Adds the C hooks to tt._mod_hooks (tt: the traceprof_torch module).
    Needs always_call (PyTorch 2.1+: the post hook runs after a forward that
    raised an Exception, so no stack is kept in Python) and a GIL (the
    library's table of names relies on it).  False: the caller uses its
    Python hooks."""
    import ctypes
    if getattr(sys, "_is_gil_enabled", lambda: True)() is False or not tt._always_call(mm):
        return False
    try:
        lib = ctypes.PyDLL(None)
        get, forget = lib.traceprof_torch_module_hook, lib.traceprof_torch_module_forget
        unwind = lib.traceprof_torch_module_unwind
    except (AttributeError, OSError, TypeError, ValueError):
        return False
    unwind.argtypes = []
    unwind.restype = None
    get.argtypes = [ctypes.py_object, ctypes.c_int]
    get.restype = ctypes.py_object
    forget.argtypes = [ctypes.c_size_t]
    forget.restype = None
    refs = {}

    def gone(_ref, key):
        refs.pop(key, None)
        forget(key)

    def namer(module, root):
        # The library keeps the name by the module's address until this
        # weak reference's callback says the module is gone.
        n = tt._name_of(module, [(root, None, None)])
        key = id(module)
        refs[key] = weakref.ref(module, functools.partial(gone, key=key))
        return n

    tt._entries.extend((gone, namer))
    try:
        pre, post = get(namer, 0), get(namer, 1)
    except ValueError:  # NULL: not a CPython with the calls the hooks use
        return False
    # At exit, this thread's module events still open end (_modules_exit).
    tt._unwind_c = unwind
    tt._mod_hooks.append((mm.register_module_forward_pre_hook, pre, {}))
    tt._mod_hooks.append((mm.register_module_forward_hook, post, {"always_call": True}))
    return True
