"""What `traceprof run` puts in the program's environment beside the
options: the library to preload (and a sanitizer runtime before it), and
the Python start-up hook (pyboot) for the PyTorch features."""

import os
import re

from ..util import PKG_DIR, err, fail, script_dir


def library_candidates():
    """Where the library is looked for, first found wins: inside the package
    (a pip install: traceprof/lib/), beside a launcher script (build/), in
    ../lib from it (make install's PREFIX/bin), and the source tree's build
    folder (`python scripts/traceprof` from a clone)."""
    here = script_dir()
    return [os.path.join(PKG_DIR, "lib", "libtraceprof.so"),
            os.path.join(here, "libtraceprof.so"),
            os.path.join(here, "..", "lib", "libtraceprof.so"),
            os.path.join(PKG_DIR, "..", "..", "build", "libtraceprof.so")]


def find_library():
    env = os.environ.get("TRACEPROF_LIB")
    if env:
        if not os.path.isfile(env):
            fail("TRACEPROF_LIB=%s: no such file; unset it, or name a libtraceprof.so" % env)
        return os.path.realpath(env)
    for cand in library_candidates():
        if os.path.isfile(cand):
            return os.path.realpath(cand)
    fail("cannot find libtraceprof.so (looked in %s); build it with `make`, reinstall "
         "traceprof, or set TRACEPROF_LIB" % ", ".join(os.path.normpath(c) for c in library_candidates()))


def is_traceprof_library(path):
    """Whether an LD_PRELOAD entry is a traceprof library, this command's or
    any other copy (an installed one, another build tree's): by file name
    (libtraceprof.so, libtraceprof.so.N), or by the marker symbol every copy
    exports (traceprof_copy_next) or its soname, read from the file's string
    table.  Two copies in one process record once (the first in load order;
    issue 30 item 7), but the one that records should be this command's,
    whose options it was given."""
    if re.match(r"libtraceprof[^/]*\.so(\.[0-9.]+)?$", os.path.basename(path)):
        return True
    try:
        with open(path, "rb") as f:
            data = f.read(64 << 20)
    except OSError:
        return False
    return data[:4] == b"\x7fELF" and (b"\0traceprof_copy_next\0" in data or
                                     b"\0libtraceprof.so\0" in data and b"\0traceprof_" in data)


def sanitizer_runtime(lib):
    """The soname of the sanitizer runtime that lib needs ("libtsan.so.2"),
    or None.  A library built with -fsanitize (make check-asan / check-tsan)
    needs its runtime first in LD_PRELOAD: loaded after libc as the
    library's dependency, TSan misses the threads the library starts and
    crashes, and ASan refuses to start.  The name is found in the dynamic
    string table, where DT_NEEDED names live."""
    try:
        with open(lib, "rb") as f:
            data = f.read()
    except OSError:
        return None
    m = re.search(rb"\0(lib(?:a|t|hwa|m|ub)san\.so(?:\.[0-9]+)*)\0", data)
    return m.group(1).decode() if m else None


def find_pyboot():
    """The folder of traceprof's sitecustomize.py (the package's pyboot/),
    or None."""
    boot = os.path.join(PKG_DIR, "pyboot")
    return boot if os.path.isfile(os.path.join(boot, "sitecustomize.py")) else None


def python_boot(env):
    """TRACEPROF_STEP=torch, TRACEPROF_PYTORCH and TRACEPROF_PYTHON_STACK act
    inside Python: the pyboot folder goes first in PYTHONPATH, where Python
    finds its sitecustomize.py at start-up (it chains to the user's own).
    Every Python process of the run gets it (torchrun's workers too); without
    those variables PYTHONPATH is left alone."""
    pystack = env.get("TRACEPROF_PYTHON_STACK", "0").lower() in ("1", "true", "yes", "on")
    if env.get("TRACEPROF_STEP") != "torch" and not env.get("TRACEPROF_PYTORCH") and not pystack:
        return
    boot = find_pyboot()
    if boot is None:
        err("TRACEPROF_STEP=torch / TRACEPROF_PYTORCH: cannot find pyboot/sitecustomize.py "
            "in %s; PyTorch steps and events are off (reinstall traceprof)" % PKG_DIR)
        return
    parts = [x for x in env.get("PYTHONPATH", "").split(os.pathsep)
             if x and os.path.realpath(x) != boot]
    env["PYTHONPATH"] = os.pathsep.join([boot] + parts)
