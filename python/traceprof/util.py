"""What every command shares: the `traceprof:` messages, the launcher's
folder (where the library and pyboot are looked for), the version, and
two ways to print names and sizes."""

import os
import re
import sys

# The package's own folder: a wheel keeps the library (lib/) and VERSION
# in it; the source tree has VERSION two floors up (python/traceprof/).
PKG_DIR = os.path.dirname(os.path.realpath(__file__))

# Set by the build tree's launcher script (build/traceprof) through setup():
# its own folder, where the library sits beside it.  None under the pip
# entry point (`pip install`, `make install`) and `python -m traceprof`,
# where the package's folder answers.
SCRIPT_DIR = None


def setup(script_dir_path):
    global SCRIPT_DIR
    SCRIPT_DIR = script_dir_path


def err(msg):
    sys.stderr.write("traceprof: %s\n" % msg)


def fail(msg, code=2):
    err(msg)
    sys.exit(code)


def script_dir():
    """The folder the library is looked for from: the launcher's, else the
    package's."""
    return SCRIPT_DIR or PKG_DIR


_VERSION = None


def version():
    """VERSION, as the package carries it (a wheel, a build's or an
    install's copy) or as the source tree has it.  The library is built
    from the same file (-DTRACEPROF_VERSION), so the two agree."""
    global _VERSION
    if _VERSION is None:
        _VERSION = "unknown"
        for cand in (os.path.join(PKG_DIR, "VERSION"),
                     os.path.join(PKG_DIR, "..", "..", "VERSION")):
            try:
                with open(cand) as f:
                    _VERSION = f.read().strip()
                break
            except OSError:
                pass
    return _VERSION


def natural_key(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def human_bytes(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.1f %s" % (n, unit))
        n /= 1024.0
