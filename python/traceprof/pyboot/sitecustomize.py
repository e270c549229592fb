"""traceprof's way into an unmodified Python program (TRACEPROF_STEP=torch,
TRACEPROF_PYTORCH, TRACEPROF_PYTHON_STACK).

`traceprof run` puts this folder first in PYTHONPATH when one of those
variables is set; with a plain LD_PRELOAD, set PYTHONPATH to it yourself.
Python imports this file at start-up (the `site` module's sitecustomize
step).  It then:
  - takes its folder out of sys.path again, so the program sees the path it
    would have seen without traceprof;
  - when libtraceprof.so is loaded in this process and a torch feature is
    asked for, adds an import hook that acts when the program itself
    imports torch (torch is never imported here: a program that does not
    use torch runs as before);
  - with TRACEPROF_PYTHON_STACK=1, installs libtraceprof's C profile
    function in the main thread and, through the threading module's thread
    start (not threading.setprofile, which the program would see), in each
    thread that module starts: it keeps a shadow of the Python stack that
    CUDA calls made without the GIL (ctypes.CDLL, extension modules) can
    read (preload/pystack_profile.c);
  - imports the next sitecustomize on the path (the user's, or the
    distribution's), exactly as Python would have; usercustomize is never
    shadowed (there is none here).
"""

import os
import sys


def _traceprof_boot():
    here = os.path.dirname(os.path.abspath(__file__))

    def ours(p):
        try:
            return os.path.realpath(p or os.curdir) == os.path.realpath(here)
        except (OSError, ValueError):
            return False

    sys.path[:] = [p for p in sys.path if not ours(p)]
    if os.environ.get("TRACEPROF_STEP") == "torch" or os.environ.get("TRACEPROF_PYTORCH"):
        # Loaded without the import system (no importlib.util, nothing in
        # sys.modules): until the program imports torch, all that is left of
        # it is one finder in sys.meta_path.
        path = os.path.join(here, "traceprof_torch.py")
        try:
            mod = type(sys)("traceprof_torch")
            mod.__file__ = path
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), mod.__dict__)
            mod.install(mod)
        except Exception as e:  # never break the program
            sys.stderr.write("traceprof: the Python hook did not start (%s: %s); "
                             "the program runs without it\n" % (type(e).__name__, e))


def _traceprof_python_stack():
    if os.environ.get("TRACEPROF_PYTHON_STACK", "0").lower() not in ("1", "true", "yes", "on"):
        return
    if os.environ.get("TRACEPROF_ENABLE", "1").lower() in ("0", "false", "no", "off"):
        return
    try:
        import ctypes
        # PyDLL: the call keeps the GIL, which the install needs.
        install = ctypes.PyDLL(None).traceprof_pystack_install
    except (ImportError, OSError, AttributeError):
        return  # libtraceprof.so is not loaded in this process
    install.argtypes = [ctypes.c_int]
    install.restype = ctypes.c_int
    if install(0) != 0:
        return  # the library said why, or the option is off there
    try:
        entry = ctypes.PyDLL(None).traceprof_pystack_thread
    except AttributeError:
        return  # an older library: the main thread only
    entry.argtypes = [ctypes.py_object]
    entry.restype = ctypes.c_int

    # Each thread the threading module starts runs entry(bootstrap) first:
    # the library's C function installs the shadow on the new thread and
    # then calls threading's own bootstrap.  Neither adds a Python frame
    # under the thread's (functools.partial and ctypes are C), and the
    # threading module's profile hook stays None: threading.getprofile()
    # and sys.getprofile() answer as without traceprof (issue 41 item 6).
    # A hook the program sets with threading.setprofile still runs in its
    # threads, after ours, and replaces it there (the library says so once).
    import functools
    import threading
    if hasattr(threading, "_start_joinable_thread"):  # 3.13
        name = "_start_joinable_thread"

        def start(function, *args, **kwargs):
            return real(functools.partial(entry, function), *args, **kwargs)
    elif hasattr(threading, "_start_new_thread"):  # 3.9-3.12
        name = "_start_new_thread"

        def start(function, args=(), kwargs=None):
            fn = functools.partial(function, *args, **(kwargs or {}))
            return real(functools.partial(entry, fn), ())
    else:
        return  # an unknown threading module: the main thread only
    real = getattr(threading, name)
    setattr(threading, name, start)


_traceprof_boot()
del _traceprof_boot
try:
    _traceprof_python_stack()
except Exception as e:  # never break the program
    sys.stderr.write("traceprof: the Python stack hook did not start (%s: %s); "
                     "stacks only on CUDA calls made with the GIL held\n" % (type(e).__name__, e))
del _traceprof_python_stack

# Chain to the sitecustomize Python would have imported without us: drop
# this module from sys.modules and import the name again (our folder is no
# longer on the path).  A missing one raises ModuleNotFoundError for
# "sitecustomize", which the site module ignores as it would have; any other
# error is reported by the site module as the user's own.
del sys.modules["sitecustomize"]
import sitecustomize  # noqa: E402,F401
