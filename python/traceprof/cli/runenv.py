"""What `traceprof run` puts in the program's environment beside the
options: the library to preload (and a sanitizer runtime before it), and
the Python start-up hook (pyboot) for the PyTorch features."""

import os
import re

from ..util import PKG_DIR, err, fail, script_dir
from .linkpath import carried


def library_candidates():
    """Where the library is looked for, first found wins: inside the package
    (a pip install: traceprof/lib/), beside a launcher script (build/), in
    ../lib from it (a launcher in a PREFIX/bin), and the source tree's build
    folder (`python python/traceprof` from a clone)."""
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


# The tag preload/version.c leaves in the library's read-only data.
_VERSION_TAG = re.compile(rb"\0traceprof-version=([0-9A-Za-z.+~_-]{1,64})\0")


def library_version(path):
    """The VERSION a traceprof library was built from, read from the tag in
    its file (preload/version.c), without loading it; None when the file
    has no tag (a library built before the tag, or not a traceprof one)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    m = _VERSION_TAG.search(data)
    return m.group(1).decode() if m else None


def check_library_version(lib, mine):
    """One `traceprof:` line when the library to preload comes from another
    version than this command (a wheel's command with an older make install
    on TRACEPROF_LIB, a stale build folder): the options and trace layout
    the command expects may not be the library's.  The run goes on."""
    theirs = library_version(lib)
    if theirs == mine:
        return
    what = "traceprof %s" % theirs if theirs else "an older traceprof (no version tag)"
    err("%s is %s but this command is traceprof %s; the two should come from one install: "
        "rebuild or reinstall (make, or pip install), or set TRACEPROF_LIB to a library of "
        "version %s" % (lib, what, mine, mine))


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
             if x and os.path.realpath(x) != os.path.realpath(boot)]
    env["PYTHONPATH"] = os.pathsep.join([preload_safe(boot, "dir")] + parts)


def preload_safe(path, kind="lib"):
    """path as LD_PRELOAD (kind "lib") or PYTHONPATH (kind "dir") can carry
    it: itself, or through a link when it holds a space or a colon
    (cli/linkpath.py); stops with one line when no link can be made."""
    out = carried(path, kind)
    if out is None:
        fail("%s holds a space or a colon, which %s cannot carry, and no private folder "
             "for a link to it could be made (tried $XDG_RUNTIME_DIR/traceprof, "
             "$TMPDIR/traceprof-UID, /tmp/traceprof-UID); set TMPDIR to a folder of "
             "yours without spaces or colons, or install traceprof in one"
             % (path, "LD_PRELOAD" if kind == "lib" else "PYTHONPATH"))
    return out
