"""traceprof's way into an unmodified Python program (TRACEPROF_STEP=torch,
TRACEPROF_PYTORCH).

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


_traceprof_boot()
del _traceprof_boot

# Chain to the sitecustomize Python would have imported without us: drop
# this module from sys.modules and import the name again (our folder is no
# longer on the path).  A missing one raises ModuleNotFoundError for
# "sitecustomize", which the site module ignores as it would have; any other
# error is reported by the site module as the user's own.
del sys.modules["sitecustomize"]
import sitecustomize  # noqa: E402,F401
